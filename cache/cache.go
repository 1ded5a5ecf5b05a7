// Package cache keeps the parsed sessions of one store, with their
// renderings and the tables derived from them, within one budget of bytes,
// the least recently used dropped first; the sizes of views recorded with
// each version of a file (and kept across remounts); the plans that put a
// context together again from a file's bytes; reading ahead of walks; and
// the count of the nodes the kernel holds, which the budget covers too.
//
// It knows nothing of what the mount shows: the views hand it the work
// (a function that counts or renders a view of a session) and are told of
// what it drops through the functions in Options.
package cache

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// Options configure a cache.
type Options struct {
	// Budget bounds what the mount keeps in memory, in bytes: the cache
	// keeps its share of it (see New).
	Budget int64
	// Parsed, when set, is told the size of each session file parsed.
	Parsed func(size int64)
	// Evicted is told of each session dropped from the cache (in
	// project, as name, its file at path): the kernel may forget the
	// names below its folders.
	Evicted func(project, name, path string)
	// Shed is told of session folders whose names the kernel should
	// forget, the nodes it holds being past their share (see NodeAdded).
	Shed func(folders []Folder)
	// Others is what is held outside the cache that the budget covers
	// too (the usage reports' records): the cache holds that much less.
	Others func() int64
	// Shown tells whether a session file name is one the mount shows as
	// a session folder: reading ahead reads no other.
	Shown func(name string) bool
	// WalkGap is the longest pause between two sessions of a walk (see
	// ReadForWalk); nil for 1 s.
	WalkGap func() time.Duration
	// ShowsTimes tells whether a rendering shows its file's times
	// (info.json its mtime): a version whose bytes are the same and whose
	// times moved drops it, and keeps the others.
	ShowsTimes func(key string) bool
}

// Folder names a session folder: its project and session.
type Folder struct{ Project, Session string }

// Cache is the parsed sessions of one store.
type Cache struct {
	x      *sessions.Index
	o      Options
	budget int64

	mu     sync.Mutex
	lru    *list.List // of *Session, most recent first
	parsed map[string]*list.Element
	used   int64 // bytes held by the sessions in lru
	// walking is the session a request asked for last (With), which
	// trim keeps: a walk (grep -r) reads one session's views one after
	// the other, and what is made ahead of it, or for another request,
	// must not make it parse the session again for each.
	walking *Session

	opened atomic.Int64 // sessions parsed
	// entrySizes counts the entry files' sizes counted (see EntryStats).
	entrySizes atomic.Int64
	uses       atomic.Int64 // calls that took a parsed session
	// parentSteps counts the parent links the sessions' trees followed.
	parentSteps atomic.Int64

	// aheadHeld is what the sessions made ahead and not read yet hold,
	// pins those sessions (see room).
	aheadHeld int64
	pins      map[*Session]bool
	counts    aheadCounts
	ahead     *ahead
	// served is when a rendering was last served (unix ns; see read).
	served atomic.Int64

	plans *plans

	// nodes counts the nodes the kernel holds (see NodeAdded).
	nodes atomic.Int64
	// squeeze is what the process's memory asks the cache to keep below
	// its budget (see Squeeze).
	squeeze atomic.Int64
	// listed are the session folders listed, oldest first (see shed).
	listedMu sync.Mutex
	listed   []Folder
}

// New makes the cache of the store x indexes. It keeps what it caches
// within three quarters of the budget: the rest is room for the collector
// and for work in flight.
func New(x *sessions.Index, o Options) *Cache {
	budget := o.Budget / 4 * 3
	if budget < 1<<20 {
		budget = 1 << 20
	}
	if o.Others == nil {
		o.Others = func() int64 { return 0 }
	}
	if o.Shown == nil {
		o.Shown = func(string) bool { return true }
	}
	if o.WalkGap == nil {
		o.WalkGap = func() time.Duration { return time.Second }
	}
	if o.ShowsTimes == nil {
		o.ShowsTimes = func(string) bool { return false }
	}
	c := &Cache{x: x, o: o, budget: budget, lru: list.New(), parsed: map[string]*list.Element{}, plans: newPlans(budget / 16)}
	c.ahead = newAhead(c, budget)
	return c
}

