package cache

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/sessions"
)

// Reading ahead within the budget. What is made ahead of a walk is work
// done before the walk asks; it is worth something only if the cache
// still holds it when the walk comes. So:
//
//   - the sessions made ahead and not read yet hold at most a share of
//     the budget (aheadShare); a session that would take more is left to
//     the walk, as one too large for the cache is;
//   - until the walk reads them, or passes them, or stops (pinSpan), the
//     cache drops other sessions first (they are pinned): what was made
//     for the walk is never dropped to make room for more of the same;
//   - the renderings made ahead that were dropped before the walk read
//     them are counted (Stats.AheadUnread), as those made are
//     (Stats.AheadMade).

// aheadShare is the part of the cache's budget the sessions made ahead of
// a walk and not read yet may hold.
func aheadShare(budget int64) int64 { return budget / 2 }

// aheadCost is what making a session's views ahead is taken to cost
// before it is made: its parse, and for renderings about as much again.
func aheadCost(size int64, renders bool) int64 {
	if renders {
		return 2 * parseCost(size)
	}
	return parseCost(size)
}

// pinSpan is how long a session made ahead stays pinned once nothing is
// served from the cache and the walk neither reads it nor passes it (a
// walk that stopped).
const pinSpan = 10 * time.Second

// aheadCounts are the renderings made ahead and those dropped unread.
type aheadCounts struct{ made, unread atomic.Int64 }

// pin is what a session made ahead holds of the share, its cost when
// made, and since when.
type pin struct {
	cost  int64
	since time.Time
}

// room tells whether a session of this cost may be made ahead now, and
// takes the cost from the share if so, while it is made; the caller gives
// it back (giveBack) once what it made is pinned. The share is of what
// the sessions may hold now (sessionBudget): the usage reports' records
// and the nodes the kernel holds may leave a small cache no room at all,
// and then a walk is left to itself.
func (c *Cache) room(cost int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aheadHeld+cost > aheadShare(c.sessionBudget()) {
		return false
	}
	c.aheadHeld += cost
	return true
}

// pinned records renderings of a session made ahead of a walk (none when
// only sizes were counted): until the walk reads them, or passes the
// session, it is pinned and what it holds counts in the share. A session
// whose sizes were counted ahead stays parsed so: a walk that stats a
// session's files reads them next (grep -r, find -exec), and reads made
// ahead would otherwise parse it again once a walk that reads is seen.
// s.mu is held.
func (c *Cache) pinned(s *Session, keys []string) {
	c.counts.made.Add(int64(len(keys)))
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.evicted {
		c.counts.unread.Add(int64(len(keys))) // dropped already
		return
	}
	if s.ahead == nil && len(keys) > 0 {
		s.ahead = map[string]bool{}
	}
	for _, k := range keys {
		s.ahead[k] = true
	}
	s.aheadN.Store(int32(len(s.ahead)))
	c.pin(s)
	c.aheadHeld += s.cost - s.pin.cost
	s.pin.cost = s.cost
}

// pinning pins a session about to be made ahead, unless it was dropped
// (false). s.mu is held.
func (c *Cache) pinning(s *Session) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.evicted {
		return false
	}
	c.pin(s)
	return true
}

// pin pins s, unless it is. c.mu is held.
func (c *Cache) pin(s *Session) {
	if s.pin != nil {
		return
	}
	s.pin = &pin{since: time.Now()}
	if c.pins == nil {
		c.pins = map[*Session]bool{}
	}
	c.pins[s] = true
}

// aheadRenders are the renderings of s made ahead and not read yet, and
// what they hold: they stay when the session's other renderings are
// dropped to make room (see Rendered). s.mu is held.
func (c *Cache) aheadRenders(s *Session) (map[string]any, int64) {
	out := map[string]any{}
	if s.aheadN.Load() == 0 {
		return out, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for k := range s.ahead {
		if b, ok := s.renders[k].([]byte); ok {
			out[k] = b
			n += int64(len(b)+len(k)) + 64
		}
	}
	return out, n
}

// giveBack returns to the share what room took for a session not made.
func (c *Cache) giveBack(taken int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aheadHeld -= taken
}

// unpin lets the cache drop s as any other. c.mu is held.
func (c *Cache) unpin(s *Session) {
	if s.pin == nil {
		return
	}
	c.aheadHeld -= s.pin.cost
	s.pin = nil
	delete(c.pins, s)
}

// read is told that a rendering of s was served: made ahead, it was not
// made for nothing; once every rendering made ahead was read, s is no
// longer pinned. A walk that goes on is served renderings all the time,
// so this also tells that the walk has not stopped (see evictable). s.mu
// is held.
func (c *Cache) read(s *Session, key string) {
	c.served.Store(time.Now().UnixNano())
	if s.aheadN.Load() == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.ahead[key] {
		return
	}
	delete(s.ahead, key)
	s.aheadN.Store(int32(len(s.ahead)))
	if len(s.ahead) == 0 {
		c.unpin(s)
	}
}

// lost is told that s's renderings are dropped: those made ahead and not
// read were made for nothing. c.mu is held.
func (c *Cache) lost(s *Session) {
	c.counts.unread.Add(int64(len(s.ahead)))
	s.ahead = nil
	s.aheadN.Store(0)
	c.unpin(s)
}

// passed unpins the sessions made ahead that a walk at session name of
// project, going step (1: in the order of names, -1: the reverse), has
// passed or will not come to.
func (c *Cache) passed(project, name string, step int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.pins {
		if s.Project != project || strings.Compare(s.Name, name)*step < 0 {
			c.unpin(s)
		}
	}
}

// holds tells whether the cache holds rendering key of version f of a
// session.
func (c *Cache) holds(f *sessions.File, key string) bool {
	s := c.Cached(f.Path)
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.renders[key]
	return ok && s.File == f
}

// pinPlanned is pinned for renderings made from a plan, without a parse.
func (c *Cache) pinPlanned(f *sessions.File, keys []string) {
	s := c.Cached(f.Path)
	if s == nil {
		// Dropped already: made for nothing.
		c.counts.made.Add(int64(len(keys)))
		c.counts.unread.Add(int64(len(keys)))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.pinned(s, keys)
}

// evictable tells whether trim may drop s: not pinned, or pinned while
// no rendering was served for pinSpan (the walk stopped). A walk slowed
// down, by a loaded machine or large sessions on the way, may take longer
// than that to come to what was made for it, and still wants it. c.mu is
// held.
func (c *Cache) evictable(s *Session, now time.Time) bool {
	if s.pin == nil {
		return true
	}
	since := s.pin.since
	if served := time.Unix(0, c.served.Load()); served.After(since) {
		since = served
	}
	return now.Sub(since) > pinSpan
}
