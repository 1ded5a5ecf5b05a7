package view

import (
	"fmt"
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// sessionRef names one session of the store; the values inside a session
// folder hold it and fetch the session's current state on every call.
type sessionRef struct {
	v             *View
	project, name string
	// base is inoBase, hashed once for the session folder and the values
	// below it (0: not hashed yet).
	base names.Hash
}

// newSessionRef names a session, its numbers' base hashed once.
func newSessionRef(v *View, project, name string) sessionRef {
	return sessionRef{v, project, name, sessionBase(project, name)}
}

// sessionBase is the hash every number of a session's views starts with.
func sessionBase(project, name string) names.Hash { return names.Seed.With("s", project, name) }

// scope is the session's: every view of it shows its file's owner.
func (s sessionRef) scope() Scope { return Scope{s.project, s.name} }

// key names the session for walkGuess.
func (s sessionRef) key() string { return s.project + "/" + s.name }

// with runs fn with the parsed, up-to-date session.
func (s sessionRef) with(fn func(*session) error) error {
	return s.v.withSession(s.project, s.name, fn)
}

func (s sessionRef) meta() (*sessions.File, error) { return s.v.meta(s.project, s.name) }

// activity is the session's latest activity: its folder's mtime.
func (s sessionRef) activity() (time.Time, error) {
	f, err := s.meta()
	if err != nil {
		return time.Time{}, err
	}
	return activity(f), nil
}

// leaf is the id the session stands at, read from the file's end when the
// session is not parsed already.
func (s sessionRef) leaf() (string, error) {
	f, err := s.meta()
	if err != nil {
		return "", err
	}
	return s.leafOf(f)
}

// leafOf is leaf, of the index's version f of the file.
func (s sessionRef) leafOf(f *sessions.File) (string, error) {
	if leaf, ok := s.v.cache.ParsedLeaf(f); ok {
		return leaf, nil
	}
	if t, err := f.Tail(); err == nil && t.LeafKnown {
		return t.Leaf, nil
	}
	var leaf string
	err := s.with(func(ss *session) error { leaf = ss.Tree.LeafID(); return nil })
	return leaf, err
}

// ino numbers a view of this session: names.Ino("s", project, name, parts...).
func (s sessionRef) ino(parts ...string) uint64 { return s.inoBase().With(parts...).Ino() }

// inoBase is the hash every view of this session starts with.
func (s sessionRef) inoBase() names.Hash {
	if s.base != 0 {
		return s.base
	}
	return sessionBase(s.project, s.name)
}

// render returns a rendering of the session, made once per version, and the
// session's latest activity.
func (s sessionRef) render(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Make: make})
	return s.renderNow(key, make)
}

// renderPlanned is render for context.json at the session's leaf: a
// session whose parse is not held is rendered from its version's plan
// when it has one (see cache.FromPlan).
func (s sessionRef) renderPlanned(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Make: make, Planned: true})
	if f, err := s.meta(); err == nil {
		if data, ok := s.v.cache.FromPlan(s.project, s.name, f, key); ok {
			return data, activity(f), nil
		}
	}
	return s.renderNow(key, make)
}

// renderNow is render without reading ahead.
func (s sessionRef) renderNow(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	var data []byte
	var f *sessions.File
	err := s.with(func(ss *session) error {
		data = cache.Rendered(s.v.cache, ss, key, cache.BytesSize, func() []byte { return make(ss) })
		f = ss.File
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	cache.RecordSize(f, key, int64(len(data)))
	return data, activity(f), nil
}

// renderSize is the size of a rendering of the session, counted by count
// (which gives exactly the rendering's length) without keeping the bytes;
// cat renders them. It is recorded with the index's version of the file,
// so that stat counts a view at most once while the file is unchanged,
// however often the session is evicted.
func (s sessionRef) renderSize(key string, count func(*session) int64) (int64, time.Time, error) {
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Count: count})
	return s.size(key, count)
}

