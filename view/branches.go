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
		if id, ok = ss.Tree.FindShown(name, 0); !ok {
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

// branchFiles is a branch folder's files besides its entries, declared
// once, in the order of their names: the listing and the lookup both read
// it.
var branchFiles = []struct {
	name string
	mode uint32
	make func(s sessionRef, id string) Node
}{
	{changesName, syscall.S_IFDIR, func(s sessionRef, id string) Node {
		return &changesDir{inSession{s}, id, true, newBranchDir(s, id).mtime}
	}},
	{patchName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newFilesView(s, id, true, patchName) }},
	{contextName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newContextFile(s, id, true) }},
	{filesJSONName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newFilesView(s, id, true, filesJSONName) }},
	{filesTextName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newFilesView(s, id, true, filesTextName) }},
	{imagesName, syscall.S_IFDIR, func(s sessionRef, id string) Node { return newImagesDir(s, id) }},
	{replyName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newReplyFile(s, id, true) }},
	{sessionFileName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newExportFile(s, id) }},
	{htmlName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newHTMLFile(s, id, true) }},
	{transcriptName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newTranscriptFile(s, id, true) }},
}

// file is the branch folder's file of branchFiles[i].
func (d *branchDir) file(i int) Child {
	s, id, e := d.s, d.id, branchFiles[i]
	return Child{e.name, e.mode, d.ino.With(e.name).Ino(), func() Node { return e.make(s, id) }}
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
		out = make([]Child, 0, len(path)+len(branchFiles))
		names.PathOrder(len(path), func(pos int) {
			out = append(out, d.entry(pos, path[pos-1], stats))
		})
		return nil
	})
	for i := range branchFiles {
		out = append(out, d.file(i))
	}
	return out, err
}

func (d *branchDir) lookup(name string) (Child, error) {
	for i, e := range branchFiles {
		if e.name == name {
			return d.file(i), nil
		}
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

func (d *branchDir) entry(pos int, e *sessions.Entry, stats cache.EntryStats) Child {
	return entryChild(d.s, pathFileName(pos, e), entryIno(d.ino.With(entriesName), e), e, stats)
}
