package view

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

const jsonExt = ".json"

// renderEntry is render for a view of one entry: its mtime is the entry's.
//
// A view of the branch at the file's last entry may be the same as the
// session's own (atLeaf, when not nil, names it, or gives ""): it is
// rendered once for both, which grep -r, reading
// branches/<tip>/context.json after context.json, meets in every session.
func (s sessionRef) renderEntry(id, key string, make func(*session) []byte, atLeaf func(*session) string) ([]byte, time.Time, error) {
	var data []byte
	var mt time.Time
	err := s.with(func(ss *session) error {
		n := ss.Tree.Node(id)
		if n == nil {
			return ErrNotFound
		}
		if leaf := ss.Tree.Leaf(); atLeaf != nil && leaf == n.Entry {
			if k := atLeaf(ss); k != "" {
				key = k
			}
		}
		data = cache.Rendered(s.v.cache, ss, key, cache.BytesSize, func() []byte { return make(ss) })
		mt = entryMtime(n.Entry)
		return nil
	})
	if err != nil {
		return nil, mt, err
	}
	if mt.IsZero() {
		mt, err = s.activity()
	}
	return data, mt, err
}

// renderEntrySize is renderSize for a view of one entry (see renderEntry):
// its mtime is the entry's.
func (s sessionRef) renderEntrySize(id, key string, count func(*session) int64, atLeaf func(*session) string) (int64, time.Time, error) {
	var n int64
	var mt time.Time
	err := s.with(func(ss *session) error {
		node := ss.Tree.Node(id)
		if node == nil {
			return ErrNotFound
		}
		if ss.Tree.Leaf() == node.Entry && atLeaf != nil {
			if k := atLeaf(ss); k != "" {
				key = k
			}
		}
		n, mt = cache.SizeOf(ss, key, count), entryMtime(node.Entry)
		return nil
	})
	if err != nil {
		return 0, mt, err
	}
	if mt.IsZero() {
		mt, err = s.activity()
	}
	return n, mt, err
}

// eachID calls fn for the id of every entry that has one, until it returns
// true.
func eachID(t *tree.Tree) func(fn func(string) bool) {
	return func(fn func(string) bool) {
		for _, e := range t.Entries() {
			if e.ID != "" && fn(e.ID) {
				return
			}
		}
	}
}

// findID resolves a name spelled with room bytes left to an entry id.
func findID(t *tree.Tree, name string, room int) (string, bool) {
	return names.Match(name, room, func(id string) bool { return t.Node(id) != nil }, eachID(t))
}

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
		stats := entryStatsOf(d.s.v, ss)
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
		id, ok := findID(ss.Tree, base, len(jsonExt))
		if !ok {
			return ErrNotFound
		}
		c = d.entry(ss.Tree.Node(id).Entry, entryStatsOf(d.s.v, ss))
		return nil
	})
	return c, err
}

func (d *entriesDir) entry(e *sessions.Entry, stats entryStats) Child {
	return entryChild(d.s, entryFileName(e.ID), entryIno(d.ino, e), e, stats)
}

