package view

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

// usageCache holds what the usage reports need of each session, kept per
// version of its file so that a report after a change parses only the
// sessions that changed, and the reports of the index's current state.
type usageCache struct {
	mu sync.Mutex // held while reports are built
	// recMu guards byPath (taken last: with mu and a session's lock held).
	recMu   sync.Mutex
	byPath  map[string]*usageOf
	gen     uint64
	reports *usage.Reports
	mtime   map[string]time.Time // newest session file per project, "" the store
	// list are the sessions the reports were built from, files their
	// index versions; bySight the reports as each sight sees them (see
	// reportsFor), at the same version.
	list    []usage.Session
	files   []*sessions.File
	bySight map[uint64]sightReports
	// scanned counts the sessions read for their records (see counts).
	scanned atomic.Int64
	// held is what byPath holds, in bytes: it counts against the cache's
	// budget (cache.Options.Others).
	held atomic.Int64
}

type usageOf struct {
	file  *sessions.File
	facts usage.Facts
}

// get returns a session's records when they are of its current version.
func (c *usageCache) get(f *sessions.File) *usageOf {
	c.recMu.Lock()
	defer c.recMu.Unlock()
	if u := c.byPath[f.Path]; u != nil && u.file == f {
		return u
	}
	return nil
}

// scan reads the records of sessions not parsed since they changed,
// without parsing them into the cache (a report of a large store would
// evict every session the user is reading), on every core.
func (c *usageCache) scan(files []*sessions.File) {
	par.Each(len(files), func(i int) {
		f := files[i]
		c.scanned.Add(1)
		x, err := usage.ScanFacts(f)
		if err == nil {
			f.KnowName(x.Name) // the scan read it all: by-name/ reads nothing more
			c.put(f, &usageOf{file: f, facts: x})
		}
	})
}

// keep records what the reports need of a parsed session. ss.mu is held.
func (c *usageCache) keep(ss *session) {
	u := &usageOf{file: ss.File, facts: usage.FactsOf(ss.Log.Entries, ss.Tree.Name())}
	usage.KeepFacts(ss.File, u.facts)
	c.put(ss.File, u)
}

func (c *usageCache) put(f *sessions.File, u *usageOf) {
	c.recMu.Lock()
	defer c.recMu.Unlock()
	if c.byPath == nil {
		c.byPath = map[string]*usageOf{}
	}
	if old := c.byPath[f.Path]; old != nil {
		c.held.Add(-old.bytes())
	}
	c.held.Add(u.bytes())
	c.byPath[f.Path] = u
}

// bytes is about what a session's records hold.
func (u *usageOf) bytes() int64 { return u.facts.Bytes() + 64 }
