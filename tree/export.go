package tree

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
)

// Export is the session ending at entry leaf as pi's /export x.jsonl
// writes it (serializeSessionBranch in session-export.js): a version 3
// header with the session's id, the timestamp ts and cwd, then the entries
// of the path from the root to leaf, each as pi holds it (JSON.stringify of
// the parsed, migrated line) with its parentId set to the entry before it
// (null for the first): an existing parentId keeps its place, a missing one
// goes last. leaf "" gives the header alone, as pi exports a session that
// stands before its first entry.
//
// pi makes the header's timestamp fresh at each export; ts is the caller's
// (ExportTimestamp gives a stable one). cwd is what pi gives the opened
// session: sessions.ResolvePath of the header's cwd.
//
// What an entry's line is, as JSON.stringify writes it, is found once per
// entry and kept with the tree; exports after the first are then copies,
// and ExportSize adds up lengths.
func (t *Tree) Export(leaf, ts, cwd string) ([]byte, error) {
	var b bytes.Buffer
	if _, err := t.WriteExport(&b, leaf, ts, cwd); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ExportSize is the length of Export, found without making it: once each
// entry on the path is known (see Export), in time linear in the path's
// length.
func (t *Tree) ExportSize(leaf, ts, cwd string) (int64, error) {
	path, err := t.exportPath(leaf)
	if err != nil {
		return 0, err
	}
	n := int64(len(t.exportHeader(ts, cwd)))
	t.reserveExported(path)
	var quoted []byte
	parent := ""
	for _, e := range path {
		quoted = parentValue(quoted[:0], parent)
		n += t.exportLine(e).size(len(quoted)) + 1
		parent = e.ID
	}
	return n, nil
}

// WriteExport writes Export to w one line at a time and returns its
// length.
func (t *Tree) WriteExport(w io.Writer, leaf, ts, cwd string) (int64, error) {
	path, err := t.exportPath(leaf)
	if err != nil {
		return 0, err
	}
	m, err := w.Write(t.exportHeader(ts, cwd))
	n := int64(m)
	t.reserveExported(path)
	var line []byte
	parent := ""
	for _, e := range path {
		if err != nil {
			return n, err
		}
		line = append(t.exportLine(e).rechain(line[:0], e.Raw, parent), '\n')
		m, err = w.Write(line)
		n += int64(m)
		parent = e.ID
	}
	return n, err
}

func (t *Tree) exportPath(leaf string) ([]*sessions.Entry, error) {
	if leaf == "" {
		return nil, nil
	}
	path := t.PathTo(leaf)
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, leaf)
	}
	return path, nil
}

// exportHeader is the export's header line, with its newline.
func (t *Tree) exportHeader(ts, cwd string) []byte {
	id := ""
	if t.Header != nil {
		id = t.Header.ID
	}
	return append(sessions.HeaderLine(id, ts, cwd, ""), '\n')
}

// exportLine is an entry as JSON.stringify writes it: canon, or the
// entry's Raw itself when that is how it is written already (pi wrote the
// line), and where the value of its parentId member is in it (at -1 when
// it has none).
type exportLine struct {
	canon   []byte
	at, end int
	length  int
}

// reserveExported makes room for what an export learns of the entries,
// by their Seq (a table grown an entry at a time would be copied again
// and again), and learns it of path's entries not known yet: on every
// core, when they are many (the first export or `ls -l` of a branch of a
// large session reads each of its lines whole).
func (t *Tree) reserveExported(path []*sessions.Entry) {
	if len(path) == 0 || len(t.entries) == 0 {
		return
	}
	// The entries are in file order: the last has the largest Seq.
	if n := t.entries[len(t.entries)-1].Seq + 1; n > len(t.exported) {
		t.exported = append(t.exported, make([]exportLine, n-len(t.exported))...)
	}
	var todo []*sessions.Entry
	size := 0
	for _, e := range path {
		if e.Seq >= 0 && t.exported[e.Seq].length == 0 {
			todo = append(todo, e)
			size += len(e.Raw)
		}
	}
	if size < exportParBytes {
		return
	}
	bounds := par.Ranges(len(todo), runtime.GOMAXPROCS(0)*4, func(i int) int { return len(todo[i].Raw) })
	par.Each(len(bounds)-1, func(k int) {
		for _, e := range todo[bounds[k]:bounds[k+1]] {
			t.exported[e.Seq] = lineOf(e) // each Seq is written by one call
		}
	})
}