// Budget is the cache's share of the budget, in bytes.
func (c *Cache) Budget() int64 { return c.budget }

// Stats are counts of the cache's work, for a look at a running mount
// (and tests that guard a cost).
type Stats struct {
	// Parsed is the sessions parsed, Uses the calls that took a parsed
	// session, FromPlan the contexts rendered from a plan without a parse
	// (see plans), ReadAhead the sessions made ready ahead of a walk.
	Parsed, Uses, FromPlan, ReadAhead int64
	// Nodes is how many nodes the kernel holds, as counted (see
	// NodeAdded).
	Nodes int64
	// AheadBusy is the sessions being made ready ahead of a walk now.
	AheadBusy int64
	// AheadMade is the renderings made ahead of a walk, AheadUnread
	// those of them dropped before the walk read them, and AheadGaveUp
	// the times a session was not made ahead for want of room in the
	// budget.
	AheadMade, AheadUnread, AheadGaveUp int64
	// ParentSteps is the parent links followed up the sessions' trees
	// (paths to the root, ancestors, /tree's active path): what a lookup
	// costs in a deep tree, counted (see tree.Tree.CountSteps).
	ParentSteps int64
	// EntrySizes is the entry files' sizes counted (see EntryStats).
	EntrySizes int64
	// Squeezed is the bytes the cache keeps below its budget (Squeeze).
	Squeezed int64
}

// Stats returns the cache's counts.
func (c *Cache) Stats() Stats {
	return Stats{
		Parsed:      c.opened.Load(),
		Uses:        c.uses.Load(),
		FromPlan:    c.plans.rendered.Load(),
		ReadAhead:   c.ahead.ran.Load(),
		Nodes:       c.nodes.Load(),
		AheadMade:   c.counts.made.Load(),
		AheadUnread: c.counts.unread.Load(),
		AheadGaveUp: c.ahead.gaveUp.Load(),
		AheadBusy:   c.ahead.busyNow(),
		ParentSteps: c.parentSteps.Load(),
		EntrySizes:  c.entrySizes.Load(),
		Squeezed:    c.squeeze.Load(),
	}
}

// Session is one parsed session file, kept up to date with the file. Its
// fields are read with its lock held: inside the function With calls.
type Session struct {
	Project, Name, Path string

	mu   sync.Mutex
	Log  *sessions.Log
	Tree *tree.Tree
	File *sessions.File // the index's version last read
	// renders are this version's renderings and derived tables, by key;
	// cost is what they and the parse hold, in bytes.
	renders map[string]any
	cost    int64
	evicted bool
	// steps are the last versions it was brought to (see Grown).
	steps steps
	// grownStats are the entry stats of the version before, when the
	// file only grew since: the next EntryStatsOf takes them up.
	grownStats []entryStat
	// ahead are the renderings made ahead of a walk and not read yet,
	// aheadN how many, and pin what it holds of the share of the budget
	// they may take (see room); ahead and pin are the cache's (c.mu).
	ahead  map[string]bool
	aheadN atomic.Int32
	pin    *pin
}

// Held is the rendering or table key of the session's version, when the
// cache holds it.
func (s *Session) Held(key string) (any, bool) {
	v, ok := s.renders[key]
	return v, ok
}

// parseCost is what a parsed session holds besides its renderings: its
// bytes, their entries, the tree and the context at the leaf (measured:
// about twice the file).
func parseCost(size int64) int64 { return 2 * size }

// With runs fn with the session of version f of a file (in project, as
// name), parsed and brought up to date with f, locked.
func (c *Cache) With(project, name string, f *sessions.File, fn func(s *Session) error) error {
	return c.with(project, name, f, true, fn)
}

