package view

import (
	"hash/fnv"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

// What each caller sees of the store (docs/guarantees.md, "Who may do
// what"). On a mount other users may enter (Options.Shared, from
// --allow-other), what a listing, a link or a report tells about a session
// (its id, name, cwd, tokens, cost, that it is the latest) is shown only
// to a caller who may read that session's file and search its folder, as
// they would need to learn it from the store. The kernel enforces the
// modes of the session folders themselves; the folders that gather
// sessions from everywhere (by-id/, by-cwd/, by-name/, latest, usage/, a
// project's cwd) are filtered here.
//
// A caller's sight is worked out once per version of the index from what
// the index holds (the owner and mode of each file, one stat per folder),
// and shared by every caller of the same uid, gid and groups: a report or
// a listing per caller filters what is cached, it never reads the store
// again. A value that depends on the caller (seenBy) is told to the
// kernel for no longer than the request (see PerCaller), and one whose
// content does (latest, the reports, cwd) gets an inode number of its
// sight's own, so that the kernel never gives one caller's pages, size or
// link target to another.

// sight is what one identity may see of the store's sessions at one
// version of the index.
type sight struct {
	// all: every session is visible (root, or a user who may read them
	// all); then hidden is empty and key 0.
	all bool
	// hidden are the paths of the sessions not visible.
	hidden map[string]bool
	// key tells sights apart: equal keys hide the same sessions.
	key uint64

	cwdOnce sync.Once
	cwds    map[string]bool // the by-cwd/ paths that lead to a visible session

	// who is whose sight it is; nil for everything, the sight of root
	// (or of anyone on a mount only its user may enter).
	who *who
	// trashed tells, per trash directory, whether who may search its
	// files/ folder, once asked.
	trashMu sync.Mutex
	trashed map[string]bool
}

// everything is the sight of a caller who sees all.
var everything = &sight{all: true}

// sees tells whether the session of f is visible.
func (s *sight) sees(f *sessions.File) bool { return s.all || !s.hidden[f.Path] }

// sights caches the sights of the identities met at the index's current
// version.
type sights struct {
	mu  sync.Mutex
	gen uint64
	by  map[string]*sight
}

// maxSights bounds the identities kept at once.
const maxSights = 64

// sightOf is what caller c sees. On a mount only its own user may enter
// (not Shared) the kernel lets no one else in: that user sees all.
func (v *View) sightOf(c Caller) *sight {
	if !v.opts.Shared {
		return everything
	}
	return v.sightFor(c.who())
}

// sightFor is what identity w sees at the index's current version.
func (v *View) sightFor(w who) *sight {
	if w.root() {
		return everything
	}
	gen := v.x.Gen()
	k := w.key()
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
func (v *View) newSight(w who) *sight {
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
		if !ok || !w.allows(Owner{f.Uid, f.Gid, uint32(f.Mode.Perm())}, mayRead) {
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

// seesCwd tells whether a by-cwd/ path leads to a visible session.
func (s *sight) seesCwd(v *View, path string) bool {
	if s.all {
		return true
	}
	s.cwdOnce.Do(func() {
		s.cwds = map[string]bool{"/": true}
		for _, f := range v.x.All() {
			cwd := f.Header.Cwd
			if !s.sees(f) || !filepath.IsAbs(cwd) {
				continue
			}
			for p := filepath.Clean(cwd); !s.cwds[p]; p = filepath.Dir(p) {
				s.cwds[p] = true
			}
		}
	})
	return s.cwds[path]
}

// tag is what a per-caller inode number adds: nothing for a caller who
// sees all, so that they share the inode every other mount gives.
func (s *sight) tag() []string {
	if s.all {
		return nil
	}
	return []string{"sight", strconv.FormatUint(s.key, 16)}
}

// seenBy is a value whose showing depends on who asks: c, the child that
// gives it, as a caller with sight s sees it, and whether they see it.
type seenBy interface {
	seenBy(s *sight, c Child) (Child, bool)
}

// ListFor lists a folder as caller c sees it.
func (v *View) ListFor(f Folder, c Caller) ([]Child, error) {
	kids, err := v.List(f)
	if err != nil || !v.ListsPerCaller(f) {
		return kids, err
	}
	var s *sight
	out := kids[:0]
	for _, k := range kids {
		if sb, ok := k.Node().(seenBy); ok {
			if s == nil {
				s = v.sightOf(c)
			}
			if k, ok = sb.seenBy(s, k); !ok {
				continue
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// LookupFor finds a child of a folder by name, as caller c sees it.
func (v *View) LookupFor(f Folder, name string, c Caller) (Child, error) {
	k, err := v.Lookup(f, name)
	if err != nil || !v.opts.Shared {
		return k, err
	}
	sb, ok := k.Node().(seenBy)
	if !ok {
		return k, nil
	}
	if k, ok = sb.seenBy(v.sightOf(c), k); !ok {
		return Child{}, ErrNotFound
	}
	return k, nil
}

// PerCaller tells whether what a value shows depends on who asks: the
// kernel must not keep it for another caller.
func (v *View) PerCaller(n Node) bool {
	_, ok := n.(seenBy)
	return v.opts.Shared && ok
}

// gathers is a folder that may show sessions from elsewhere, whose
// listing then depends on who asks.
type gathers interface{ gathers() bool }

// ListsPerCaller tells whether a folder's listing depends on who asks: the
// kernel must not keep it for another caller.
func (v *View) ListsPerCaller(f Folder) bool {
	g, ok := f.(gathers)
	return v.opts.Shared && ok && g.gathers()
}

// The children whose content depends on who asks.

func (*rootDir) gathers() bool    { return true }
func (*projectDir) gathers() bool { return true }
func (*byIDDir) gathers() bool    { return true }
func (*byNameDir) gathers() bool  { return true }
func (*byCwdDir) gathers() bool   { return true }
func (*usageDir) gathers() bool   { return true }
func (*activeDir) gathers() bool  { return true }
func (*forksDir) gathers() bool   { return true }

// gathers: a session folder holds parent, a link to another session,
// when its session was forked from one in the store.
func (d *sessionDir) gathers() bool {
	_, err := d.s.parent()
	return err == nil
}

// gathers: trash/ holds the sessions of the user pifs runs as, in a
// trash directory another user may not be allowed to enter.
func (*trashDir) gathers() bool { return true }

// seenBy: a trashed session is shown to whoever may read its file and
// search every folder down to it (the trash's files/), as they would need
// to see it in the trash.
func (d *trashedDir) seenBy(s *sight, c Child) (Child, bool) {
	if s.who == nil {
		return c, true
	}
	e, f, err := d.s.v.trash.entry(d.s.name)
	if err != nil || !s.who.allows(Owner{f.Uid, f.Gid, uint32(f.Mode.Perm())}, mayRead) {
		return c, false
	}
	dir := filepath.Dir(e.t.File())
	s.trashMu.Lock()
	defer s.trashMu.Unlock()
	ok, known := s.trashed[dir]
	if !known {
		ok = searchFromTop(*s.who, dir) == nil
		if s.trashed == nil {
			s.trashed = map[string]bool{}
		}
		s.trashed[dir] = ok
	}
	return c, ok
}

// seenBy: parent is shown to whoever sees the session it points at.
func (l *parentLink) seenBy(s *sight, c Child) (Child, bool) {
	p, err := l.s.parent()
	return c, err == nil && s.sees(p)
}

func (l *byIDLink) seenBy(s *sight, c Child) (Child, bool) {
	f, ok := l.v.sessionByID(l.id)
	return c, ok && s.sees(f)
}

func (l *fixedLink) seenBy(s *sight, c Child) (Child, bool) {
	return c, l.of == nil || s.sees(l.of)
}

// seenBy: a session in active/ is shown to whoever sees it.
func (l *activeLink) seenBy(s *sight, c Child) (Child, bool) {
	f, err := l.v.meta(l.sproject, l.name)
	return c, err == nil && s.sees(f)
}

// seenBy: a fork in forks/ is shown to whoever sees it.
func (l *forkLink) seenBy(s *sight, c Child) (Child, bool) {
	f, err := l.s.v.meta(l.project, l.name)
	return c, err == nil && s.sees(f)
}

func (d *byCwdDir) seenBy(s *sight, c Child) (Child, bool) {
	return c, s.seesCwd(d.v, d.path)
}

// seenBy: latest is the newest session the caller sees, a link of an
// inode number of their sight's own (the kernel keeps link targets).
func (l *latestLink) seenBy(s *sight, c Child) (Child, bool) {
	if s.all {
		return c, true
	}
	f, ok := l.v.latest(l.project, s)
	if !ok {
		return Child{}, false
	}
	in := l.inProject
	c.Ino = names.Ino(append([]string{"p", l.project, latestName, f.Project, f.Name}, s.tag()...)...)
	c.make = func() Node { return &latestLink{in, s} }
	return c, true
}

// seenBy: a project's cwd is that of the newest session the caller sees.
func (f *cwdFile) seenBy(s *sight, c Child) (Child, bool) {
	if s.all {
		return c, true
	}
	in := f.inProject
	c.Ino = names.Ino(append([]string{"p", f.project, cwdName}, s.tag()...)...)
	c.make = func() Node { return &cwdFile{in, s} }
	return c, true
}

// seenBy: a report is over the sessions the caller sees.
func (f *usageFile) seenBy(s *sight, c Child) (Child, bool) {
	if s.all {
		return c, true
	}
	in, name := f.inProject, f.name
	c.Ino = names.Ino(append([]string{usageName, f.project, name}, s.tag()...)...)
	c.make = func() Node { return &usageFile{in, name, s} }
	return c, true
}

// sightReports are the usage reports over the sessions one sight sees.
type sightReports struct {
	reports *usage.Reports
	mtime   map[string]time.Time
}

// reportsFor returns the usage reports over the sessions s sees (nil:
// all), built from the records the store's reports hold: a caller's
// reports read no session again.
func (v *View) reportsFor(s *sight, loc *time.Location) (*usage.Reports, map[string]time.Time, error) {
	reps, mtime, err := v.reports(loc)
	if err != nil || s == nil || s.all {
		return reps, mtime, err
	}
	c := &v.usage
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.bySight[s.key]; ok {
		return r.reports, r.mtime, nil
	}
	var list []usage.Session
	mt := map[string]time.Time{}
	for i, f := range c.files {
		if !s.sees(f) {
			continue
		}
		list = append(list, c.list[i])
		t := time.Unix(0, f.Sig.Mtime)
		for _, scope := range []string{"", f.Project} {
			if t.After(mt[scope]) {
				mt[scope] = t
			}
		}
	}
	r := sightReports{usage.Build(list, loc), mt}
	if c.bySight == nil || len(c.bySight) >= maxSights {
		c.bySight = map[uint64]sightReports{}
	}
	c.bySight[s.key] = r
	return r.reports, r.mtime, nil
}