// entryChild is the file of entry e in a folder, as listed or looked up
// with the session's stats at hand: the node it makes takes them for its
// first attributes, so that READDIRPLUS, which asks them of every name
// just listed, finds neither the session nor the entry again.
func entryChild(s sessionRef, name string, ino uint64, e *sessions.Entry, stats entryStats) Child {
	return Child{name, syscall.S_IFREG, ino, func() Node {
		f := newEntryFile(s, e.ID)
		f.listed, f.stat = e, stats.of(e)
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
	stat   *entryStat
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
		f.listed, f.stat = nil, nil
		n, mt = st.size(e), st.mtime(e)
	} else {
		err = f.s.with(func(ss *session) error {
			node := ss.Tree.Node(f.id)
			if node == nil {
				return ErrNotFound
			}
			st := entryStatsOf(f.s.v, ss).of(node.Entry)
			n, mt = st.size(node.Entry), st.mtime(node.Entry)
			return nil
		})
	}
	if err == nil && mt.IsZero() {
		mt, err = f.s.activity()
	}
	return n, mt, err
}

// entryStats is what stat shows of the entry files of one version of a
// session, by the entries' Seq, counted when first asked: an entry has a
// file in entries/, in every branches/<id>/ whose path holds it and in
// tree/, and `ls -l` of each counts its size and reads its timestamp once.
type entryStats []entryStat

// entryStat is an entry file's size and mtime (UnixNano); 0 for what is
// not counted yet, noMtime for an entry without a valid timestamp. A node
// made by a listing reads it without the session's lock (see entryChild):
// its fields are atomic, and two that count at once count alike.
type entryStat struct{ sizeN, mtimeN atomic.Int64 }

const noMtime = math.MinInt64

func entryStatsOf(v *View, ss *session) entryStats {
	return cache.Rendered(v.cache, ss, "entry stats", func(t entryStats) int64 { return int64(len(t)) * int64(unsafe.Sizeof(entryStat{})) },
		func() entryStats {
			n := 0
			if es := ss.Tree.Entries(); len(es) > 0 {
				n = es[len(es)-1].Seq + 1
			}
			return make(entryStats, n)
		})
}

// of is e's place in the table (nil when it has none, which counts
// every time).
func (t entryStats) of(e *sessions.Entry) *entryStat {
	if e.Seq < 0 || e.Seq >= len(t) {
		return nil
	}
	return &t[e.Seq]
}

// size is the size of e's file: e indented.
func (s *entryStat) size(e *sessions.Entry) int64 {
	if s == nil {
		return int64(render.IndentSize(e.Raw))
	}
	n := s.sizeN.Load()
	if n == 0 {
		n = int64(render.IndentSize(e.Raw))
		s.sizeN.Store(n)
	}
	return n
}

// mtime is the mtime of e's file: its timestamp (zero when not valid).
func (s *entryStat) mtime(e *sessions.Entry) time.Time {
	if s == nil {
		return entryMtime(e)
	}
	mt := s.mtimeN.Load()
	if mt == 0 {
		mt = noMtime
		if t := entryMtime(e); !t.IsZero() {
			mt = t.UnixNano()
		}
		s.mtimeN.Store(mt)
	}
	if mt == noMtime {
		return time.Time{}
	}
	return time.Unix(0, mt)
}

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

// pathFileName names an entry by its position on the root→entry path, its
// kind and its id: NNNN-<kind>-<id>.json. A kind over 32 bytes is hashed
// like a long id.
func pathFileName(pos int, e *sessions.Entry) string {
	var buf [20]byte
	num := strconv.AppendInt(buf[:0], int64(pos), 10)
	pad := max(0, 4-len(num))
	kind := names.EncodeIn(e.Kind(), names.MaxLen-32)
	room := pad + len(num) + 1 + len(kind) + 1 + len(jsonExt)
	id := names.EncodeIn(e.ID, room)
	var b strings.Builder
	b.Grow(room + len(id))
	b.WriteString("0000"[:pad])
	b.Write(num)
	b.WriteByte('-')
	b.WriteString(kind)
	b.WriteByte('-')
	b.WriteString(id)
	b.WriteString(jsonExt)
	return b.String()
}

// namePos reads the position at the start of a path file name.
func namePos(name string) (int, bool) {
	i := strings.IndexByte(name, '-')
	if i < 4 {
		return 0, false
	}
	n, err := strconv.Atoi(name[:i])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
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

// pathTo is the root→entry path, computed once per version of the session:
// a listing and the lookups of its names share it.
func pathTo(v *View, ss *session, id string) []*sessions.Entry {
	return cache.Rendered(v.cache, ss, "path\x00"+id, func(p []*sessions.Entry) int64 { return 8 * int64(len(p)) },
		func() []*sessions.Entry { return ss.Tree.PathTo(id) })
}

func (d *branchDir) list() ([]Child, error) {
	out := []Child{d.context(), d.transcript(), d.html(), d.export(), d.images()}
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

func (d *branchDir) entry(pos int, e *sessions.Entry, stats entryStats) Child {
	return entryChild(d.s, pathFileName(pos, e), entryIno(d.ino.With(entriesName), e), e, stats)
}

// segmentDir is tree/ (first == "") or one segment in it: a run of entries
// each with exactly one child, named by its first entry, holding its
// entries' files and one folder per segment that starts where it forks.
type segmentDir struct {
	inSession
	first string
	ino   names.Hash // what the numbers in tree/ start with
}

func newSegmentDir(s sessionRef, first string) *segmentDir {
	return &segmentDir{inSession{s}, first, s.inoBase().With(treeName)}
}

// segInfo is one folder of tree/: its segment's nodes, the position of the
// first on its root path, and the segments that start below it.
type segInfo struct {
	nodes []*tree.Node
	pos   int
	next  []*tree.Node
}

// segmentTable is tree/ for one version of a session, made once from
// tree.Segments: by the first entry's id, "" for tree/ itself.
func segmentTable(v *View, ss *session) map[string]*segInfo {
	return cache.Rendered(v.cache, ss, "segments", func(m map[string]*segInfo) int64 { return 96 * int64(len(m)+ss.Tree.Len()) },
		func() map[string]*segInfo {
			m := map[string]*segInfo{}
			top := &segInfo{}
			m[""] = top
			type job struct {
				segs []*tree.Segment
				pos  int
				into *segInfo
			}
			stack := []job{{ss.Tree.Segments(), 1, top}}
			for len(stack) > 0 {
				j := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, sg := range j.segs {
					info := &segInfo{nodes: sg.Nodes, pos: j.pos}
					j.into.next = append(j.into.next, sg.Nodes[0])
					m[sg.ID()] = info
					stack = append(stack, job{sg.Children, j.pos + len(sg.Nodes), info})
				}
			}
			return m
		})
}

// segment returns the segment's entries, the position of the first on its
// root path, and the segments that start below it (the roots for tree/).
func (d *segmentDir) segment(v *View, ss *session) (nodes []*tree.Node, pos int, next []*tree.Node, err error) {
	info := segmentTable(v, ss)[d.first]
	if info == nil {
		return nil, 0, nil, ErrNotFound
	}
	return info.nodes, info.pos, info.next, nil
}

func (d *segmentDir) mtime() (time.Time, error) {
	if d.first == "" {
		return d.s.activity()
	}
	var mt time.Time
	err := d.s.with(func(ss *session) error {
		nodes, _, _, err := d.segment(d.s.v, ss)
		if err != nil {
			return err
		}
		stats := entryStatsOf(d.s.v, ss)
		for _, n := range nodes {
			if t := stats.of(n.Entry).mtime(n.Entry); t.After(mt) {
				mt = t
			}
		}
		return nil
	})
	if err == nil && mt.IsZero() {
		return d.s.activity()
	}
	return mt, err
}

func (d *segmentDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		nodes, pos, next, err := d.segment(d.s.v, ss)
		if err != nil {
			return err
		}
		stats := entryStatsOf(d.s.v, ss)
		for i, n := range nodes {
			out = append(out, d.entry(pos+i, n.Entry, stats))
		}
		for _, n := range next {
			out = append(out, d.sub(n.ID))
		}
		return nil
	})
	return out, err
}

func (d *segmentDir) lookup(name string) (Child, error) {
	var c Child
	err := d.s.with(func(ss *session) error {
		nodes, pos, next, err := d.segment(d.s.v, ss)
		if err != nil {
			return err
		}
		if p, ok := namePos(name); ok && strings.HasSuffix(name, jsonExt) {
			if i := p - pos; i >= 0 && i < len(nodes) && pathFileName(p, nodes[i].Entry) == name {
				c = d.entry(p, nodes[i].Entry, entryStatsOf(d.s.v, ss))
				return nil
			}
		}
		for _, n := range next {
			if names.Encode(n.ID) == name {
				c = d.sub(n.ID)
				return nil
			}
		}
		return ErrNotFound
	})
	return c, err
}

func (d *segmentDir) entry(pos int, e *sessions.Entry, stats entryStats) Child {
	return entryChild(d.s, pathFileName(pos, e), entryIno(d.ino.With(entriesName), e), e, stats)
}

func (d *segmentDir) sub(id string) Child {
	s := d.s
	return Child{names.Encode(id), syscall.S_IFDIR, d.ino.With(id).Ino(), func() Node { return newSegmentDir(s, id) }}
}

// labelsDir is labels/: one symlink per label to the labelled entry. When
// two entries carry the same label, the one labelled last has the name.
type labelsDir struct{ inSession }

var (
	_ symlinker = (*labelsDir)(nil)
	_ unlinker  = (*labelsDir)(nil)
)

func newLabelsDir(s sessionRef) *labelsDir { return &labelsDir{inSession{s}} }

func (d *labelsDir) mtime() (time.Time, error) { return d.s.activity() }

// labels returns the labels by name, the newest of a text first.
func labels(t *tree.Tree) (spelled []string, texts map[string]string) {
	texts = map[string]string{}
	for _, id := range t.LabelsNewestFirst() {
		l, _ := t.Label(id)
		name := names.Encode(l.Text)
		if _, ok := texts[name]; !ok {
			texts[name] = l.Text
			spelled = append(spelled, name)
		}
	}
	return spelled, texts
}

func (d *labelsDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		names, texts := labels(ss.Tree)
		for _, n := range names {
			out = append(out, d.label(ss, n, texts[n]))
		}
		return nil
	})
	return out, err
}

