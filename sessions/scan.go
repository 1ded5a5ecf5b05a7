package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/pifs/pifs/sessions/schema"
)

// Scan reads the session at path once, from start to end, and calls fn with
// each entry whose line keep lets through, parsed as Open parses it (lines
// of MaxLine bytes or more skipped unread). It keeps nothing: an entry (and its Raw bytes) is valid only during its call,
// so a reader that needs a few fields of some lines (the usage reports)
// reads a large store without holding it in memory. keep sees the raw line
// and must let through every line the caller could want (a cheap substring
// test); nil keeps every line.
//
// A session of an older version is migrated as Open migrates it: the ids
// pi derives depend on every line before, so such a file is parsed whole.
func Scan(path string, keep func(line []byte) bool, fn func(e *Entry)) (*Header, error) {
	h, _, err := ScanFrom(path, 0, keep, func(e *Entry, _ bool) { fn(e) })
	return h, err
}

// ScanFrom is Scan from offset from, the end of a complete line of a
// session of the current version that an earlier scan stopped at (0: from
// the start, as Scan). It tells fn whether each entry's line is complete
// (ends in a newline: a final line without one may still grow), and
// returns the offset past the last complete line, where a later scan of
// the grown file goes on (-1 when it cannot: an older version's file,
// migrated whole). From an offset, the header is not read again (h nil).
func ScanFrom(path string, from int64, keep func(line []byte) bool, fn func(e *Entry, complete bool)) (h *Header, end int64, err error) {
	return scanFrom(path, from, keep, func(e *Entry, complete bool, _ int64) { fn(e, complete) }, MaxLine, 0)
}

// ScanCut is ScanFrom (every line kept) for a reader that wants only the
// ends of long strings: a line too long for the scan's buffer is read in
// pieces, never whole, and each of its strings whose text is longer than
// CutOver bytes may reach fn as its first and last keep bytes or so (at
// least keep each, cut at characters' starts, keep < CutOver/2); cut is how
// many bytes of the entry's text were left out so.
func ScanCut(path string, from int64, keep int, fn func(e *Entry, complete bool, cut int64)) (h *Header, end int64, err error) {
	return scanFrom(path, from, nil, fn, MaxLine, keep)
}

// scanReaders lend the buffers scans read through: a usage report scans
// every file of a store, and a new 256 KiB buffer for each was half of
// what the report allocated.
var scanReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, scanBuffer) }}

// scanBuffer is the size of a scan's buffer: a longer line is read apart.
const scanBuffer = 256 << 10

// scan is Scan, skipping lines of maxLine bytes or more.
func scan(path string, keep func(line []byte) bool, fn func(e *Entry), maxLine int64) (*Header, error) {
	h, _, err := scanFrom(path, 0, keep, func(e *Entry, _ bool, _ int64) { fn(e) }, maxLine, 0)
	return h, err
}

// scanFrom is ScanFrom, skipping lines of maxLine bytes or more, and with
// cutKeep > 0 ScanCut.
func scanFrom(path string, from int64, keep func(line []byte) bool, fn func(e *Entry, complete bool, cut int64), maxLine int64, cutKeep int) (h *Header, end int64, err error) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, -1, err
	}
	defer f.Close()
	if from > 0 {
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return nil, -1, err
		}
	}
	r := scanReaders.Get().(*bufio.Reader)
	r.Reset(f)
	defer func() {
		r.Reset(nil)
		scanReaders.Put(r)
	}()
	var (
		seq int
		off = from
		cut int64 // what readCut left out of the line
	)
	end = from
	for {
		line, err := r.ReadSlice('\n')
		size := -1 // the line's length in the file, when not len(line)
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read whole, once, or
			// skipped unread when pi could not read it either.
			var next int64
			if cutKeep > 0 {
				line, cut, next, err = readCut(f, off, maxLine, cutKeep)
			} else {
				line, next, err = readLong(f, off, maxLine)
			}
			if err != nil {
				return nil, -1, err
			}
			if _, err := f.Seek(next, io.SeekStart); err != nil {
				return nil, -1, err
			}
			r.Reset(f)
			if line == nil {
				off, end = next, next
				continue
			}
			if line[len(line)-1] != '\n' {
				err = io.EOF
			}
			size = int(next - off)
		} else if err != nil && err != io.EOF {
			return nil, -1, err
		}
		if size < 0 {
			size = len(line)
		}
		at := off
		off += int64(size)
		last := err == io.EOF
		complete := false
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
			complete = true
			end = off
		}
		if len(line) > 0 && ((h == nil && from == 0) || keep == nil || keep(line)) {
			if e, ok := parseLine(line, seq, at); ok {
				seq++
				switch {
				case h == nil && from == 0:
					// A copy: the line is in the lent buffer.
					var herr error
					if h, herr = headerOf(e); herr != nil {
						return nil, -1, ErrNotSession
					}
					if h.Version < CurrentVersion {
						h, err := scanMigrated(path, fn)
						return h, -1, err
					}
				case e.Type != schema.TypeSession: // later header lines are never entries
					fn(e, complete, cut)
				}
			}
		}
		cut = 0
		if last {
			break
		}
	}
	if h == nil && from == 0 {
		return nil, -1, ErrNotSession
	}
	return h, end, nil
}

