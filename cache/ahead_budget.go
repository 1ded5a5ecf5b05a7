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
//   - until the walk reads them, or passes them, or pinSpan goes by, the
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

// pinSpan is how long a session made ahead stays pinned when the walk
// neither reads it nor passes it (a walk that stopped).
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
func (st *Cache) room(cost int64) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.aheadHeld+cost > aheadShare(st.sessionBudget()) {
		return false
	}
	st.aheadHeld += cost
	return true
}

// pinned records renderings of a session made ahead of a walk: until the
// walk reads them, the session is pinned and what it holds counts in the
// share. s.mu is held.
func (st *Cache) pinned(s *Session, keys []string) {
	st.counts.made.Add(int64(len(keys)))
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.evicted {
		st.counts.unread.Add(int64(len(keys))) // dropped already
		return
	}
	if len(keys) == 0 {
		if len(s.ahead) == 0 {
			st.unpin(s) // made nothing
		}
		return
	}
	if s.ahead == nil {
		s.ahead = map[string]bool{}
	}
	for _, k := range keys {
		s.ahead[k] = true
	}
	s.aheadN.Store(int32(len(s.ahead)))
	st.pin(s)
	st.aheadHeld += s.cost - s.pin.cost
	s.pin.cost = s.cost
}

// pinning pins a session about to be made ahead, unless it was dropped
// (false). s.mu is held.
func (st *Cache) pinning(s *Session) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.evicted {
		return false
	}
	st.pin(s)
	return true
}

// pin pins s, unless it is. st.mu is held.
func (st *Cache) pin(s *Session) {
	if s.pin != nil {
		return
	}
	s.pin = &pin{since: time.Now()}
	if st.pins == nil {
		st.pins = map[*Session]bool{}
	}
	st.pins[s] = true
}

// aheadRenders are the renderings of s made ahead and not read yet, and
// what they hold: they stay when the session's other renderings are
// dropped to make room (see rendered). s.mu is held.
func (st *Cache) aheadRenders(s *Session) (map[string]any, int64) {
	out := map[string]any{}
	if s.aheadN.Load() == 0 {
		return out, 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
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
func (st *Cache) giveBack(taken int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.aheadHeld -= taken
}

// unpin lets the cache drop s as any other. st.mu is held.
func (st *Cache) unpin(s *Session) {
	if s.pin == nil {
		return
	}
	st.aheadHeld -= s.pin.cost
	s.pin = nil
	delete(st.pins, s)
}

// read is told that a rendering of s was served: made ahead, it was not
// made for nothing; once every rendering made ahead was read, s is no
// longer pinned. s.mu is held.
func (st *Cache) read(s *Session, key string) {
	if s.aheadN.Load() == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !s.ahead[key] {
		return
	}
	delete(s.ahead, key)
	s.aheadN.Store(int32(len(s.ahead)))
	if len(s.ahead) == 0 {
		st.unpin(s)
	}
}

// lost is told that s's renderings are dropped: those made ahead and not
// read were made for nothing. st.mu is held.
func (st *Cache) lost(s *Session) {
	st.counts.unread.Add(int64(len(s.ahead)))
	s.ahead = nil
	s.aheadN.Store(0)
	st.unpin(s)
}

// passed unpins the sessions made ahead that a walk at session name of
// project, going step (1: in the order of names, -1: the reverse), has
// passed or will not come to.
func (st *Cache) passed(project, name string, step int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for s := range st.pins {
		if s.Project != project || strings.Compare(s.Name, name)*step < 0 {
			st.unpin(s)
		}
	}
}

// holds tells whether the cache holds rendering key of version f of a
// session.
func (st *Cache) holds(f *sessions.File, key string) bool {
	s := st.Cached(f.Path)
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.renders[key]
	return ok && s.File == f
}

// pinPlanned is pinned for renderings made from a plan, without a parse.
func (st *Cache) pinPlanned(f *sessions.File, keys []string) {
	s := st.Cached(f.Path)
	if s == nil {
		// Dropped already: made for nothing.
		st.counts.made.Add(int64(len(keys)))
		st.counts.unread.Add(int64(len(keys)))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st.pinned(s, keys)
}

// evictable tells whether trim may drop s: not pinned, or pinned for
// longer than pinSpan. st.mu is held.
func (st *Cache) evictable(s *Session, now time.Time) bool {
	return s.pin == nil || now.Sub(s.pin.since) > pinSpan
}
