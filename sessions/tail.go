package sessions

import (
	"bytes"
	"io"
	"math"
	"sync"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions/schema"
)

// Tail is what the end of a session file tells without parsing the rest:
// where the session stands and when it was last active.
type Tail struct {
	// Activity is the time (ms since the epoch) of the last entry with a
	// valid timestamp; HasActivity is false when none is found within the
	// last few MiB.
	Activity    float64
	HasActivity bool
	// Leaf is the id the session stands at, as tree.Tree.LeafID gives it:
	// the last entry's id, or for a pifs leaf record the entry it moved
	// to. "" when there is none. LeafKnown is false when the tail cannot
	// tell (a version 1 or 2 file, whose ids are assigned on parse, or a
	// last entry beyond the scanned part): then the session must be parsed.
	Leaf      string
	LeafKnown bool
}

// tailScanLimit bounds how much of a file's end is read for its tail.
const tailScanLimit = 4 << 20

// leafRecordType is tree.LeafRecordType (tree imports this package).
const leafRecordType = "pifs.leaf"

// ReadTail reads a session file from its end: the last entry (for the leaf)
// and the last valid timestamp (for the activity). version is the header's.
func ReadTail(path string, version float64) (Tail, error) {
	f, st, err := openFd(path)
	if err != nil {
		return Tail{}, err
	}
	defer f.Close()
	return readTail(f, st.Size, version)
}

func readTail(f io.ReaderAt, size int64, version float64) (Tail, error) {
	var t Tail
	leafDone := false
	if version < CurrentVersion {
		leafDone = true // ids are assigned on parse
	}
	// Read backwards in growing chunks: the last line usually fits in the
	// first 4 KiB, which a pool lends (the tails of a whole store are read
	// when it is listed).
	chunk := int64(4 << 10)
	pooled := tailBufs.Get().(*[]byte)
	defer tailBufs.Put(pooled)
	end := size
	var carry []byte // the start of a line cut by the previous chunk
	for end > 0 && size-end < tailScanLimit {
		start := max(0, end-chunk)
		var buf []byte
		if n := end - start + int64(len(carry)); n <= int64(cap(*pooled)) {
			buf = (*pooled)[:end-start]
		} else {
			buf = make([]byte, end-start, n)
		}
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return Tail{}, err
		}
		buf = append(buf, carry...)
		// The file's first value is its header, never an entry, whatever
		// it holds.
		header := -1
		if start == 0 {
			header = firstValue(buf)
		}
		// The lines from the last; the first, when cut, goes on with the
		// next chunk.
		for hi := len(buf); ; {
			lo := bytes.LastIndexByte(buf[:hi], '\n') + 1
			if lo == 0 && start > 0 {
				carry = append(carry[:0:0], buf[:hi]...)
				break
			}
			line := buf[lo:hi]
			hi = lo - 1
			if e, ok := parseLine(line, 0, 0); ok && !(e.Object && e.Type == schema.TypeSession) && lo != header {
				if !leafDone {
					leafDone, t.LeafKnown = true, true
					t.Leaf = e.ID
					if e.Type == schema.TypeCustom {
						if ct, _ := e.Str("customType"); ct == leafRecordType {
							t.Leaf = e.ParentID
						}
					}
				}
				if ms := jsjson.DateValue(e.Timestamp); !math.IsNaN(ms) {
					t.Activity, t.HasActivity = ms, true
					return t, nil
				}
			}
			if lo == 0 {
				break
			}
		}
		end = start
		chunk = min(chunk*2, 1<<20)
	}
	if end == 0 && !leafDone {
		t.LeafKnown = true // no entry at all
	}
	return t, nil
}

// firstValue is where the first line that parses (the header) starts in
// data, -1 when none does.
func firstValue(data []byte) int {
	for lo := 0; lo <= len(data); {
		hi := bytes.IndexByte(data[lo:], '\n')
		if hi < 0 {
			hi = len(data)
		} else {
			hi += lo
		}
		if _, ok := parseLine(data[lo:hi], 0, 0); ok {
			return lo
		}
		lo = hi + 1
	}
	return -1
}

// tailBufs lend readTail its first chunk.
var tailBufs = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

// nameScan is where a scan for the name stopped: the name as of the last
// complete line, the offset just past it, and the name counting a last
// line without newline (which pi reads too).
type nameScan struct {
	complete string
	upTo     int64
	name     string
}