// with is With; asked tells that a request asks for the session (not work
// done ahead of one), which makes it the session trim keeps (walking).
func (c *Cache) with(project, name string, f *sessions.File, asked bool, fn func(s *Session) error) error {
	c.uses.Add(1)
	s := c.slot(project, name, f, asked)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := c.Refresh(s, f); err != nil {
		c.Drop(s)
		return err
	}
	return fn(s)
}

// slot returns the session's place in the cache, made (empty) if it has
// none, as the most recently used, and, when a request asks for it, the
// one it walks.
func (c *Cache) slot(project, name string, f *sessions.File, asked bool) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s *Session
	if el := c.parsed[f.Path]; el != nil {
		c.lru.MoveToFront(el)
		s = el.Value.(*Session)
	} else {
		s = &Session{Project: project, Name: name, Path: f.Path}
		c.parsed[f.Path] = c.lru.PushFront(s)
	}
	if asked {
		c.walking = s
	}
	return s
}

// Drop forgets a parsed session (its file is gone or unreadable). s.mu
// is held.
func (c *Cache) Drop(s *Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.parsed[s.Path]; el != nil && el.Value == s {
		c.lru.Remove(el)
		delete(c.parsed, s.Path)
		c.used -= s.cost
		s.evicted = true
		c.lost(s)
	}
}

// ErrNoHeader is what Refresh returns for a file that lost its header.
var ErrNoHeader = sessions.ErrNotSession

// Refresh brings the session up to date with the index's version f of its
// file. s.mu is held.
func (c *Cache) Refresh(s *Session, f *sessions.File) error {
	// The index's version of the file says when to look again (a change
	// event for a file that changed within the racy window gives a new
	// version even with the same signature; sessions.Log then checks the
	// bytes).
	if s.Log != nil && s.File == f {
		return nil
	}
	prev, tr := s.File, s.Tree
	if s.Log == nil {
		l, err := sessions.Open(s.Path)
		if err != nil {
			return err
		}
		c.opened.Add(1)
		s.Log, s.Tree, prev = l, tree.New(l), nil
		s.Tree.CountSteps(&c.parentSteps)
	} else {
		n, size := len(s.Log.Entries), s.Log.Size()
		reset, err := s.Log.Refresh()
		if err != nil {
			s.Log = nil
			return err
		}
		if s.Log.Header == nil {
			s.Log = nil
			return ErrNoHeader
		}
		switch {
		case reset || len(s.Log.Entries) < n:
			s.grownStats = nil
			s.Tree = tree.New(s.Log)
			s.Tree.CountSteps(&c.parentSteps)
		case s.Log.Size() == size:
			// Only the metadata changed: the renderings hold, but for
			// those that show the file's times. A version taken again
			// only because it was racy keeps its sizes too.
			if f.Sig == s.File.Sig {
				keepSizes(f, s.File)
			} else {
				for k := range s.renders {
					if c.o.ShowsTimes(k) {
						delete(s.renders, k)
					}
				}
			}
			s.File = f
			s.steps.add(prev, f, false)
			return nil
		default:
			s.Tree.Add(s.Log.Entries[n:]...)
			// The entries read before are the same: what stat counted of
			// them holds.
			if t, ok := s.renders[entryStatsKey].(EntryStats); ok {
				s.grownStats = t.stats
			}
		}
	}
	s.File = f
	s.steps.add(prev, f, s.Tree != tr)
	if s.aheadN.Load() > 0 {
		c.mu.Lock()
		c.lost(s)
		c.mu.Unlock()
	}
	s.renders = nil
	if s.Log.Size() == f.Sig.Size {
		f.KnowName(s.Tree.Name()) // by-name/ reads nothing more
	}
	c.account(s, parseCost(s.Log.Size()))
	if c.o.Parsed != nil {
		c.o.Parsed(s.Log.Size())
	}
	return nil
}