// knownSize is the size of a rendering of the session if it was counted
// already for the index's version of its file (see renderSize), without
// parsing: a listing answers READDIRPLUS with it. It tells reading ahead
// as renderSize does, so that a walk whose sizes were made ready ahead
// keeps reading ahead.
func (s sessionRef) knownSize(key string, count func(*session) int64) (int64, time.Time, bool) {
	f, err := s.meta()
	if err != nil {
		return 0, time.Time{}, false
	}
	n, ok := cache.RecordedSize(f, key)
	if !ok {
		return 0, time.Time{}, false
	}
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Count: count})
	return n, activity(f), true
}

// size is renderSize without reading ahead.
func (s sessionRef) size(key string, count func(*session) int64) (int64, time.Time, error) {
	f, err := s.meta()
	if err != nil {
		return 0, time.Time{}, err
	}
	if n, ok := cache.RecordedSize(f, key); ok {
		return n, activity(f), nil
	}
	var n int64
	err = s.with(func(ss *session) error {
		n, f = cache.SizeOf(ss, key, count), ss.File
		return nil
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, activity(f), nil
}

// renderEntry is render for a view of one entry: its mtime is the entry's.
//
// A view of the branch at the file's last entry may be the same as the
// session's own (atLeaf, when not nil, names it, or gives ""): it is
// rendered once for both, which grep -r, reading
// branches/<tip>/context.json after context.json, meets in every session.
func (s sessionRef) renderEntry(id, key string, make func(*session) []byte, atLeaf func(*session) string) ([]byte, time.Time, error) {
	var data []byte
	var mt time.Time
	err := s.with(func(ss *session) error {
		n := ss.Tree.Node(id)
		if n == nil {
			return ErrNotFound
		}
		if leaf := ss.Tree.Leaf(); atLeaf != nil && leaf == n.Entry {
			if k := atLeaf(ss); k != "" {
				key = k
			}
		}
		data = cache.Rendered(s.v.cache, ss, key, cache.BytesSize, func() []byte { return make(ss) })
		mt = entryMtime(n.Entry)
		return nil
	})
	if err != nil {
		return nil, mt, err
	}
	if mt.IsZero() {
		mt, err = s.activity()
	}
	return data, mt, err
}

// renderEntrySize is renderSize for a view of one entry (see renderEntry):
// its mtime is the entry's.
func (s sessionRef) renderEntrySize(id, key string, count func(*session) int64, atLeaf func(*session) string) (int64, time.Time, error) {
	var n int64
	var mt time.Time
	err := s.with(func(ss *session) error {
		node := ss.Tree.Node(id)
		if node == nil {
			return ErrNotFound
		}
		if ss.Tree.Leaf() == node.Entry && atLeaf != nil {
			if k := atLeaf(ss); k != "" {
				key = k
			}
		}
		n, mt = cache.SizeOf(ss, key, count), entryMtime(node.Entry)
		return nil
	})
	if err != nil {
		return 0, mt, err
	}
	if mt.IsZero() {
		mt, err = s.activity()
	}
	return n, mt, err
}

// refused records a refused write to the session.
func (s sessionRef) refused(err error) {
	s.v.refused.Add(s.project+"/"+s.name, err.Error())
	s.v.log.Warn(fmt.Sprintf("%s/%s: write refused: %v", s.project, s.name, err))
}

// parent is the session this one was forked or cloned from, when it is in
// the store (ErrNotFound otherwise).
func (s sessionRef) parent() (*sessions.File, error) {
	f, err := s.meta()
	if err != nil {
		return nil, err
	}
	return s.parentOf(f)
}

// parentOf is parent, of the index's version f of the file.
func (s sessionRef) parentOf(f *sessions.File) (*sessions.File, error) {
	if f.Header == nil || len(f.Header.ParentSession) == 0 {
		return nil, ErrNotFound
	}
	p, err := s.v.x.Parent(f)
	if err != nil || !validProject(p.Project) || !validSessionName(p.Name) {
		return nil, ErrNotFound
	}
	return p, nil
}

// pathTo is the root→entry path, computed once per version of the session:
// a listing and the lookups of its names share it.
func pathTo(v *View, ss *session, id string) []*sessions.Entry {
	return cache.Rendered(v.cache, ss, "path\x00"+id, func(p []*sessions.Entry) int64 { return 8 * int64(len(p)) },
		func() []*sessions.Entry { return ss.Tree.PathTo(id) })
}