// readLong reads the line that starts at off whole, its newline included
// (when it has one), in one buffer of its size, and returns where the next
// one starts. A line of maxLine bytes or more is not read: line is nil.
func readLong(f *os.File, off, maxLine int64) (line []byte, next int64, err error) {
	end, nl, _, err := lineEnd(f, off, maxLine, nil)
	if err != nil {
		return nil, 0, err
	}
	if !nl && end-off >= maxLine {
		end, _, err = skipLine(f, end)
		return nil, end, err
	}
	line = make([]byte, end-off)
	n, err := f.ReadAt(line, off)
	if err != nil && err != io.EOF {
		return nil, 0, err
	}
	return line[:n], off + int64(n), nil
}

// readCut reads the line that starts at off as readLong does, through
// cutLine (see ScanCut and cutAt).
func readCut(f *os.File, off, maxLine int64, keep int) (line []byte, cut, next int64, err error) {
	line, cut, next, nl, err := cutAt(f, off, maxLine, keep)
	if line != nil && nl {
		line = append(line, '\n')
	}
	return line, cut, next, err
}

// ReadLineCut reads the line that starts at off as ScanCut gives it (see
// there), without its newline: nil when it is MaxLine bytes or more, a
// line no parser takes when pi skips it for a string that was cut.
func ReadLineCut(f io.ReaderAt, off int64, keep int) ([]byte, error) {
	// A line as long as a scan's buffer at most is read whole, in a
	// buffer grown from 4 KiB (most lines are short).
	buf := make([]byte, 0, 4<<10)
	for {
		n, err := f.ReadAt(buf[len(buf):cap(buf)], off+int64(len(buf)))
		if i := bytes.IndexByte(buf[len(buf):len(buf)+n], '\n'); i >= 0 {
			return buf[:len(buf)+i], nil
		}
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			if len(buf) >= scanBuffer {
				break
			}
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
	}
	line, _, _, _, err := cutAt(f, off, MaxLine, keep)
	return line, err
}

// cutAt reads the line that starts at off through cutLine, without its
// newline (nl tells that it has one), and returns where the next starts.
// A line of maxLine bytes or more is skipped unread (line nil); one
// cutLine finds pi would skip is given as a line no parser takes.
func cutAt(f io.ReaderAt, off, maxLine int64, keep int) (line []byte, cut, next int64, nl bool, err error) {
	end, nl, _, err := lineEnd(f, off, maxLine, nil)
	if err != nil {
		return nil, 0, 0, false, err
	}
	if !nl && end-off >= maxLine {
		end, _, err = skipLine(f, end)
		return nil, 0, end, false, err
	}
	n := end - off
	if nl {
		n--
	}
	line, cut, ok, err := cutLine(io.NewSectionReader(f, off, n), n, keep)
	if err != nil {
		return nil, 0, 0, false, err
	}
	if !ok {
		line, cut = []byte("!"), 0
	}
	return line, cut, end, nl, nil
}

// scanMigrated is Scan of a session of an older version: parsed whole,
// the ids pi derives depending on every line before, cut or not.
func scanMigrated(path string, fn func(e *Entry, complete bool, cut int64)) (*Header, error) {
	l, err := Open(path)
	if err != nil {
		return nil, err
	}
	for _, e := range l.Entries {
		fn(e, true, 0)
	}
	return l.Header, nil
}
