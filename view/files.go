package view

import (
	"syscall"
	"time"
	"unsafe"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/tree"
)

// files.txt, files.json, changes.patch and changes/ of a session folder
// (its leaf's path) and of branches/<id>/ (the path to id): what the
// path's tool calls read and changed (package render says how each is
// written). The files of a path are worked out once per version of the
// session and shared by the four.

// filesOf is what the path to at ("": the leaf) did to files. ss.mu is
// held.
func filesOf(v *View, ss *session, at string) *tree.Files {
	return cache.Rendered(v.cache, ss, "files\x00"+at, filesBytes, func() *tree.Files { return ss.Tree.FilesAt(at) })
}

// filesBytes is about what a path's files hold.
func filesBytes(f *tree.Files) int64 {
	n := int64(unsafe.Sizeof(*f))
	n += int64(len(f.Stats)) * int64(unsafe.Sizeof(tree.FileStat{}))
	n += int64(len(f.Calls)) * int64(unsafe.Sizeof(tree.FileCall{}))
	for _, c := range f.Changed {
		n += int64(len(c.Abs)) + 8*int64(len(c.Calls)) + 32
	}
	for _, l := range [][][]byte{f.ReadFiles, f.ModifiedFiles} {
		for _, p := range l {
			n += int64(len(p)) + 24
		}
	}
	return n
}

// newFilesView is files.txt, files.json or changes.patch of a path.
func newFilesView(s sessionRef, at string, branch bool, name string) *pathView {
	var make func(*tree.Files) []byte
	var count func(*tree.Files) int64
	switch name {
	case filesTextName:
		make, count = render.FilesText, render.FilesTextSize
	case filesJSONName:
		make, count = render.FilesJSON, render.FilesJSONSize
	default:
		make, count = render.ChangesPatch, render.ChangesPatchSize
	}
	return &pathView{inSession{s}, at, branch, name, func(ss *session, at string) []byte {
		return make(filesOf(s.v, ss, at))
	}, func(ss *session, at string) int64 {
		return count(filesOf(s.v, ss, at))
	}}
}

// changesDir is changes/: one unified diff per file the path wrote or
// edited, named after the file's path.
type changesDir struct {
	inSession
	at     string // the path's last entry ("": the leaf)
	branch bool
	mt     func() (time.Time, error)
}

func (d *changesDir) mtime() (time.Time, error) { return d.mt() }

func (d *changesDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		for _, name := range render.ChangeNames(filesOf(d.s.v, ss, d.at)) {
			out = append(out, d.child(name))
		}
		return nil
	})
	return out, err
}

func (d *changesDir) lookup(name string) (Child, error) {
	found := false
	err := d.s.with(func(ss *session) error {
		f := filesOf(d.s.v, ss, d.at)
		_, found = changeIndex(f, name)
		return nil
	})
	if err != nil || !found {
		return Child{}, ErrNotFound
	}
	return d.child(name), nil
}

func (d *changesDir) child(name string) Child {
	s, at, branch := d.s, d.at, d.branch
	base := s.inoBase().With(changesName)
	if branch {
		base = s.inoBase().With(branchesName, at, changesName)
	}
	return Child{name, syscall.S_IFREG, base.With(name).Ino(), func() Node {
		return &pathView{inSession{s}, at, branch, changesName + "/" + name, func(ss *session, at string) []byte {
			f := filesOf(s.v, ss, at)
			if i, ok := changeIndex(f, name); ok {
				return render.ChangeDiff(f, i)
			}
			return nil
		}, func(ss *session, at string) int64 {
			f := filesOf(s.v, ss, at)
			if i, ok := changeIndex(f, name); ok {
				return render.ChangeDiffSize(f, i)
			}
			return 0
		}}
	}}
}

// changeIndex finds the changed file a name of changes/ is the diff of.
func changeIndex(f *tree.Files, name string) (int, bool) {
	for i := range f.Changed {
		if render.ChangeName(f, i) == name {
			return i, true
		}
	}
	return 0, false
}
