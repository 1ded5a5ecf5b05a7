package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/pifs/pifs/internal/jsjson"
)

// CurrentVersion is the session format version pi 1.6 writes.
const CurrentVersion = 3

// ErrNotSession is returned for a file whose first parsed line is not a
// session header.
var ErrNotSession = errors.New("not a pi session: first line is not a session header")

// Log is one session file, parsed as pi parses it and kept up to date as the
// file grows. It is not safe for concurrent use.
type Log struct {
	Path   string
	Header *Header
	// Entries are the file's entries after the header, in file order, as pi's
	// getEntries() returns them (later header lines are left out).
	Entries []*Entry
	// Migrated tells that the file is version 1 or 2 and was migrated in
	// memory (ids assigned, roles renamed) as pi migrates it.
	Migrated bool

	size     int64 // file size at the last read
	consumed int64 // offset just past the last newline read
	tail     []byte
	// provisional tells what the final line without a newline, which may
	// still grow, was parsed into: nothing, an entry, or something else.
	provisional provisional
	ino, dev    uint64
	seq         int // parsed values so far, header included
	// v1 migration state
	usedIDs map[string]bool
	lastID  string
	rawByID map[int]*Entry // seq → entry, for firstKeptEntryIndex (v1 only)
}

// Size is the file size at the last read.
func (l *Log) Size() int64 { return l.size }

// Open reads and parses the whole file.
func Open(path string) (*Log, error) {
	l := &Log{Path: path}
	if _, err := l.Refresh(); err != nil {
		return nil, err
	}
	if l.Header == nil {
		return nil, ErrNotSession
	}
	return l, nil
}

// Parse parses session bytes held in memory (for tests and fuzzing).
func Parse(data []byte) (*Log, error) {
	l := &Log{}
	if err := l.consume(data, true); err != nil {
		return nil, err
	}
	l.size = int64(len(data))
	return l, nil
}

