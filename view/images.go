package view

import (
	"syscall"
	"time"
	"unsafe"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
)

// imagesOf is the image blocks of the session's version, listed once per
// version. An image whose data is not valid base64 has no file; the log
// says so when the list is made.
func imagesOf(v *View, ss *session) []render.Image {
	return cache.Rendered(v.cache, ss, imagesName, imagesCost, func() []render.Image {
		list := render.Images(ss.Tree.Entries())
		for _, im := range list {
			if im.Broken {
				v.log.Warn("image block is not valid base64: no file in images/", "session", ss.Path, "entry", im.Entry.ID, "block", im.N)
			}
		}
		return list
	})
}

// imagesCost is what a list of images keeps: the entries' bytes stay
// the session's, the names are new.
func imagesCost(list []render.Image) int64 {
	n := int64(len(list)) * int64(unsafe.Sizeof(render.Image{}))
	for _, im := range list {
		n += int64(len(im.Name))
	}
	return n
}

// imagesDir is images/: every image block of the session as a file,
// <entry-id>-<n>.<ext>, decoded; in branches/<id>/ (at set), those of the
// entries on the path to that entry, so that transcript.md's links lead
// to their files from either folder, and through current/. It is listed
// in every session folder, empty when the session has no images, so that
// listing the session folder needs no parse.
type imagesDir struct {
	inSession
	at  string
	ino names.Hash // what its files' numbers start with
}

func newImagesDir(s sessionRef, at string) *imagesDir {
	ino := s.inoBase().With(imagesName)
	if at != "" {
		ino = s.inoBase().With(branchesName, at, imagesName)
	}
	return &imagesDir{inSession{s}, at, ino}
}

func (d *imagesDir) mtime() (time.Time, error) { return d.s.activity() }

// each calls fn with each image the folder holds.
func (d *imagesDir) each(fn func(im render.Image) bool) error {
	return d.s.with(func(ss *session) error {
		var on map[*sessions.Entry]bool
		if d.at != "" {
			path := pathTo(d.s.v, ss, d.at)
			if len(path) == 0 {
				return ErrNotFound
			}
			on = make(map[*sessions.Entry]bool, len(path))
			for _, e := range path {
				on[e] = true
			}
		}
		for _, im := range imagesOf(d.s.v, ss) {
			if !im.Broken && (on == nil || on[im.Entry]) && !fn(im) {
				return nil
			}
		}
		return nil
	})
}

func (d *imagesDir) list() ([]Child, error) {
	var out []Child
	err := d.each(func(im render.Image) bool {
		out = append(out, d.image(im))
		return true
	})
	return out, err
}

func (d *imagesDir) lookup(name string) (Child, error) {
	var c Child
	found := false
	err := d.each(func(im render.Image) bool {
		if im.Name == name {
			c, found = d.image(im), true
		}
		return !found
	})
	if err == nil && !found {
		err = ErrNotFound
	}
	return c, err
}

// image is an image's file. Its inode number includes the offset of the
// entry's line, as an entry file's does: the file never changes, and the
// kernel keeps its pages.
func (d *imagesDir) image(im render.Image) Child {
	s, name := d.s, im.Name
	ino := d.ino.With(name).WithInt(im.Entry.Offset).Ino()
	return Child{name, syscall.S_IFREG, ino, func() Node { return &imageFile{inSession{s}, name} }}
}

// imageFile is one image, decoded: its size is known from the base64
// text's length, without decoding.
type imageFile struct {
	inSession
	name string
}

func (f *imageFile) kept() {}

// find runs fn with the image named f.name in the session's version.
func (f *imageFile) find(fn func(ss *session, im *render.Image)) error {
	return f.s.with(func(ss *session) error {
		list := imagesOf(f.s.v, ss)
		for i := range list {
			if list[i].Name == f.name && !list[i].Broken {
				fn(ss, &list[i])
				return nil
			}
		}
		return ErrNotFound
	})
}

func (f *imageFile) content() ([]byte, time.Time, error) {
	var data []byte
	var e *sessions.Entry
	err := f.find(func(ss *session, im *render.Image) {
		e = im.Entry
		data = cache.Rendered(f.s.v.cache, ss, "image\x00"+f.name, cache.BytesSize, func() []byte {
			b, _ := render.DecodeImage(im.Data)
			return b
		})
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return data, f.mtimeOf(e), nil
}

func (f *imageFile) size() (int64, time.Time, error) {
	var n int64
	var e *sessions.Entry
	err := f.find(func(_ *session, im *render.Image) { n, e = im.Size, im.Entry })
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, f.mtimeOf(e), nil
}

// mtimeOf is the image's mtime: its entry's time, or the session's
// latest activity when the entry has none.
func (f *imageFile) mtimeOf(e *sessions.Entry) time.Time {
	if mt := entryMtime(e); !mt.IsZero() {
		return mt
	}
	mt, _ := f.s.activity()
	return mt
}

var (
	_ Folder = (*imagesDir)(nil)
	_ File   = (*imageFile)(nil)
	_ sizer  = (*imageFile)(nil)
	_ kept   = (*imageFile)(nil)
)