// exportParBytes is how much of the entries' lines an export learns of
// on every core rather than on one.
const exportParBytes = 1 << 20

// exportLine finds an entry's line, once.
func (t *Tree) exportLine(e *sessions.Entry) exportLine {
	if e.Seq >= 0 && e.Seq < len(t.exported) && t.exported[e.Seq].length > 0 {
		return t.exported[e.Seq]
	}
	l := lineOf(e)
	if e.Seq >= 0 {
		if e.Seq >= len(t.exported) {
			t.exported = append(t.exported, make([]exportLine, e.Seq+1-len(t.exported))...)
		}
		t.exported[e.Seq] = l
	}
	return l
}

// lineOf finds an entry's line.
func lineOf(e *sessions.Entry) exportLine {
	// pi wrote most lines as JSON.stringify does: those are their own
	// canonical form, told by a scan, with no copy.
	canon := e.Raw
	l := exportLine{at: -1, end: -1}
	if !jsjson.IsCanonical(e.Raw) {
		canon = jsjson.AppendCanonical(nil, e.Raw)
		if !bytes.Equal(canon, e.Raw) {
			l.canon = canon
		}
	}
	l.length = len(canon)
	jsjson.Members(canon, func(k, v []byte) bool {
		if jsjson.KeyIs(k, "parentId") {
			// v is a slice of canon: its offset is what its capacity lacks.
			l.at = cap(canon) - cap(v)
			l.end = l.at + len(v)
			return false
		}
		return true
	})
	return l
}

// size is the line's length once its parentId is a value of n bytes.
func (l exportLine) size(n int) int64 {
	switch {
	case l.at >= 0:
		return int64(l.length - (l.end - l.at) + n)
	case l.length <= 2: // {}
		return int64(len(`{"parentId":}`) + n)
	}
	return int64(l.length + len(`,"parentId":`) + n)
}

// rechain appends JSON.stringify({...entry, parentId}) to dst, parentId
// being the string parent ("" for null): a parentId member takes the new
// value in its place, else it is added last. raw is the entry's Raw.
func (l exportLine) rechain(dst, raw []byte, parent string) []byte {
	line := l.canon
	if line == nil {
		line = raw
	}
	switch {
	case l.at >= 0:
		dst = append(dst, line[:l.at]...)
		dst = parentValue(dst, parent)
		return append(dst, line[l.end:]...)
	case len(line) <= 2: // {}
		return append(parentValue(append(dst, `{"parentId":`...), parent), '}')
	default:
		dst = append(dst, line[:len(line)-1]...)
		return append(parentValue(append(dst, `,"parentId":`...), parent), '}')
	}
}

// parentValue appends the JSON value of parentId: the string parent, or
// null for "".
func parentValue(dst []byte, parent string) []byte {
	if parent == "" {
		return append(dst, "null"...)
	}
	return jsjson.Quote(dst, parent)
}

// ExportTimestamp is the header timestamp pifs gives the export ending at
// leaf, so that it reads the same every time: the time of leaf (as
// toISOString writes it), else the session header's, else the epoch.
func (t *Tree) ExportTimestamp(leaf string) string {
	ms := math.NaN()
	if n := t.byID[leaf]; n != nil {
		ms = n.Time
	}
	if math.IsNaN(ms) && t.Header != nil && t.Header.Timestamp != nil {
		ms = jsjson.DateValue(t.Header.Timestamp)
	}
	if math.IsNaN(ms) {
		ms = 0
	}
	return jsjson.FormatISO(ms)
}
