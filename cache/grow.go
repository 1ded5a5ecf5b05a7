package cache

import (
	"sort"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// Growth is how a parsed session came from one version of its file to
// the next.
type Growth int

const (
	Unknown  Growth = iota // not held parsed, or the steps were forgotten
	Appended               // only grew
	Rebuilt                // read again from the start: rewritten
)

// Grown brings a session held parsed up to date with its file's version f
// (as the next read would) and, when it only grew from the version old to
// the version cur, calls fn with its tree and the entries added between
// them: those the session read past cur (its file grew again since) are
// the next change's. A session not held parsed is not parsed for this
// (Unknown).
func (c *Cache) Grown(f, old, cur *sessions.File, fn func(t *tree.Tree, added []*sessions.Entry)) Growth {
	s := c.Cached(f.Path)
	if s == nil {
		return Unknown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Log == nil || s.evicted {
		return Unknown
	}
	if err := c.Refresh(s, f); err != nil {
		c.Drop(s)
		return Unknown
	}
	how := s.steps.since(old, s.File)
	if how == Appended {
		all := s.Log.Entries
		i := sort.Search(len(all), func(i int) bool { return all[i].Offset >= old.Sig.Size })
		j := i + sort.Search(len(all)-i, func(j int) bool { return all[i+j].Offset >= cur.Sig.Size })
		fn(s.Tree, all[i:j])
	}
	return how
}

// steps are the last versions of its file a parsed session was brought
// to, each with the one before and whether the tree was built again: so
// that the watcher, coming to a change after a reader brought the session
// up to date already, still tells what the change added.
type steps struct {
	ring [8]step
	n    int
}

type step struct {
	from, to *sessions.File
	rebuilt  bool
}

// add records a step from one version (nil: none, the file was first
// read) to the next.
func (s *steps) add(from, to *sessions.File, rebuilt bool) {
	s.ring[s.n%len(s.ring)] = step{from, to, rebuilt}
	s.n++
}

// since tells how the session came from version old to version cur. The
// index may have taken versions the session was never brought to (a look
// again at a file changed within the racy window gives one with the same
// signature; a writer and the watcher each take one): old is then one with
// its signature, or one whose size lies within a step that only grew.
func (s *steps) since(old, cur *sessions.File) Growth {
	for range len(s.ring) + 1 {
		if cur == old {
			return Appended
		}
		st, ok := s.to(cur)
		switch {
		case !ok, st.from == nil:
			return Unknown // first read here: what the kernel has is older
		case st.rebuilt:
			// Read again from the start: a version with the same
			// signature may be the one before a rewrite in the same
			// clock tick.
			return Rebuilt
		case cur.Sig == old.Sig:
			return Appended
		}
		if from := st.from.Sig; from.Ino == old.Sig.Ino && from.Dev == old.Sig.Dev && from.Size <= old.Sig.Size && old.Sig.Size <= cur.Sig.Size {
			return Appended
		}
		cur = st.from
	}
	return Unknown
}

// to finds the step to version f.
func (s *steps) to(f *sessions.File) (step, bool) {
	for i := range min(s.n, len(s.ring)) {
		if st := s.ring[i]; st.to == f {
			return st, true
		}
	}
	return step{}, false
}
