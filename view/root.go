package view

import (
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
)

// Root is the mount's root folder.
func (v *View) Root() Folder { return &rootDir{inRoot{v}} }

// rootDir is the mount's root: the projects, by-id/, by-cwd/, usage/,
// latest and new.
type rootDir struct{ inRoot }

// gathers: the root shows the projects a caller may see (see gathers).
func (*rootDir) gathers() bool { return true }

// projectErrorsFile is a project's errors: why recent imports into it
// were refused, newest last.
type projectErrorsFile struct{ inProject }

func (f *projectErrorsFile) content() ([]byte, time.Time, error) {
	data, mt := f.v.refused.Get(projectErrorsKey(f.project))
	if mt.IsZero() {
		var err error
		if mt, err = f.v.projectMtime(f.project); err != nil {
			return nil, mt, err
		}
	}
	return data, mt, nil
}

func (d *projectDir) errors() Child {
	return Child{errorsName, syscall.S_IFREG, names.Ino("p", d.project, errorsName), func() Node { return &projectErrorsFile{inProject{d.v, d.project}} }}
}

func (s *rootDir) mtime() (time.Time, error) { return dirMtime(s.v.opts.SessionsDir) }

func (s *rootDir) list() ([]Child, error) {
	// events is looked up, never listed: a walk (grep -r, tar, diff -r)
	// would wait on it forever; search/ too: any name in it is a folder,
	// which a glob (*/*/info.json) would take for a session's.
	out := []Child{s.byID(), s.byCwd(), byFileChild(s.v, ""), s.newFile(), s.usage(), s.trash(), activeChild(s.v, "")}
	if c, err := s.latest(); err == nil {
		out = append(out, c)
	}
	for _, p := range s.v.projects() {
		out = append(out, s.project(p))
	}
	return out, nil
}

func (s *rootDir) lookup(name string) (Child, error) {
	switch name {
	case byIDName:
		return s.byID(), nil
	case byCwdName:
		return s.byCwd(), nil
	case byFileName:
		return byFileChild(s.v, ""), nil
	case newName:
		return s.newFile(), nil
	case latestName:
		return s.latest()
	case usageName:
		return s.usage(), nil
	case trashName:
		return s.trash(), nil
	case eventsName:
		return eventsChild(s.v, ""), nil
	case activeName:
		return activeChild(s.v, ""), nil
	case pifsName:
		return pifsChild(s.v), nil
	}
	if c := searchChild(s.v, ""); len(c) > 0 && name == searchName {
		return c[0], nil
	}
	if !s.v.hasProject(name) {
		return Child{}, ErrNotFound
	}
	return s.project(name), nil
}

func (s *rootDir) byID() Child {
	return Child{byIDName, syscall.S_IFDIR, names.Ino(byIDName), func() Node { return newByIDDir(s.v) }}
}

func (s *rootDir) trash() Child {
	return Child{trashName, syscall.S_IFDIR, names.Ino(trashName), func() Node { return newTrashDir(s.v) }}
}

func (s *rootDir) byCwd() Child {
	return Child{byCwdName, syscall.S_IFDIR, names.Ino(byCwdName), func() Node { return newByCwdDir(s.v, "/") }}
}

func (s *rootDir) usage() Child {
	return Child{usageName, syscall.S_IFDIR, names.Ino(usageName), func() Node { return newUsageDir(s.v, "") }}
}

func (s *rootDir) newFile() Child {
	return Child{newName, syscall.S_IFREG, names.Ino(newName), func() Node { return newNewFile(s.v, "") }}
}

// latest is listed while there is a project: where it points takes reading
// every project, which only readlink does.
func (s *rootDir) latest() (Child, error) {
	if len(s.v.projects()) == 0 {
		return Child{}, ErrNotFound
	}
	// Its inode number stays while its target is not known: the watcher
	// forgets the name on every change, so the kernel reads it again.
	return Child{latestName, syscall.S_IFLNK, names.Ino(latestName), func() Node { return newLatestLink(s.v, "") }}, nil
}

func (s *rootDir) project(p string) Child {
	return Child{p, syscall.S_IFDIR, names.Ino("p", p), func() Node { return newProjectDir(s.v, p) }}
}

