package view

import (
	"github.com/pifs/pifs/cache"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// branchesDir is branches/: one folder per tip, though any entry id
// resolves.
type branchesDir struct {
	inSession
	ino names.Hash // what its folders' numbers start with
}

func newBranchesDir(s sessionRef) *branchesDir {
	return &branchesDir{inSession{s}, s.inoBase().With(branchesName)}
}

func (d *branchesDir) mtime() (time.Time, error) { return d.s.activity() }

func (d *branchesDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		for _, n := range ss.Tree.Tips() {
			out = append(out, d.branch(n.ID))
		}
		return nil
	})
	return out, err
}

func (d *branchesDir) lookup(name string) (Child, error) {
	var id string
	err := d.s.with(func(ss *session) error {
		var ok bool
		if id, ok = findID(ss.Tree, name, 0); !ok {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return Child{}, err
	}
	return d.branch(id), nil
}

func (d *branchesDir) branch(id string) Child {
	s := d.s
	return Child{names.Encode(id), syscall.S_IFDIR, d.ino.With(id).Ino(), func() Node { return newBranchDir(s, id) }}
}

// branchDir is branches/<id>/: the root→entry path, one file per entry,
// and the context and transcript with that entry as leaf.
type branchDir struct {
	inSession
	id  string
	ino names.Hash // what its files' numbers start with
}

func newBranchDir(s sessionRef, id string) *branchDir {
	return &branchDir{inSession{s}, id, s.inoBase().With(branchesName, id)}
}

func (d *branchDir) mtime() (time.Time, error) {
	_, mt, err := d.s.renderEntry(d.id, "", func(*session) []byte { return nil }, nil)
	return mt, err
}

// list lists the path's files in the order of their names (see
// names.PathOrder), then the folder's views, whose names, all letters,
// come after: a listing of 60,000 names that needs no sorting.
func (d *branchDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		path := pathTo(d.s.v, ss, d.id)
		if len(path) == 0 {
			return ErrNotFound
		}
		stats := cache.EntryStatsOf(d.s.v.cache, ss)
		out = make([]Child, 0, len(path)+5)
		names.PathOrder(len(path), func(pos int) {
			out = append(out, d.entry(pos, path[pos-1], stats))
		})
		return nil
	})
	return append(out, d.context(), d.images(), d.export(), d.html(), d.transcript()), err
}

func (d *branchDir) lookup(name string) (Child, error) {
	switch name {
	case contextName:
		return d.context(), nil
	case transcriptName:
		return d.transcript(), nil
	case htmlName:
		return d.html(), nil
	case sessionFileName:
		return d.export(), nil
	case imagesName:
		return d.images(), nil
	}
	pos, ok := names.PathPos(name)
	if !ok {
		return Child{}, ErrNotFound
	}
	var c Child
	err := d.s.with(func(ss *session) error {
		path := pathTo(d.s.v, ss, d.id)
		if pos > len(path) || pathFileName(pos, path[pos-1]) != name {
			return ErrNotFound
		}
		c = d.entry(pos, path[pos-1], cache.EntryStatsOf(d.s.v.cache, ss))
		return nil
	})
	return c, err
}

func (d *branchDir) context() Child {
	s, id := d.s, d.id
	return Child{contextName, syscall.S_IFREG, d.ino.With(contextName).Ino(), func() Node { return newContextFile(s, id, true) }}
}

func (d *branchDir) transcript() Child {
	s, id := d.s, d.id
	return Child{transcriptName, syscall.S_IFREG, d.ino.With(transcriptName).Ino(), func() Node { return newTranscriptFile(s, id, true) }}
}

func (d *branchDir) html() Child {
	s, id := d.s, d.id
	return Child{htmlName, syscall.S_IFREG, d.ino.With(htmlName).Ino(), func() Node { return newHTMLFile(s, id, true) }}
}

func (d *branchDir) images() Child {
	s, id := d.s, d.id
	return Child{imagesName, syscall.S_IFDIR, d.ino.With(imagesName).Ino(), func() Node { return newImagesDir(s, id) }}
}

func (d *branchDir) export() Child {
	s, id := d.s, d.id
	return Child{sessionFileName, syscall.S_IFREG, d.ino.With(sessionFileName).Ino(), func() Node { return newExportFile(s, id) }}
}

func (d *branchDir) entry(pos int, e *sessions.Entry, stats cache.EntryStats) Child {
	return entryChild(d.s, pathFileName(pos, e), entryIno(d.ino.With(entriesName), e), e, stats)
}
func (d *branchDir) entryFiles() {}
