package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"time"
	"unsafe"

	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions/schema"
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
	// sig is the file's signature when it was read; racy tells that it
	// was read so soon after its last change that a rewrite of the same
	// size within the same clock tick would leave sig as it is: then sum
	// (of the consumed lines) and pendSum (of the bytes after them) are
	// checked against the file, as git checks racily clean files.
	sig          Sig
	racy         bool
	sum, pendSum uint32
	// unsummed tells that sum does not cover the consumed lines: only a
	// racy read's sums are ever checked, so a read that is not racy
	// takes none (a checksum of every byte read costs as much as reading
	// it), and a racy read after it sums the lines before it from the
	// file first.
	unsummed bool
	seq      int // parsed values so far, header included
	// v1 migration state
	usedIDs map[string]bool
	lastID  string
	rawByID map[int]*Entry // seq → entry, for firstKeptEntryIndex (v1 only)
	// pieces, when set, replaces piecesFor (for tests).
	pieces func(n int) int
	// longLine, when set, replaces MaxLine (for tests); skipped counts
	// the lines of that length or more left out.
	longLine int64
	skipped  int
	// read are the buffers the file was read into, sorted by address
	// (see FileOffset).
	read []readBuf
}

// readBuf is a buffer holding the file's bytes from offset off.
type readBuf struct {
	data []byte
	off  int64
}

// FileOffset tells where b, bytes of an entry (its Raw or a part of it),
// is in the file: entries are slices of the buffers the file was read
// into, unless they were made in memory (a migrated entry's line). It
// looks at no bytes: b is found among the buffers by address.
func (l *Log) FileOffset(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	p := addr(b)
	// The last buffer that starts at or before b.
	i := sort.Search(len(l.read), func(i int) bool { return addr(l.read[i].data) > p }) - 1
	if i < 0 {
		return 0, false
	}
	r := l.read[i]
	if p+uintptr(len(b)) > addr(r.data)+uintptr(len(r.data)) {
		return 0, false
	}
	return r.off + int64(p-addr(r.data)), true
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// maxReads bounds the buffers FileOffset looks among: a session read
// again after each of many appends has one per append, and entries of the
// later ones are then not found (as for a migrated entry).
const maxReads = 256

// keepRead records that data holds the file's bytes from offset off.
func (l *Log) keepRead(data []byte, off int64) {
	if len(data) == 0 || len(l.read) >= maxReads {
		return
	}
	p := addr(data)
	i := sort.Search(len(l.read), func(i int) bool { return addr(l.read[i].data) > p })
	l.read = slices.Insert(l.read, i, readBuf{data, off})
}

// Size is the file size at the last read.
func (l *Log) Size() int64 { return l.size }

// Sig is the file's signature at the last read.
func (l *Log) Sig() Sig { return l.sig }

// needsRefresh tells whether Refresh may find a change, given the file's
// signature now: when it differs from the last read's, or when that read
// was racy (so soon after a change that a rewrite of the same size in the
// same clock tick leaves the signature as it was; Refresh then compares
// sums). A caller that skips Refresh on an equal Sig misses such rewrites.
func (l *Log) needsRefresh(now Sig) bool { return now != l.sig || l.racy }

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
	f, fi, err := openRegular(l.Path, os.O_RDONLY)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sig := SigOf(fi)
	size := sig.Size
	fresh := l.Header == nil && l.seq == 0
	if !fresh && l.rewritten(f, sig) {
		*l = Log{Path: l.Path, pieces: l.pieces, longLine: l.longLine}
		reset = true
		fresh = true
	}
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
		*l = Log{Path: l.Path, pieces: l.pieces, longLine: l.longLine}
		reset = true
	}
	l.provisional = provNone
	if err := l.sumFor(f, sig); err != nil {
		return reset, err
	}
	// Lines pi cannot read are left out unread: the lines around them are
	// read and parsed as if they were one after the other.
	var long []longLine
	if size-l.consumed >= l.maxLine() {
		if long, err = findLong(f, l.consumed, size, l.maxLine(), l.sum); err != nil {
			return reset, err
		}
	}
	for _, ll := range long {
		if _, err := l.readConsume(f, ll.start, false); err != nil {
			return reset, err
		}
		if l.consumed != ll.start {
			// The file changed under the read: the next one looks again.
			l.size = l.consumed
			l.sig, l.racy = sig, true
			return reset, nil
		}
		if !ll.newline {
			// It ends the file, and may still grow.
			l.size, l.pendSum = ll.end, ll.lineSum
			l.sig, l.racy = sig, racy(sig)
			return reset, nil
		}
		l.consumed, l.sum, l.tail = ll.end, ll.sum, append(l.tail[:0], ll.tail...)
		l.skipped++
	}
	end, err := l.readConsume(f, size, true)
	if err != nil {
		return reset, err
	}
	l.size = end
	l.sig = sig
	l.racy = racy(sig)
	return reset, nil
}

