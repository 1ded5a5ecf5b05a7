package sessions

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
)

// lineage keeps, for every session the index holds, which session its
// header names as parentSession (the one it was forked or cloned from),
// and the reverse: the sessions that name each file. A parent is known by
// its place: its path relative to the store ("PROJECT/NAME.jsonl", or
// "NAME.jsonl" at the top), or, for a file outside the store, its cleaned
// absolute path. It is kept by Index.put and Index.unID, under the
// index's lock, from the headers the index reads anyway.
type lineage struct {
	// parents is each session version's parent key.
	parents map[*File]string
	// forks are the sessions naming each key.
	forks map[string][]*File
	// real is the store's real path (symbolic links resolved), "" until
	// needed; realDirs caches the real path of the folders of parents
	// not found in the store by their text.
	real     string
	realDirs map[string]string
}

// parentKey is where the parentSession of h places the parent: its key,
// and whether that is in the store. pi writes the path of the session it
// forked as it resolved it (absolute, cleaned, symbolic links kept), so
// the path is taken as it is in the store's folder as pifs was given it,
// or in the store's real path, or, when neither holds it, once the
// symbolic links of its folder are resolved (a store reached by pi and by
// pifs through different links).
func (x *Index) parentKey(h *Header) (key string, inStore bool) {
	if h == nil || jsjson.KindOf(h.ParentSession) != jsjson.String {
		return "", false
	}
	p, err := jsjson.Unquote(h.ParentSession)
	if err != nil || !filepath.IsAbs(p) {
		return "", false
	}
	p = filepath.Clean(p)
	l := &x.lin
	if l.real == "" {
		l.real = realDir(x.dir)
	}
	for _, dir := range []string{x.dir, l.real} {
		if k, ok := storeKey(p, dir); ok {
			return k, true
		}
	}
	parent := filepath.Dir(p)
	real, ok := l.realDirs[parent]
	if !ok {
		real = realDir(parent)
		if l.realDirs == nil {
			l.realDirs = map[string]string{}
		}
		l.realDirs[parent] = real
	}
	if k, ok := storeKey(filepath.Join(real, filepath.Base(p)), l.real); ok {
		return k, true
	}
	return p, false
}

// storeKey is the key of the file at p when it is a session file of the
// store at dir: at its top or in a project folder.
func storeKey(p, dir string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "../") || rel == ".." {
		return "", false
	}
	if n := strings.Count(rel, "/"); n > 1 {
		return "", false
	}
	return rel, true
}

// fileKey is a session file's key.
func fileKey(f *File) string {
	if f.Flat {
		return f.Name + ".jsonl"
	}
	return f.Project + "/" + f.Name + ".jsonl"
}

// realDir is dir with its symbolic links resolved ("" when that fails:
// the folder is gone).
func realDir(dir string) string {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	return r
}

// linAdd records the parent of a session version the index takes. x.mu is
// held.
func (x *Index) linAdd(f *File) {
	key, _ := x.parentKey(f.Header)
	if key == "" {
		return
	}
	l := &x.lin
	if l.parents == nil {
		l.parents, l.forks = map[*File]string{}, map[string][]*File{}
	}
	l.parents[f] = key
	l.forks[key] = append(l.forks[key], f)
}

// linRemove forgets a session version the index drops. x.mu is held.
func (x *Index) linRemove(f *File) {
	l := &x.lin
	key, ok := l.parents[f]
	if !ok {
		return
	}
	delete(l.parents, f)
	list := l.forks[key]
	for i, g := range list {
		if g == f {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(l.forks, key)
	} else {
		l.forks[key] = list
	}
}

// ErrNoParent is returned by Parent for a session whose parent is not in
// the store: it names none, or one outside the store, or one gone from it
// (deleted, trashed, moved).
var ErrNoParent = fmt.Errorf("%w: no parent session in the store", fs.ErrNotExist)

// Parent returns the session f was forked or cloned from: the file its
// header's parentSession names, when that is a session of the store (see
// parentKey for how the path is compared). A parent outside the store, or
// gone from it, is ErrNoParent: info.json still names it. A parent in a
// project folder not read yet is read alone.
func (x *Index) Parent(f *File) (*File, error) {
	x.mu.Lock()
	x.loadRoot()
	key, inStore := x.parentKey(f.Header)
	var p *File
	if inStore {
		if project, name, ok := strings.Cut(key, "/"); ok {
			x.mu.Unlock()
			p, err := x.Lookup(project, strings.TrimSuffix(name, ".jsonl"))
			if err != nil || p.Flat {
				return nil, fmt.Errorf("%w: %s is gone", ErrNoParent, key)
			}
			return p, nil
		}
		p = x.flat[strings.TrimSuffix(key, ".jsonl")]
	}
	x.mu.Unlock()
	switch {
	case key == "":
		return nil, fmt.Errorf("%w: its header names none", ErrNoParent)
	case !inStore:
		return nil, fmt.Errorf("%w: %s is outside the store", ErrNoParent, key)
	case p == nil || p.Header == nil:
		return nil, fmt.Errorf("%w: %s is gone", ErrNoParent, key)
	}
	return p, nil
}

// Forks returns the sessions whose header names f as parentSession (its
// forks and clones), in project and name order. The first call reads
// every project, as ByID does; after that it reads nothing.
func (x *Index) Forks(f *File) []*File {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadAll()
	out := append([]*File(nil), x.lin.forks[fileKey(f)]...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Project != out[j].Project {
			return out[i].Project < out[j].Project
		}
		return out[i].Name < out[j].Name
	})
	return out
}
