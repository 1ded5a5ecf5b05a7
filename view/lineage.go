package view

import (
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/sessions"
)

// Lineage: a session forked or cloned from another (its header's
// parentSession) has parent -> ../../<project>/<session> while that
// session is in the store, and every session has forks/, one link per
// session of the store whose header names it, named by that session's
// folder name (of two in different projects with one name, the first in
// project order). The index keeps both from the headers it reads.

// parentLink is parent -> ../../<project>/<session>.
type parentLink struct{ inSession }

func newParentLink(s sessionRef) *parentLink { return &parentLink{inSession{s}} }

// target's mtime is the session's header's, which names the parent.
func (l *parentLink) target() (string, time.Time, error) {
	p, err := l.s.parent()
	if err != nil {
		return "", time.Time{}, err
	}
	f, err := l.s.meta()
	if err != nil {
		return "", time.Time{}, err
	}
	return "../../" + p.Project + "/" + p.Name, activity(f), nil
}

// forksDir is forks/: the sessions forked or cloned from this one.
type forksDir struct{ inSession }

func newForksDir(s sessionRef) *forksDir { return &forksDir{inSession{s}} }

func (d *forksDir) mtime() (time.Time, error) {
	forks, err := d.forks()
	if err != nil {
		return time.Time{}, err
	}
	mt, err := d.s.activity()
	for _, f := range forks {
		if t := activity(f); t.After(mt) {
			mt = t
		}
	}
	return mt, err
}

// forks are the sessions naming this one as parent, in project and name
// order.
func (d *forksDir) forks() ([]*sessions.File, error) {
	f, err := d.s.meta()
	if err != nil {
		return nil, err
	}
	var out []*sessions.File
	for _, g := range d.s.v.x.Forks(f) {
		if validProject(g.Project) && validSessionName(g.Name) {
			out = append(out, g)
		}
	}
	return out, nil
}

func (d *forksDir) list() ([]Child, error) {
	forks, err := d.forks()
	if err != nil {
		return nil, err
	}
	out := make([]Child, 0, len(forks))
	for _, f := range forks {
		out = append(out, d.link(f))
	}
	return out, nil
}

func (d *forksDir) lookup(name string) (Child, error) {
	forks, err := d.forks()
	if err != nil {
		return Child{}, err
	}
	for _, f := range forks {
		if f.Name == name {
			return d.link(f), nil
		}
	}
	return Child{}, ErrNotFound
}

// link is the link to one fork; its number names where it points.
func (d *forksDir) link(f *sessions.File) Child {
	s, project, name := d.s, f.Project, f.Name
	return Child{name, syscall.S_IFLNK, s.ino(forksName, project, name), func() Node { return &forkLink{inSession{s}, project, name} }}
}

// forkLink is forks/<session> -> ../../../<project>/<session>.
type forkLink struct {
	inSession
	project, name string
}

func (l *forkLink) target() (string, time.Time, error) {
	f, err := l.s.v.meta(l.project, l.name)
	if err != nil {
		return "", time.Time{}, err
	}
	return strings.Repeat("../", 3) + f.Project + "/" + f.Name, activity(f), nil
}

// lineageNotices are what the kernel must be told when a session comes or
// goes (old or new nil): the forks/ of the session it names as parent, and
// the parent link of the sessions that name it.
func (v *View) lineageNotices(old, cur *sessions.File) []Notice {
	var out []Notice
	for _, f := range []*sessions.File{old, cur} {
		if f == nil || f.Header == nil {
			continue
		}
		if len(f.Header.ParentSession) > 0 {
			if p, err := v.x.Parent(f); err == nil {
				out = append(out, Notice{[]string{p.Project, p.Name, forksName}, Refresh})
			}
		}
		for _, g := range v.x.Forks(f) {
			out = append(out, Notice{[]string{g.Project, g.Name, parentName}, Forget},
				Notice{[]string{g.Project, g.Name}, Attrs})
		}
	}
	return out
}

var (
	_ Folder = (*forksDir)(nil)
	_ Link   = (*parentLink)(nil)
	_ Link   = (*forkLink)(nil)
)

func (*forksDir) gathers() bool { return true }

// seenBy: parent is shown to whoever sees the session it points at.
func (l *parentLink) seenBy(s *sight, c Child) (Child, bool) {
	p, err := l.s.parent()
	return c, err == nil && s.sees(p)
}

// seenBy: a fork in forks/ is shown to whoever sees it.
func (l *forkLink) seenBy(s *sight, c Child) (Child, bool) {
	f, err := l.s.v.meta(l.project, l.name)
	return c, err == nil && s.sees(f)
}
