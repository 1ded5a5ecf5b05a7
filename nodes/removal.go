package nodes

import (
	"context"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// How `rm -rf` of a session folder changes nothing: it removes what it
// finds in listing order, so it is refused something else of the session
// (append comes first) before it reaches labels/. A label is cleared by
// unlinking it, unless the same process was refused removing anything else
// of that session in the last removalWindow.

// sessionPart is a folder inside a session folder (or the folder itself).
type sessionPart interface {
	session() sessionRef
}

func (d *sessionDir) session() sessionRef  { return d.s }
func (d *entriesDir) session() sessionRef  { return d.s }
func (d *branchesDir) session() sessionRef { return d.s }
func (d *branchDir) session() sessionRef   { return d.s }
func (d *segmentDir) session() sessionRef  { return d.s }
func (d *labelsDir) session() sessionRef   { return d.s }

const removalWindow = 10 * time.Second

// removals remembers, per process, the session it was last refused
// removing something of.
type removals struct {
	mu   sync.Mutex
	last map[uint32]removal
}

type removal struct {
	session string
	at      time.Time
}

func callerPid(ctx context.Context) (uint32, bool) {
	c, ok := fuse.FromContext(ctx)
	if !ok || c == nil {
		return 0, false
	}
	return c.Pid, true
}

func (rs *removals) refused(ctx context.Context, s sessionRef) {
	pid, ok := callerPid(ctx)
	if !ok {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.last == nil {
		rs.last = map[uint32]removal{}
	}
	now := time.Now()
	for p, r := range rs.last {
		if now.Sub(r.at) > removalWindow {
			delete(rs.last, p)
		}
	}
	rs.last[pid] = removal{s.project + "/" + s.name, now}
}

// removing tells whether the caller is removing the session wholesale.
func (rs *removals) removing(ctx context.Context, s sessionRef) bool {
	pid, ok := callerPid(ctx)
	if !ok {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.last[pid]
	return ok && r.session == s.project+"/"+s.name && time.Since(r.at) <= removalWindow
}
