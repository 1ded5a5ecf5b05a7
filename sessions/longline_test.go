package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// longSession is a session with a line of n bytes (a user message) between
// two short ones, and, when open, a long last line without a newline.
func longSession(n int, open bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	b.WriteString(`{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"before"}}` + "\n")
	head := `{"type":"message","id":"big","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"`
	tail := `"}}`
	b.WriteString(head + strings.Repeat("x", n-len(head)-len(tail)) + tail + "\n")
	b.WriteString(`{"type":"message","id":"b","parentId":"big","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"after"}}` + "\n")
	if open {
		b.WriteString(head + strings.Repeat("y", n))
	}
	return b.Bytes()
}

// held is what the log holds of the file: the bytes of its read buffers.
func held(l *Log) int {
	n := 0
	for _, r := range l.read {
		n += cap(r.data)
	}
	return n
}

// TestLongLineSkipped: a line too long for pi to read is left out, and the
// log never holds it: what it holds is the rest of the file. The lines
// after it are read as if it were not there, also as the file grows and
// when a long last line without a newline ends it.
func TestLongLineSkipped(t *testing.T) {
	const limit = 64 << 10
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := longSession(limit, false)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Log{Path: path, longLine: limit}
	if _, err := l.Refresh(); err != nil {
		t.Fatal(err)
	}
	ids := func() string {
		var s []string
		for _, e := range l.Entries {
			s = append(s, e.ID)
		}
		return strings.Join(s, " ")
	}
	if got := ids(); got != "a b" || l.skipped != 1 {
		t.Fatalf("entries %q, %d skipped; want a b, 1", got, l.skipped)
	}
	if h := held(l); h >= limit || h > len(data)-limit {
		t.Errorf("holds %d bytes of a %d-byte file whose long line is %d", h, len(data), limit)
	}
	// Offsets stay those of the file.
	if e := l.Entries[1]; e.Offset != int64(bytes.LastIndex(data, []byte(`{"type":"message","id":"b"`))) {
		t.Errorf("b at offset %d", e.Offset)
	}
	// A long line still being written at the end, then finished.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte(`{"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"` + strings.Repeat("z", limit)))
	if reset, err := l.Refresh(); err != nil || reset || ids() != "a b" || l.skipped != 1 {
		t.Fatalf("long last line: reset %v, %v, entries %q, %d skipped", reset, err, ids(), l.skipped)
	}
	f.Write([]byte("\"}}\n" + `{"type":"message","id":"d","parentId":"b","message":{"role":"user","content":"end"}}` + "\n"))
	f.Close()
	if _, err := l.Refresh(); err != nil || ids() != "a b d" {
		t.Fatalf("after the long line ends: %v, entries %q", err, ids())
	}
	if h := held(l); h >= limit {
		t.Errorf("holds %d bytes: a long line was read", h)
	}
	// Read again from scratch, and as a log that grew: the same.
	fresh := &Log{Path: path, longLine: limit}
	if _, err := fresh.Refresh(); err != nil || len(fresh.Entries) != 3 || fresh.skipped != 2 {
		t.Fatalf("fresh read: %v, %d entries, %d skipped", err, len(fresh.Entries), fresh.skipped)
	}
	// The sums the racy check compares are those of the file.
	fd, _ := os.Open(path)
	defer fd.Close()
	if !l.sameSum(fd) || !fresh.sameSum(fd) || !l.sameTail(fd) {
		t.Errorf("checksums of the file do not match what was read")
	}
}

// TestScanLongLine: Scan reads a line longer than its buffer once, in a
// buffer of its size, and skips unread one too long for pi.
func TestScanLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, longSession(1<<20, true), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max  int64
		want string
	}{{MaxLine, "a big b"}, {512 << 10, "a b"}} {
		var ids []string
		h, err := scan(path, nil, func(e *Entry) { ids = append(ids, e.ID) }, c.max)
		if err != nil || h == nil || strings.Join(ids, " ") != c.want {
			t.Errorf("limit %d: entries %q (%v), want %s", c.max, ids, err, c.want)
		}
	}
}

// TestScanNameLongLines: the name scan reads a line longer than its buffer
// only when it can name the session, and finds a long name.
func TestScanNameLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	long := strings.Repeat("n", 600<<10)
	data := append(longSession(1<<20, false),
		`{"type":"session_info","id":"i1","parentId":"b","name":"`+long+`"}`+"\n"+
			`{"type":"message","id":"m","parentId":"i1","message":{"role":"user","content":"session_info `+long+`"}}`+"\n"...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ns, err := scanName(path, nameScan{})
	if err != nil || ns.name != long || ns.upTo != int64(len(data)) {
		t.Fatalf("name of %d bytes, scanned to %d of %d (%v)", len(ns.name), ns.upTo, len(data), err)
	}
	// A long unfinished last line that may name it, then finished.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	defer f.Close()
	f.Write([]byte(`{"type":"session_info","id":"i2","parentId":"m","name":"` + long + `2"}`))
	ns, err = scanName(path, ns)
	if err != nil || ns.name != long+"2" || ns.complete != long || ns.upTo != int64(len(data)) {
		t.Fatalf("unfinished: name of %d bytes, complete %d, up to %d (%v)", len(ns.name), len(ns.complete), ns.upTo, err)
	}
}

// allocated is how many bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLongLineReadOnce counts the bytes each reader allocates for a
// session with a line of 16 MiB (one pi reads): the parse holds the file
// once; the usage scan and the name scan take the line once, in a buffer
// of its size, or not at all, beside their fixed buffers.
func TestLongLineReadOnce(t *testing.T) {
	const n = 16 << 20
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := longSession(n, false)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const fixed = 3 << 20 // buffers of a fixed size, and small allocations
	var l *Log
	if got := allocated(func() { l, _ = Open(path) }); got > uint64(len(data))+fixed || held(l) != len(data) {
		t.Errorf("parse: allocated %d bytes, holds %d, for a file of %d", got, held(l), len(data))
	}
	if got := allocated(func() { Scan(path, nil, func(*Entry) {}) }); got > n+fixed {
		t.Errorf("scan: allocated %d bytes for a line of %d", got, n)
	}
	if got := allocated(func() { scanName(path, nameScan{}) }); got > fixed {
		t.Errorf("name scan: allocated %d bytes for a line of %d that names nothing", got, n)
	}
}
