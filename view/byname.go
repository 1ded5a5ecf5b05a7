package view

import (
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
)

// byNameDir is a project's by-name/: one symlink per session name (pi's
// /name) to the session's folder, so that a session is reached by what it
// is called: `cd by-name/Auth\ refactor`. When sessions share a name, the
// newest (last by file name, which starts with its time) has it; unnamed
// sessions are not listed. Names are spelled as ids are.
type byNameDir struct{ inProject }

func newByNameDir(v *View, project string) *byNameDir { return &byNameDir{inProject{v, project}} }

func (v *View) byName(project string) (map[string]*sessions.File, error) {
	gen := v.x.Gen()
	v.byNames.mu.Lock()
	c := v.byNames.by[project]
	v.byNames.mu.Unlock()
	if c != nil && c.gen == gen {
		return c.names, nil
	}
	files, err := v.sessionFiles(project)
	if err != nil {
		return nil, err
	}
	c = &byName{gen: gen, names: map[string]*sessions.File{}}
	// Each name is a read of the whole file (its session_info lines),
	// once per version: on every core. During a walk that stats session
	// folders (bash's glob of MNT/*/*/context.json tests by-name/ before
	// the project's sessions), the sessions it is coming to are parsed
	// as it will parse them, which tells their names.
	var unknown []*sessions.File
	for _, f := range files {
		if !f.NameKnown() {
			unknown = append(unknown, f)
		}
	}
	unknown = v.cache.ReadForWalk(unknown, nil)
	par.Each(len(unknown), func(i int) { unknown[i].SessionName() })
	for _, f := range files {
		if name, err := f.SessionName(); err == nil && name != "" {
			c.names[names.Encode(name)] = f // later files are newer
		}
	}
	v.byNames.mu.Lock()
	if v.byNames.by == nil {
		v.byNames.by = map[string]*byName{}
	}
	v.byNames.by[project] = c
	v.byNames.mu.Unlock()
	return c.names, nil
}

func (d *byNameDir) mtime() (time.Time, error) { return d.v.projectMtime(d.project) }

func (d *byNameDir) list() ([]Child, error) {
	byName, err := d.v.byName(d.project)
	if err != nil {
		return nil, err
	}
	out := make([]Child, 0, len(byName))
	for n, f := range byName {
		out = append(out, d.link(n, f))
	}
	return out, nil
}

func (d *byNameDir) lookup(name string) (Child, error) {
	byName, err := d.v.byName(d.project)
	if err != nil {
		return Child{}, err
	}
	f := byName[name]
	if f == nil {
		return Child{}, ErrNotFound
	}
	return d.link(name, f), nil
}

func (d *byNameDir) link(name string, f *sessions.File) Child {
	target, mt := "../"+f.Name, time.Unix(0, f.Sig.Mtime)
	return Child{name, syscall.S_IFLNK, names.Ino("p", d.project, byNameName, name, f.Name), func() Node {
		return newSessionLink(d.inProject, target, mt, f)
	}}
}
func (*byNameDir) gathers() bool { return true }