func (d *labelsDir) lookup(name string) (Child, error) {
	var c Child
	err := d.s.with(func(ss *session) error {
		_, texts := labels(ss.Tree)
		text, ok := texts[name]
		if !ok {
			return ErrNotFound
		}
		c = d.label(ss, name, text)
		return nil
	})
	return c, err
}

// label is the link of a label text. Its inode number includes the entry
// it points at, so that a label moved to another entry is a new link to
// the kernel, which keeps link targets.
func (d *labelsDir) label(ss *session, name, text string) Child {
	s := d.s
	to, _ := ss.Tree.LabelTarget(text)
	return Child{name, syscall.S_IFLNK, s.ino(labelsName, text, to), func() Node { return newLabelLink(s, text) }}
}

// Symlink labels an entry: `ln -s ID labels/NAME` (or a path ending in
// ID.json) gives the entry the label NAME spells (pi's /label).
func (d *labelsDir) symlink(target, name string, c Caller) (Child, error) {
	text, ok := names.Decode(name)
	if !ok {
		err := refuse(ErrInvalid, `labels: %q does not spell a label (%%, / and NUL are written %%25, %%2F and %%00); rename the link`, name)
		d.s.refused(err)
		return Child{}, err
	}
	if err := d.s.mayChange(c); err != nil {
		d.s.refused(err)
		return Child{}, err
	}
	err := d.s.change(func(ss *session, b *tree.Builder) error {
		id, ok := resolveRef(ss.Tree, b, target)
		if !ok {
			return refuse(ErrNotFound, `labels: %s: no entry %q; link to an entry id (ls entries/) or a path ending in ID.json`, name, target)
		}
		_, err := b.Label(id, text)
		return err
	})
	if err != nil {
		d.s.refused(err)
		return Child{}, err
	}
	return d.lookup(name)
}

