package view

import (
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// byCwdDir is by-cwd/<path…>/: the working directory path's sessions as
// links to their folders, and a folder per path component below it that
// leads to more. `cd MOUNT/by-cwd$PWD` lists the sessions of where you are.
type byCwdDir struct {
	inRoot
	path string // the working directory it stands for ("/" for by-cwd/)
}

func newByCwdDir(v *View, path string) *byCwdDir { return &byCwdDir{inRoot{v}, path} }

// cwds returns the tree of working directories, built again only after the
// index changed.
func (v *View) cwds() *cwdTree {
	gen := v.x.Gen()
	v.cwdTree.mu.Lock()
	t := v.cwdTree.t
	v.cwdTree.mu.Unlock()
	if t != nil && t.gen == gen {
		return t
	}
	all := v.x.All()
	t = &cwdTree{gen: gen, nodes: map[string]*cwdNode{}}
	t.node("/")
	for _, f := range all {
		cwd := f.Header.Cwd
		if !filepath.IsAbs(cwd) || !validProject(f.Project) || !validSessionName(f.Name) || strings.ContainsRune(cwd, 0) {
			continue
		}
		cwd = filepath.Clean(cwd)
		mt := time.Unix(0, f.Sig.Mtime)
		if n := t.node(cwd); n.sessions[f.Name] == nil {
			n.sessions[f.Name] = f
		}
		for p := cwd; ; {
			if n := t.nodes[p]; mt.After(n.mtime) {
				n.mtime = mt
			}
			if p == "/" {
				break
			}
			parent := filepath.Dir(p)
			t.node(parent).subs[filepath.Base(p)] = true
			p = parent
		}
	}
	v.cwdTree.mu.Lock()
	v.cwdTree.t = t
	v.cwdTree.mu.Unlock()
	return t
}

func (d *byCwdDir) node() (*cwdNode, error) {
	n := d.v.cwds().nodes[d.path]
	if n == nil {
		return nil, ErrNotFound
	}
	return n, nil
}

func (d *byCwdDir) mtime() (time.Time, error) {
	n, err := d.node()
	if err != nil {
		return time.Time{}, err
	}
	return n.mtime, nil
}

func (d *byCwdDir) list() ([]Child, error) {
	n, err := d.node()
	if err != nil {
		return nil, err
	}
	var out []Child
	for sub := range n.subs {
		out = append(out, d.sub(sub))
	}
	for _, f := range n.sessions {
		if !n.subs[f.Name] {
			out = append(out, d.link(f))
		}
	}
	return out, nil
}

func (d *byCwdDir) lookup(name string) (Child, error) {
	n, err := d.node()
	if err != nil {
		return Child{}, err
	}
	if n.subs[name] {
		return d.sub(name), nil
	}
	if f := n.sessions[name]; f != nil {
		return d.link(f), nil
	}
	return Child{}, ErrNotFound
}

func (d *byCwdDir) sub(name string) Child {
	path := filepath.Join(d.path, name)
	return Child{name, syscall.S_IFDIR, names.Ino(byCwdName, path), func() Node { return newByCwdDir(d.v, path) }}
}

func (d *byCwdDir) link(f *sessions.File) Child {
	depth := 1 // by-cwd itself
	if d.path != "/" {
		depth += strings.Count(d.path, "/")
	}
	target := strings.Repeat("../", depth) + f.Project + "/" + f.Name
	mt := time.Unix(0, f.Sig.Mtime)
	return Child{f.Name, syscall.S_IFLNK, names.Ino(byCwdName, d.path, f.Project, f.Name), func() Node {
		return newSessionLink(inProject{d.v, ""}, target, mt, f)
	}}
}
func (*byCwdDir) gathers() bool { return true }

func (d *byCwdDir) seenBy(s *sight, c Child) (Child, bool) {
	return c, s.seesCwd(d.v.x, d.path)
}