// Refresh brings the log up to date with the file. It reads only the bytes
// appended since the last read; when the file shrank or was replaced, it
// parses it again. reset tells that earlier entries may have changed (the
// caller must rebuild what it derived from them); otherwise the new entries
// are those past the previous length of Entries.
func (l *Log) Refresh() (reset bool, err error) {
	f, err := os.Open(l.Path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	var ino, dev uint64
	if st != nil {
		ino, dev = st.Ino, uint64(st.Dev)
	}
	size := fi.Size()
	fresh := l.Header == nil && l.seq == 0
	if !fresh && (ino != l.ino || dev != l.dev || size < l.size || !l.sameTail(f)) {
		*l = Log{Path: l.Path}
		reset = true
		fresh = true
	}
	l.ino, l.dev = ino, dev
	if !fresh && size == l.size {
		return false, nil
	}
	switch {
	case l.provisional == provEntry && !l.Migrated:
		// The unterminated last line grew: parse it again with the rest.
		l.Entries = l.Entries[:len(l.Entries)-1]
		l.seq--
		reset = true
	case l.provisional == provOther:
		l.seq--
	case l.provisional != provNone:
		*l = Log{Path: l.Path, ino: ino, dev: dev}
		reset = true
	}
	l.provisional = provNone
	startConsumed := l.consumed
	data := make([]byte, size-l.consumed)
	n, err := f.ReadAt(data, l.consumed)
	if err != nil && err != io.EOF {
		return reset, err
	}
	data = data[:n]
	if err := l.consume(data, true); err != nil {
		return reset, err
	}
	l.size = startConsumed + int64(len(data))
	return reset, nil
}

// sameTail checks that the bytes just before the consumed offset are still
// those that were read, to catch a file rewritten in place.
func (l *Log) sameTail(f *os.File) bool {
	if len(l.tail) == 0 {
		return true
	}
	buf := make([]byte, len(l.tail))
	if _, err := f.ReadAt(buf, l.consumed-int64(len(l.tail))); err != nil {
		return false
	}
	return bytes.Equal(buf, l.tail)
}

// consume parses data, which starts at offset l.consumed. Complete lines are
// consumed; a final line without newline is parsed provisionally when it is
// valid (pi reads it), and otherwise held back until it is complete.
func (l *Log) consume(data []byte, final bool) error {
	base := l.consumed
	start := 0
	for {
		nl := bytes.IndexByte(data[start:], '\n')
		if nl < 0 {
			break
		}
		if err := l.line(data[start:start+nl], base+int64(start), false); err != nil {
			return err
		}
		start += nl + 1
	}
	l.consumed = base + int64(start)
	if start > 0 {
		t := data[max(0, start-32):start]
		l.tail = append(l.tail[:0], t...)
	}
	if final && start < len(data) {
		if err := l.line(data[start:], base+int64(start), true); err != nil {
			return err
		}
	}
	return nil
}

func (l *Log) line(line []byte, off int64, last bool) error {
	e, ok := parseLine(line, l.seq, off)
	if !ok {
		return nil
	}
	v := e.Raw
	if last {
		l.provisional = provOther
	}
	seq := l.seq
	l.seq++
	if seq == 0 {
		h, ok := parseHeader(v)
		if !ok {
			return ErrNotSession
		}
		l.Header = h
		if last {
			l.provisional = provHeader
		}
		if h.Version < CurrentVersion {
			l.Migrated = true
		}
		return nil
	}
	if e.Type == "session" {
		// pi keeps later header lines in the file but never as entries.
		return nil
	}
	if l.Migrated {
		l.migrate(e)
	}
	l.Entries = append(l.Entries, e)
	if last {
		l.provisional = provEntry
	}
	return nil
}

type provisional uint8

const (
	provNone provisional = iota
	provEntry
	provHeader
	provOther
)

// migrate applies pi's v1→v2 and v2→v3 migrations to one entry. Where pi
// draws random ids, pifs derives them from the session id and the entry's
// position, so that every read of the same bytes shows the same ids.
func (l *Log) migrate(e *Entry) {
	if !e.Object {
		return // pi throws on these (it cannot set an id on a primitive)
	}
	v := l.Header.Version
	set := map[string][]byte{}
	var del []string
	if v < 2 {
		if l.usedIDs == nil {
			l.usedIDs = map[string]bool{}
			l.rawByID = map[int]*Entry{}
		}
		id := l.deriveID(e.Seq)
		set["id"] = jsjson.Quote(nil, id)
		if l.lastID == "" {
			set["parentId"] = []byte("null")
		} else {
			set["parentId"] = jsjson.Quote(nil, l.lastID)
		}
		e.ParentID = l.lastID
		e.ID = id
		l.lastID = id
		l.rawByID[e.Seq] = e
		if e.Type == "compaction" {
			if idx := e.Get("firstKeptEntryIndex"); jsjson.KindOf(idx) == jsjson.Number {
				n := jsjson.NumberValue(idx)
				if t, ok := l.rawByID[int(n)]; ok && float64(int(n)) == n && t.ID != "" {
					set["firstKeptEntryId"] = jsjson.Quote(nil, t.ID)
				}
				del = append(del, "firstKeptEntryIndex")
			}
		}
	}
	if v < 3 && e.Type == "message" && e.Role == "hookMessage" {
		e.Role = "custom"
		msg := e.Message()
		set["message"] = rewriteObject(msg, map[string][]byte{"role": []byte(`"custom"`)}, nil)
	}
	e.Raw = rewriteObject(e.Raw, set, del)
	// Locate the fields again in the rewritten bytes.
	ne, _ := parseLine(e.Raw, e.Seq, e.Offset)
	*e = *ne
}

func (l *Log) deriveID(seq int) string {
	for n := 0; ; n++ {
		sum := sha256.Sum256([]byte(l.Header.ID + "\x00" + strconv.Itoa(seq) + "\x00" + strconv.Itoa(n)))
		id := hex.EncodeToString(sum[:4])
		if !l.usedIDs[id] {
			l.usedIDs[id] = true
			return id
		}
	}
}

// rewriteObject returns JSON.stringify of obj after setting and deleting
// members as JavaScript assignments would (existing keys keep their place,
// new ones go last).
func rewriteObject(obj []byte, set map[string][]byte, del []string) []byte {
	keys, vals := jsjson.ObjectMembers(obj)
	var b jsjson.Builder
	done := map[string]bool{}
	for i, k := range keys {
		if contains(del, k) {
			continue
		}
		if nv, ok := set[k]; ok {
			b.Raw(k, jsjson.AppendCanonical(nil, nv))
			done[k] = true
			continue
		}
		b.Raw(k, jsjson.AppendCanonical(nil, vals[i]))
	}
	for _, k := range []string{"version", "id", "parentId", "firstKeptEntryId", "message"} {
		if nv, ok := set[k]; ok && !done[k] {
			b.Raw(k, jsjson.AppendCanonical(nil, nv))
		}
	}
	return b.Bytes()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String describes the log for debugging.
func (l *Log) String() string {
	return fmt.Sprintf("%s: %d entries, %d bytes", l.Path, len(l.Entries), l.size)
}