// account sets what a session holds and drops the least recently used
// others until the cache is within its budget. s.mu is held.
func (c *Cache) account(s *Session, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.evicted {
		s.cost = cost
		return
	}
	c.used += cost - s.cost
	s.cost = cost
	c.trim(s)
}

// trim drops the least recently used sessions, but keep, the one a
// request asked for last (walking) and the most recent, while the cache
// holds more than its budget (see sessionBudget). c.mu is held.
func (c *Cache) trim(keep *Session) {
	budget := c.sessionBudget()
	now := time.Now()
	for el := c.lru.Back(); c.used > budget && el != nil && el != c.lru.Front(); {
		old := el.Value.(*Session)
		if old == keep {
			break
		}
		prev := el.Prev()
		if old == c.walking || !c.evictable(old, now) {
			el = prev // being walked, or made ahead of a walk and not read yet
			continue
		}
		c.lru.Remove(el)
		delete(c.parsed, old.Path)
		c.used -= old.cost
		old.evicted = true
		c.lost(old)
		if c.o.Evicted != nil {
			c.o.Evicted(old.Project, old.Name, old.Path)
		}
		el = prev
	}
}

// sessionBudget is what the parsed sessions may hold: the cache's budget
// but what is held outside the cache (Options.Others, the usage reports'
// records), the context plans, the nodes the kernel holds and what the
// index holds of every session file (which it keeps whatever is parsed),
// less what the process's memory asks it to give up (Squeeze).
func (c *Cache) sessionBudget() int64 {
	return c.budget - c.squeeze.Load() - c.o.Others() - c.plans.held.Load() - c.nodes.Load()*nodeBytes - c.x.Len()*IndexFileBytes
}

// Rendered returns a rendering or table of s's version, making it once.
// What it holds counts against the budget; a session whose renderings
// alone would take more than a quarter of it keeps only the newest. s.mu
// is held.
func Rendered[T any](c *Cache, s *Session, key string, size func(T) int64, make func() T) T {
	if v, ok := s.renders[key]; ok {
		c.read(s, key)
		return v.(T)
	}
	v := make()
	n := size(v) + int64(len(key)) + 64
	cost := s.cost
	if s.renders == nil || cost-parseCost(s.Log.Size())+n > c.budget/4 {
		// What was made ahead of the walk stays until it is read.
		var kept int64
		s.renders, kept = c.aheadRenders(s)
		cost = parseCost(s.Log.Size()) + kept
	}
	s.renders[key] = v
	c.account(s, cost+n)
	return v
}

// BytesSize is the size of a rendering of bytes, for Rendered.
func BytesSize(b []byte) int64 { return int64(len(b)) }

// Cached is the cache's session of a file, without making one or counting
// a use (nil when it has none).
func (c *Cache) Cached(path string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.parsed[path]; el != nil {
		return el.Value.(*Session)
	}
	return nil
}

// ParsedLeaf is the leaf of a session held parsed at version f of its
// file, without parsing one.
func (c *Cache) ParsedLeaf(f *sessions.File) (string, bool) {
	s := c.Cached(f.Path)
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Log == nil || s.File != f {
		return "", false
	}
	return s.Tree.LeafID(), true
}

// IsParsed tells whether the session of the file at path is in the cache.
func (c *Cache) IsParsed(path string) bool { return c.Cached(path) != nil }

// IfParsed runs fn with the session of version f of a file, when the cache
// holds it parsed at that version and its lock is free (a write or a parse
// holds it: the caller reads the file instead rather than wait), and tells
// whether it did.
func (c *Cache) IfParsed(f *sessions.File, fn func(s *Session)) bool {
	s := c.Cached(f.Path)
	if s == nil || !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if s.Log == nil || s.File != f {
		return false
	}
	fn(s)
	return true
}
