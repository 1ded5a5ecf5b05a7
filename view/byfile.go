package view

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/search"
)

// by-file/<path…>/, at the root and in a project folder: the files the
// sessions' tool calls read, wrote and edited, by their absolute paths
// (in a project, relative to its cwd), as the store's full-text index
// keeps them. The folder of a file links to the sessions that touched it,
// each dated by its last touch (ls -t: newest first), and modified/ to
// those that wrote or edited it; a folder above lists the names below it
// that lead to touched files. The index learns of a change after the
// kernel is told of it, so the kernel keeps nothing of by-file/ (live);
// what it lists is what the caller may read.

// byFileDir is by-file/ or a folder below it.
type byFileDir struct {
	inProject        // "" at the root
	rel       string // the path below by-file/ ("" for by-file/ itself)
	modified  bool   // modified/: only the sessions that changed the file
	sees      *sight // whose listing it is
}

func byFileChild(v *View, project string) Child {
	return Child{byFileName, syscall.S_IFDIR, names.Ino(byFileName, project), func() Node { return &byFileDir{inProject: inProject{v, project}, sees: everything} }}
}

func (*byFileDir) live()         {}
func (*byFileDir) gathers() bool { return true }

// seenBy: a folder of by-file/ as the caller sees it, with an inode
// number of their sight's own.
func (d *byFileDir) seenBy(s *sight, c Child) (Child, bool) {
	in := *d
	in.sees = s
	c.Ino = names.Ino(append([]string{byFileName, d.project, d.rel, boolName(d.modified)}, s.tag()...)...)
	c.make = func() Node { n := in; return &n }
	return c, true
}

// path is the absolute path the folder stands for; false when there is
// none (a project without an absolute cwd).
func (d *byFileDir) path() (string, bool) {
	if d.project == "" {
		return "/" + d.rel, true
	}
	cwd, err := d.v.projectCwd(d.project, d.sees)
	if err != nil || !filepath.IsAbs(cwd) {
		return "", false
	}
	return filepath.Join(cwd, d.rel), true
}

func (d *byFileDir) within() search.Scope {
	sc := search.Scope{Project: d.project}
	if s := d.sees; !s.all {
		sc.Visible = func(path string) bool { return !s.hidden[path] }
	}
	return sc
}

// mtime is when the index last changed: the kernel, which keeps a
// folder's listing while its mtime stays, lists the folder again after.
func (d *byFileDir) mtime() (time.Time, error) {
	if x := d.v.opts.Search; x != nil {
		return x.Updated(), nil
	}
	return dirMtime(d.v.opts.SessionsDir)
}

func (d *byFileDir) list() ([]Child, error) {
	p, ok := d.path()
	if x := d.v.opts.Search; x == nil || !ok {
		if d.rel == "" && x == nil {
			return []Child{d.readme()}, nil
		}
		return nil, nil
	}
	f, err := d.v.byFiles.Folder(context.Background(), d.v.opts.Search, d.key(p), d.within())
	if err != nil {
		return nil, err
	}
	var out []Child
	for _, name := range f.Names {
		out = append(out, d.sub(name, f.Modified && name == search.ModifiedName))
	}
	for _, t := range f.Touches {
		if c, ok := d.link(t); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func (d *byFileDir) lookup(name string) (Child, error) {
	p, ok := d.path()
	if x := d.v.opts.Search; x == nil || !ok {
		if d.rel == "" && x == nil && name == readmeName {
			return d.readme(), nil
		}
		return Child{}, ErrNotFound
	}
	kind, t, err := d.v.byFiles.Lookup(context.Background(), d.v.opts.Search, d.key(p), name, d.within())
	if err != nil {
		return Child{}, err
	}
	switch kind {
	case search.NameBelow, search.NameModified:
		return d.sub(name, kind == search.NameModified), nil
	case search.NameSession:
		if c, ok := d.link(t); ok {
			return c, nil
		}
	}
	return Child{}, ErrNotFound
}

func (d *byFileDir) key(path string) search.FolderKey {
	return search.FolderKey{Path: path, Project: d.project, Modified: d.modified, Sight: d.sees.key}
}

// sub is the folder of a name below, or (modified) the file's modified/.
func (d *byFileDir) sub(name string, modified bool) Child {
	in := *d
	in.modified = modified
	if !modified {
		in.rel = strings.TrimPrefix(d.rel+"/"+name, "/")
	}
	return Child{name, syscall.S_IFDIR, names.Ino(byFileName, d.project, in.rel, boolName(modified)), func() Node { n := in; return &n }}
}

// link is the session of a touch, relative to the folder: up through
// by-file/'s folders to the root (or the project folder).
func (d *byFileDir) link(t search.FileTouch) (Child, bool) {
	f, err := d.v.meta(t.Project, t.Session)
	if err != nil {
		return Child{}, false
	}
	depth := 1 + strings.Count(d.rel, "/")
	if d.rel != "" {
		depth++
	}
	if d.modified {
		depth++
	}
	target := strings.Repeat("../", depth) + f.Name
	if d.project == "" {
		target = strings.Repeat("../", depth) + f.Project + "/" + f.Name
	}
	mt := time.Unix(0, f.Sig.Mtime)
	if !math.IsNaN(t.Time) {
		mt = time.UnixMilli(int64(t.Time))
	}
	return Child{f.Name, syscall.S_IFLNK, names.Ino(byFileName, d.project, d.rel, boolName(d.modified), f.Project, f.Name),
		func() Node { return byFileLink{newSessionLink(inProject{d.v, d.project}, target, mt, f)} }}, true
}

// byFileLink is a link of by-file/, whose time the kernel must not keep.
type byFileLink struct{ *fixedLink }

func (byFileLink) live() {}

func boolName(b bool) string {
	if b {
		return search.ModifiedName
	}
	return ""
}

func (d *byFileDir) readme() Child {
	return Child{readmeName, syscall.S_IFREG, names.Ino(byFileName, d.project, readmeName), func() Node { return &byFileReadme{d.inProject} }}
}

// byFileReadme is by-file/README on a mount without the index.
type byFileReadme struct{ inProject }

func (f *byFileReadme) content() ([]byte, time.Time, error) {
	mt, err := dirMtime(f.v.opts.SessionsDir)
	return []byte(search.ByFileOff), mt, err
}
