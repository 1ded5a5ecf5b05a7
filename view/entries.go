package view

import (
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
)

// entriesDir is entries/: every entry, one indented file each.
type entriesDir struct {
	inSession
	ino names.Hash // what its files' numbers start with
}

func newEntriesDir(s sessionRef) *entriesDir {
	return &entriesDir{inSession{s}, s.inoBase().With(entriesName)}
}

func (d *entriesDir) mtime() (time.Time, error) { return d.s.activity() }

func entryFileName(id string) string { return names.EncodeIn(id, len(jsonExt)) + jsonExt }

func (d *entriesDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		all := ss.Tree.Entries()
		withID := 0
		for _, e := range all {
			if e.ID != "" {
				withID++
			}
		}
		// When ids repeat, the last entry of an id has its name.
		unique := withID == ss.Tree.Len()
		stats := cache.EntryStatsOf(d.s.v.cache, ss)
		out = make([]Child, 0, ss.Tree.Len())
		for _, e := range all {
			if e.ID != "" && (unique || ss.Tree.Node(e.ID).Entry == e) {
				out = append(out, d.entry(e, stats))
			}
		}
		return nil
	})
	return out, err
}

func (d *entriesDir) lookup(name string) (Child, error) {
	base, ok := strings.CutSuffix(name, jsonExt)
	if !ok {
		return Child{}, ErrNotFound
	}
	var c Child
	err := d.s.with(func(ss *session) error {
		id, ok := ss.Tree.FindShown(base, len(jsonExt))
		if !ok {
			return ErrNotFound
		}
		c = d.entry(ss.Tree.Node(id).Entry, cache.EntryStatsOf(d.s.v.cache, ss))
		return nil
	})
	return c, err
}

func (d *entriesDir) entry(e *sessions.Entry, stats cache.EntryStats) Child {
	return entryChild(d.s, entryFileName(e.ID), entryIno(d.ino, e), e, stats)
}

func (d *entriesDir) entryFiles() {}

// entryChild is the file of entry e in a folder, as listed or looked up
// with the session's stats at hand: the node it makes takes them for its
// first attributes, so that READDIRPLUS, which asks them of every name
// just listed, finds neither the session nor the entry again.
func entryChild(s sessionRef, name string, ino uint64, e *sessions.Entry, stats cache.EntryStats) Child {
	return Child{name, syscall.S_IFREG, ino, func() Node {
		f := newEntryFile(s, e.ID)
		f.listed, f.stat = e, stats.Of(e)
		return f
	}}
}

// entryIno numbers the file of entry e in a folder whose numbers start
// with base. The number includes the entry's offset, which tells apart two
// entries with one id (the later wins): an entry file's number changes
// with the line it shows, so the pages the kernel keeps of the earlier one
// are never served for it.
func entryIno(base names.Hash, e *sessions.Entry) uint64 {
	return base.With(e.ID).WithInt(e.Offset).Ino()
}

// entryFile is one entry, indented. An entry never changes once written,
// so the kernel may keep its pages.
type entryFile struct {
	inSession
	id string
	// listed is the entry as the folder that made the node saw it, with
	// its stat: the first attributes (see entryChild), then forgotten,
	// so that the node does not keep a version of the session alive.
	listed *sessions.Entry
	stat   cache.EntryStat
}

func newEntryFile(s sessionRef, id string) *entryFile {
	return &entryFile{inSession: inSession{s}, id: id}
}

func (f *entryFile) kept() {}

func (f *entryFile) content() ([]byte, time.Time, error) {
	return f.s.renderEntry(f.id, "entry\x00"+f.id, func(ss *session) []byte { return render.Indent(nil, ss.Tree.Node(f.id).Raw) }, nil)
}

// size counts the indented entry without making it: `ls -l entries/`
// renders nothing.
func (f *entryFile) size() (int64, time.Time, error) {
	var n int64
	var mt time.Time
	var err error
	if e, st := f.listed, f.stat; e != nil {
		f.listed, f.stat = nil, cache.EntryStat{}
		n, mt = st.Size(e), st.Mtime(e)
	} else {
		err = f.s.with(func(ss *session) error {
			node := ss.Tree.Node(f.id)
			if node == nil {
				return ErrNotFound
			}
			st := cache.EntryStatsOf(f.s.v.cache, ss).Of(node.Entry)
			n, mt = st.Size(node.Entry), st.Mtime(node.Entry)
			return nil
		})
	}
	if err == nil && mt.IsZero() {
		mt, err = f.s.activity()
	}
	return n, mt, err
}
