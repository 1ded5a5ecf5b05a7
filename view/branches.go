package view

import (
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

// branchFiles is a branch folder's files besides its entries, declared
// once: the listing and the lookup both read it.
var branchFiles = []struct {
	name string
	mode uint32
	make func(s sessionRef, id string) Node
}{
	{contextName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newContextFile(s, id, true) }},
	{transcriptName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newTranscriptFile(s, id, true) }},
	{htmlName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newHTMLFile(s, id, true) }},
	{sessionFileName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newExportFile(s, id) }},
	{imagesName, syscall.S_IFDIR, func(s sessionRef, id string) Node { return newImagesDir(s, id) }},
	{filesTextName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newFilesView(s, id, true, filesTextName) }},
	{filesJSONName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newFilesView(s, id, true, filesJSONName) }},
	{patchName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newFilesView(s, id, true, patchName) }},
	{replyName, syscall.S_IFREG, func(s sessionRef, id string) Node { return newReplyFile(s, id, true) }},
	{changesName, syscall.S_IFDIR, func(s sessionRef, id string) Node {
		return &changesDir{inSession{s}, id, true, newBranchDir(s, id).mtime}
	}},
}

// file is the branch folder's file of branchFiles[i].
func (d *branchDir) file(i int) Child {
	s, id, e := d.s, d.id, branchFiles[i]
	return Child{e.name, e.mode, d.ino.With(e.name).Ino(), func() Node { return e.make(s, id) }}
}

func (d *branchDir) list() ([]Child, error) {
	out := make([]Child, 0, len(branchFiles))
	for i := range branchFiles {
		out = append(out, d.file(i))
	}
	err := d.s.with(func(ss *session) error {
		path := pathTo(d.s.v, ss, d.id)
		if len(path) == 0 {
			return ErrNotFound
		}
		stats := entryStatsOf(d.s.v, ss)
		for i, e := range path {
			out = append(out, d.entry(i+1, e, stats))
		}
		return nil
	})
	return out, err
}

func (d *branchDir) lookup(name string) (Child, error) {
	for i, e := range branchFiles {
		if e.name == name {
			return d.file(i), nil
		}
	}
	pos, ok := namePos(name)
	if !ok {
		return Child{}, ErrNotFound
	}
	var c Child
	err := d.s.with(func(ss *session) error {
		path := pathTo(d.s.v, ss, d.id)
		if pos > len(path) || pathFileName(pos, path[pos-1]) != name {
			return ErrNotFound
		}
		c = d.entry(pos, path[pos-1], entryStatsOf(d.s.v, ss))
		return nil
	})
	return c, err
}

func (d *branchDir) entry(pos int, e *sessions.Entry, stats entryStats) Child {
	return entryChild(d.s, pathFileName(pos, e), entryIno(d.ino.With(entriesName), e), e, stats)
}
func (d *branchDir) entryFiles() {}
