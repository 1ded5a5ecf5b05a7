package view

import (
	"hash/fnv"
	"path/filepath"
	"slices"

	"github.com/pifs/pifs/internal/access"
)

// sightOf is what caller c sees. On a mount only its own user may enter
// (not Shared) the kernel lets no one else in: that user sees all.
func (v *View) sightOf(c Caller) *sight {
	if !v.opts.Shared {
		return everything
	}
	return v.sightFor(c.Who())
}

// sightFor is what identity w sees at the index's current version.
func (v *View) sightFor(w access.Who) *sight {
	if w.Root() {
		return everything
	}
	gen := v.x.Gen()
	k := w.Key()
	ss := &v.sights
	ss.mu.Lock()
	if ss.by == nil || ss.gen != gen || len(ss.by) >= maxSights {
		ss.gen, ss.by = gen, map[string]*sight{}
	}
	s := ss.by[k]
	ss.mu.Unlock()
	if s != nil {
		return s
	}
	s = v.newSight(w)
	ss.mu.Lock()
	if ss.gen == gen {
		ss.by[k] = s
	}
	ss.mu.Unlock()
	return s
}

// newSight works out what w sees: each session file's mode and owner as
// the index knows them, and one stat per folder that holds session files.
func (v *View) newSight(w access.Who) *sight {
	v.sighted.Add(1)
	folders := map[string]bool{} // may w search the folder
	s := &sight{hidden: map[string]bool{}, who: &w}
	for _, f := range v.x.All() {
		dir := filepath.Dir(f.Path)
		ok, known := folders[dir]
		if !known {
			ok = v.searchDown(w, dir) == nil
			folders[dir] = ok
		}
		if !ok || !w.Allows(Owner{Uid: f.Uid, Gid: f.Gid, Perm: uint32(f.Mode.Perm())}, access.Read) {
			s.hidden[f.Path] = true
		}
	}
	if len(s.hidden) == 0 {
		// Every session of the store, but not necessarily the trash.
		return &sight{all: true, who: &w}
	}
	paths := make([]string, 0, len(s.hidden))
	for p := range s.hidden {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := fnv.New64a()
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	s.key = h.Sum64() | 1
	return s
}