// A session_info entry is searched for by its type as written in the line,
// cut before its '_': infoSuffix is what follows, sessionPrefix what comes
// before.
const infoAt = len("session")

var (
	sessionInfo   = []byte(schema.TypeSessionInfo)
	sessionPrefix = sessionInfo[:infoAt]
	infoSuffix    = sessionInfo[infoAt:]
)

// nameBufs are scanName's buffers: by-name/ reads every file of a project,
// and a buffer each made the collector run more than the scan.
var nameBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// scanName goes on from an earlier scan of the same file, which has only
// grown since.
func scanName(path string, from nameScan) (nameScan, error) {
	f, _, err := openFd(path)
	if err != nil {
		return from, err
	}
	defer f.Close()
	take := func(line []byte, name string) string {
		e, ok := parseLine(line, 0, 0)
		if !ok || !e.Object || e.Type != schema.TypeSessionInfo {
			return name
		}
		n, _ := e.Str("name")
		return jsjson.Trim(n)
	}
	name, off := from.complete, from.upTo
	// buf[:have] is a line cut by the end of the last read.
	pooled := nameBufs.Get().(*[]byte)
	defer nameBufs.Put(pooled)
	buf, have := *pooled, 0
	for {
		n, err := f.ReadAt(buf[have:], off+int64(have))
		data := buf[:have+n]
		end := bytes.LastIndexByte(data, '\n') + 1
		// Complete lines: look only where session_info is written.
		for pos := 0; ; {
			// Searched by "_info", whose first byte is rare in sessions
			// (bytes.Index skips ahead by its first byte).
			i := bytes.Index(data[pos:end], infoSuffix)
			if i < 0 {
				break
			}
			i += pos
			if i < infoAt || !bytes.Equal(data[i-infoAt:i], sessionPrefix) {
				pos = i + 1
				continue
			}
			start := bytes.LastIndexByte(data[:i], '\n') + 1
			stop := i + bytes.IndexByte(data[i:end], '\n')
			name = take(data[start:stop], name)
			pos = stop + 1
		}
		off += int64(end)
		have = copy(buf, data[end:])
		if n == 0 || err != nil {
			if err != nil && err != io.EOF {
				return from, err
			}
			last := name
			if bytes.Contains(buf[:have], sessionInfo) {
				last = take(buf[:have], name)
			}
			return nameScan{complete: name, upTo: off, name: last}, nil
		}
		if have == len(buf) {
			// One line longer than the buffer. Only one with "_info" can
			// name the session: that one is read whole, in a buffer of its
			// size, any other is skipped unread, as is one too long for pi.
			end, nl, has, err := lineEnd(f, off, MaxLine, infoSuffix)
			if err != nil {
				return from, err
			}
			if !nl && end-off >= MaxLine {
				if end, nl, err = skipLine(f, end); err != nil {
					return from, err
				}
				has = false
			}
			last := name
			if has {
				line := make([]byte, end-off)
				if _, err := f.ReadAt(line, off); err != nil && err != io.EOF {
					return from, err
				}
				last = take(bytes.TrimSuffix(line, []byte{'\n'}), name)
			}
			if !nl {
				return nameScan{complete: name, upTo: off, name: last}, nil
			}
			name, off, have = last, end, 0
		}
	}
}

// KnowName records the name a full read of this version of the file found
// (a parse, the usage scan), so that SessionName reads nothing. A later
// version scans from the start.
func (f *File) KnowName(name string) {
	n := f.nameState()
	n.once.Do(func() {
		n.scan = nameScan{name: name}
		n.done.Store(true)
		f.keep(map[string][]byte{factName: encodeName(n.scan)})
	})
}

// NameKnown tells that the session's name is known for this version: from
// a scan, a parse or KnowName.
func (f *File) NameKnown() bool {
	n := f.names.Load()
	return n != nil && n.done.Load()
}

// SessionName is the session's name as pi's /name shows it (the last
// session_info entry's, trimmed), found without parsing the file (only
// lines that mention session_info are parsed) once per version of the
// file; a version that only grew is scanned from where the last one
// stopped.
func (f *File) SessionName() (string, error) {
	n := f.nameState()
	n.once.Do(func() {
		f.CountRead()
		n.scan, n.err = scanName(f.Path, n.from)
		n.done.Store(true)
		if n.err == nil {
			f.keep(map[string][]byte{factName: encodeName(n.scan)})
		}
	})
	return n.scan.name, n.err
}