// sumFor decides whether the read that starts, of a file whose signature
// is sig, keeps sums: only when it is racy (a read that is not racy now
// will not be racy later), and then the lines consumed before it are
// summed from the file if a read that was not racy left them unsummed.
// Those bytes are trusted as a growing file's are: their last bytes are
// checked (sameTail), not all of them.
func (l *Log) sumFor(f *os.File, sig Sig) error {
	if !racy(sig) {
		l.unsummed = true
		return nil
	}
	if l.unsummed {
		sum, err := checksum(f, 0, l.consumed)
		if err != nil {
			return err
		}
		l.sum, l.unsummed = sum, false
	}
	return nil
}

// maxLine is the length from which a line is skipped (MaxLine).
func (l *Log) maxLine() int64 {
	if l.longLine > 0 {
		return l.longLine
	}
	return MaxLine
}

// readConsume reads the file from the consumed offset to to, parses it and
// returns the end of what was read. final: the read ends the file, and a
// last line without a newline is parsed as pi parses it.
func (l *Log) readConsume(f *os.File, to int64, final bool) (int64, error) {
	from := l.consumed
	data := hugemem.Bytes(int(to-from), int(to-from))
	n, err := f.ReadAt(data, from)
	if err != nil && err != io.EOF {
		return 0, err
	}
	data = data[:n]
	if err := l.consume(data, final); err != nil {
		return 0, err
	}
	return from + int64(n), nil
}

// racyWindow is how long after a file's last change a read of it cannot
// trust timestamps alone: file systems keep them at a coarse clock (a
// jiffy, and up to 2 s on some).
const racyWindow = 2 * time.Second

func racy(s Sig) bool {
	now := time.Now().UnixNano()
	return now-s.Mtime < int64(racyWindow) || now-s.Ctime < int64(racyWindow)
}

// rewritten tells that what was read may have changed, not only grown:
// another file, a shorter one, one of the same size with other timestamps
// (a rewrite in place), other bytes before the consumed offset, or, when
// the last read was racy, other bytes anywhere.
func (l *Log) rewritten(f *os.File, sig Sig) bool {
	old := l.sig
	switch {
	case sig.Ino != old.Ino || sig.Dev != old.Dev || sig.Size < l.size:
		return true
	case sig.Size == l.size && (sig.Mtime != old.Mtime || sig.Ctime != old.Ctime):
		return true
	case !l.sameTail(f):
		return true
	case sig.Size == l.size && l.racy:
		if !l.sameSum(f) {
			return true
		}
		l.racy = racy(sig)
	}
	return false
}