// projectDir is one folder of the sessions directory: its sessions, cwd and
// new.
type projectDir struct{ inProject }

func newProjectDir(v *View, project string) *projectDir { return &projectDir{inProject{v, project}} }

func (d *projectDir) mtime() (time.Time, error) { return d.v.projectMtime(d.project) }

func (d *projectDir) list() ([]Child, error) {
	files, err := d.v.sessionFiles(d.project)
	if err != nil {
		return nil, err
	}
	d.v.cache.Listing(d.project)
	out := make([]Child, 0, len(files)+3)
	out = append(out, d.cwd(), d.newFile(), d.usage(), d.byName(), byFileChild(d.v, d.project), d.errors(), activeChild(d.v, d.project))
	if c, err := d.latest(); err == nil {
		out = append(out, c)
	}
	for _, f := range files {
		out = append(out, d.session(f.Name))
	}
	return out, nil
}

func (d *projectDir) lookup(name string) (Child, error) {
	switch name {
	case cwdName:
		return d.cwd(), nil
	case newName:
		return d.newFile(), nil
	case latestName:
		return d.latest()
	case usageName:
		return d.usage(), nil
	case byNameName:
		return d.byName(), nil
	case byFileName:
		return byFileChild(d.v, d.project), nil
	case errorsName:
		return d.errors(), nil
	case eventsName:
		return eventsChild(d.v, d.project), nil
	case activeName:
		return activeChild(d.v, d.project), nil
	}
	if c := searchChild(d.v, d.project); len(c) > 0 && name == searchName {
		return c[0], nil
	}
	if _, err := d.v.meta(d.project, name); err != nil {
		return Child{}, err
	}
	return d.session(name), nil
}

func (d *projectDir) byName() Child {
	return Child{byNameName, syscall.S_IFDIR, names.Ino("p", d.project, byNameName), func() Node { return newByNameDir(d.v, d.project) }}
}

func (d *projectDir) usage() Child {
	return Child{usageName, syscall.S_IFDIR, names.Ino("p", d.project, usageName), func() Node { return newUsageDir(d.v, d.project) }}
}

func (d *projectDir) latest() (Child, error) {
	f, ok := d.v.latest(d.project, nil)
	if !ok {
		return Child{}, ErrNotFound
	}
	return Child{latestName, syscall.S_IFLNK, names.Ino("p", d.project, latestName, f.Name), func() Node { return newLatestLink(d.v, d.project) }}, nil
}

func (d *projectDir) cwd() Child {
	return Child{cwdName, syscall.S_IFREG, names.Ino("p", d.project, cwdName), func() Node { return newCwdFile(d.v, d.project) }}
}

func (d *projectDir) newFile() Child {
	return Child{newName, syscall.S_IFREG, names.Ino("p", d.project, newName), func() Node { return newNewFile(d.v, d.project) }}
}

func (d *projectDir) session(name string) Child {
	return sessionDirChild(d.v, d.project, name)
}

// cwdFile holds a project's working directory: the cwd of its newest
// session that names one (empty when none does).
type cwdFile struct {
	inProject
	sees *sight // nil: everything
}

func newCwdFile(v *View, project string) *cwdFile { return &cwdFile{inProject: inProject{v, project}} }

func (f *cwdFile) content() ([]byte, time.Time, error) {
	mt, err := f.v.projectMtime(f.project)
	if err != nil {
		return nil, mt, err
	}
	cwd, err := f.v.projectCwd(f.project, f.sees)
	if err != nil || cwd == "" {
		return nil, mt, err
	}
	return []byte(cwd + "\n"), mt, nil
}

// latestLink is latest: the session whose file changed last, at the root
// or in a project.
type latestLink struct {
	inProject        // "" at the root
	sees      *sight // nil: everything
}

func newLatestLink(v *View, project string) *latestLink {
	return &latestLink{inProject: inProject{v, project}}
}

func (l *latestLink) target() (string, time.Time, error) {
	f, ok := l.v.latest(l.project, l.sees)
	if !ok {
		return "", time.Time{}, ErrNotFound
	}
	mt := time.Unix(0, f.Sig.Mtime)
	if l.project != "" {
		return f.Name, mt, nil
	}
	return f.Project + "/" + f.Name, mt, nil
}
func (*projectDir) gathers() bool { return true }

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