// Unlink clears a label: `rm labels/NAME` clears it on every entry that
// carries it, so that the name goes away.
func (d *labelsDir) unlink(name string, c Caller) error {
	if d.s.v.removals.removing(c, d.s) {
		err := refuse(ErrReadOnly, `labels: %s: not cleared, as this process is removing the session folder (rm -r); the session is never removed through the mount, and a label is cleared with rm labels/NAME alone`, name)
		d.s.refused(err)
		return err
	}
	if err := d.s.mayChange(c); err != nil {
		d.s.refused(err)
		return err
	}
	err := d.s.change(func(ss *session, b *tree.Builder) error {
		_, texts := labels(ss.Tree)
		text, ok := texts[name]
		if !ok {
			return refuse(ErrNotFound, `labels: no label %q; ls labels/ shows the labels`, name)
		}
		for _, id := range ss.Tree.LabelOrder() {
			if l, _ := ss.Tree.Label(id); l.Text == text {
				if _, err := b.Label(id, ""); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		d.s.refused(err)
	}
	return err
}

// labelLink is labels/<label> -> ../entries/<id>.json.
type labelLink struct {
	inSession
	text string
}

func newLabelLink(s sessionRef, text string) *labelLink { return &labelLink{inSession{s}, text} }

func (l *labelLink) target() (string, time.Time, error) {
	var target string
	var mt time.Time
	err := l.s.with(func(ss *session) error {
		id, ok := ss.Tree.LabelTarget(l.text)
		if !ok {
			return ErrNotFound
		}
		lab, _ := ss.Tree.Label(id)
		target = "../" + entriesName + "/" + entryFileName(id)
		mt = tree.DateTime(lab.Timestamp)
		return nil
	})
	if err == nil && mt.IsZero() {
		mt, err = l.s.activity()
	}
	return target, mt, err
}