// sameSum checks the file's bytes up to the size read against the sums
// taken when they were read.
func (l *Log) sameSum(f *os.File) bool {
	if l.unsummed {
		return false
	}
	sum, err := checksum(f, 0, l.consumed)
	if err != nil || sum != l.sum {
		return false
	}
	pend, err := checksum(f, l.consumed, l.size)
	return err == nil && pend == l.pendSum
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(f *os.File, from, to int64) (uint32, error) {
	var sum uint32
	buf := make([]byte, min(to-from, 1<<20))
	for from < to {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), to-from)], from)
		sum = crc32.Update(sum, castagnoli, buf[:n])
		from += int64(n)
		if err != nil && from < to {
			return 0, err
		}
	}
	return sum, nil
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
//
// The lines of a large chunk are parsed on every core, in pieces split at
// newlines; what depends on the lines before (numbering, the header,
// migration) is then done in file order, as for a small chunk.
func (l *Log) consume(data []byte, final bool) error {
	base := l.consumed
	l.keepRead(data, base)
	end := bytes.LastIndexByte(data, '\n') + 1
	start := 0
	// Until the header is found, any line may show that the file is no
	// session, which ends the parse: take them one at a time.
	for l.seq == 0 && start < end {
		nl := bytes.IndexByte(data[start:], '\n')
		if err := l.line(data[start:start+nl], base+int64(start), false); err != nil {
			return err
		}
		start += nl + 1
	}
	pieces := piecesFor
	if l.pieces != nil {
		pieces = l.pieces
	}
	summed := 0 // l.sum covers data[:summed]
	if n := pieces(end - start); n > 1 {
		// Summing the lines is one more task beside the pieces.
		sum := l.sum
		parts := parseLines(data[start:end], base+int64(start), n, func() {
			if !l.unsummed {
				sum = crc32.Update(sum, castagnoli, data[:end])
			}
		})
		l.sum, summed = sum, end
		for _, part := range parts {
			for _, e := range part {
				if err := l.take(e, false); err != nil {
					return err
				}
			}
		}
		start = end
	}
	for start < end {
		nl := bytes.IndexByte(data[start:], '\n')
		if err := l.line(data[start:start+nl], base+int64(start), false); err != nil {
			return err
		}
		start += nl + 1
	}
	l.consumed = base + int64(start)
	if !l.unsummed {
		l.sum = crc32.Update(l.sum, castagnoli, data[summed:start])
	}
	l.pendSum = crc32.Checksum(data[start:], castagnoli)
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

// parallelMin is the size of a chunk of lines from which consume parses it
// on every core; below it, the goroutines cost more than they save.
const parallelMin = 256 << 10

// piecesFor tells in how many pieces consume parses n bytes of lines: one
// (in sequence) for a small chunk, otherwise a few per core, so that a core
// slowed by other work does not hold the others up.
func piecesFor(n int) int {
	procs := runtime.GOMAXPROCS(0)
	if n < parallelMin || procs == 1 {
		return 1
	}
	return min(4*procs, n/(parallelMin/4))
}

// parseLines parses lines (which end in a newline) in about n pieces at
// once and returns the kept entries of each piece, in file order; off is
// the offset of lines in the file. The entries' Seq is left to take. also
// runs beside the pieces, first.
func parseLines(lines []byte, off int64, n int, also func()) [][]*Entry {
	cuts := []int{0}
	for k := 1; k < n; k++ {
		at := max(len(lines)*k/n, cuts[len(cuts)-1])
		nl := bytes.IndexByte(lines[at:], '\n')
		if nl < 0 || at+nl+1 >= len(lines) {
			break
		}
		cuts = append(cuts, at+nl+1)
	}
	cuts = append(cuts, len(lines))
	parts := make([][]*Entry, len(cuts)-1)
	par.Each(len(parts)+1, func(i int) {
		if i == 0 {
			also()
			return
		}
		i--
		piece, start := lines[:cuts[i+1]], cuts[i]
		for start < len(piece) {
			nl := bytes.IndexByte(piece[start:], '\n')
			if e, ok := parseLine(piece[start:start+nl], 0, off+int64(start)); ok {
				parts[i] = append(parts[i], e)
			}
			start += nl + 1
		}
	})
	return parts
}

func (l *Log) line(line []byte, off int64, last bool) error {
	e, ok := parseLine(line, l.seq, off)
	if !ok {
		return nil
	}
	return l.take(e, last)
}

// take places a parsed line that pi keeps: the header, a later header
// line, or an entry (migrated when the file is old).
func (l *Log) take(e *Entry, last bool) error {
	v := e.Raw
	if last {
		l.provisional = provOther
	}
	seq := l.seq
	e.Seq = seq
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
	if e.Type == schema.TypeSession {
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
		if e.Type == schema.TypeCompaction {
			if idx := e.Get("firstKeptEntryIndex"); jsjson.KindOf(idx) == jsjson.Number {
				n := jsjson.NumberValue(idx)
				if t, ok := l.rawByID[int(n)]; ok && float64(int(n)) == n && t.ID != "" {
					set["firstKeptEntryId"] = jsjson.Quote(nil, t.ID)
				}
				del = append(del, "firstKeptEntryIndex")
			}
		}
	}
	if v < 3 && e.Type == schema.TypeMessage && e.Role == schema.RoleHookMessage {
		e.Role = schema.RoleCustom
		msg := e.Message()
		set["message"] = rewriteObject(msg, map[string][]byte{"role": []byte(`"` + schema.RoleCustom + `"`)}, nil)
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
