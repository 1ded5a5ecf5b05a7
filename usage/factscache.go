package usage

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
)

// FactsCache holds what the usage reports need of each session (its
// Facts), kept per version of its file so that a report after a change
// reads only the sessions that changed.
type FactsCache struct {
	mu     sync.Mutex // guards byPath (taken last: with a report's lock and a session's lock held)
	byPath map[string]*factsOf
	// Scanned counts the sessions read for their facts (Scan).
	Scanned atomic.Int64
	// Held is about what the cache holds, in bytes.
	Held atomic.Int64
}

type factsOf struct {
	file  *sessions.File
	facts Facts
}

// bytes is about what a session's facts hold.
func (u *factsOf) bytes() int64 { return u.facts.Bytes() + 64 }

// Get returns a session's facts when they are of its current version f.
func (c *FactsCache) Get(f *sessions.File) (Facts, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u := c.byPath[f.Path]; u != nil && u.file == f {
		return u.facts, true
	}
	return Facts{}, false
}

// Scan reads the facts of sessions not parsed since they changed,
// without parsing them (a report of a large store would evict every
// session the user is reading from a cache of parsed sessions), on every
// core. A session that cannot be read is left out.
func (c *FactsCache) Scan(files []*sessions.File) {
	par.Each(len(files), func(i int) {
		f := files[i]
		c.Scanned.Add(1)
		x, err := ScanFacts(f)
		if err == nil {
			f.KnowName(x.Name) // the scan read it all: its name is known
			c.Put(f, x)
		}
	})
}

// Keep records the facts of a parsed session, of version f, whose
// entries and name are given, and keeps them with f (KeepFacts).
func (c *FactsCache) Keep(f *sessions.File, entries []*sessions.Entry, name string) {
	x := FactsOf(entries, name)
	KeepFacts(f, x)
	c.Put(f, x)
}

// Put records the facts of version f of a session.
func (c *FactsCache) Put(f *sessions.File, x Facts) {
	u := &factsOf{file: f, facts: x}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byPath == nil {
		c.byPath = map[string]*factsOf{}
	}
	if old := c.byPath[f.Path]; old != nil {
		c.Held.Add(-old.bytes())
	}
	c.Held.Add(u.bytes())
	c.byPath[f.Path] = u
}

// Only drops the facts of every session whose path is not in paths.
func (c *FactsCache) Only(paths map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, u := range c.byPath {
		if !paths[p] {
			c.Held.Add(-u.bytes())
			delete(c.byPath, p)
		}
	}
}

// Sessions are the sessions of files as the reports take them, from
// their facts: those held for the files' versions, those kept with the
// files (KeptFacts), and the others' as read gives them: read takes the
// files whose facts are missing, may record some itself (Keep), and
// returns the rest, which are scanned. kept are the files of the
// sessions, in order: a file gone or unreadable meanwhile is left out.
// The facts of every session not in files are dropped.
func (c *FactsCache) Sessions(files []*sessions.File, read func(missing []*sessions.File) (rest []*sessions.File)) (list []Session, kept []*sessions.File) {
	seen := make(map[string]bool, len(files))
	var missing []*sessions.File
	for _, f := range files {
		seen[f.Path] = true
		if _, ok := c.Get(f); ok {
			continue
		}
		if x, ok := KeptFacts(f); ok {
			c.Put(f, x)
			continue
		}
		missing = append(missing, f)
	}
	c.Scan(read(missing))
	list = make([]Session, 0, len(files))
	for _, f := range files {
		x, ok := c.Get(f)
		if !ok {
			continue // gone or unreadable meanwhile: the next change says
		}
		s := NewSession(f.Project, f.Path, f.Header, x.Name, x.Records)
		s.Tools = x.Tools
		list = append(list, s)
		kept = append(kept, f)
	}
	c.Only(seen)
	return list, kept
}

// Mtimes is the newest mtime of files by project, and ("") of them all.
func Mtimes(files []*sessions.File) map[string]time.Time {
	mt := map[string]time.Time{}
	for _, f := range files {
		t := time.Unix(0, f.Sig.Mtime)
		for _, scope := range []string{"", f.Project} {
			if t.After(mt[scope]) {
				mt[scope] = t
			}
		}
	}
	return mt
}
