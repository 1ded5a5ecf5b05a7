package sessions

import (
	"bufio"
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
	return scanFrom(path, from, keep, fn, MaxLine)
}

// scanReaders lend the buffers scans read through: a usage report scans
// every file of a store, and a new 256 KiB buffer for each was half of
// what the report allocated.
var scanReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// scan is Scan, skipping lines of maxLine bytes or more.
func scan(path string, keep func(line []byte) bool, fn func(e *Entry), maxLine int64) (*Header, error) {
	h, _, err := scanFrom(path, 0, keep, func(e *Entry, _ bool) { fn(e) }, maxLine)
	return h, err
}

// scanFrom is ScanFrom, skipping lines of maxLine bytes or more.
func scanFrom(path string, from int64, keep func(line []byte) bool, fn func(e *Entry, complete bool), maxLine int64) (h *Header, end int64, err error) {
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
	)
	end = from
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read whole, once, or
			// skipped unread when pi could not read it either.
			var next int64
			if line, next, err = readLong(f, off, maxLine); err != nil {
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
		} else if err != nil && err != io.EOF {
			return nil, -1, err
		}
		at := off
		off += int64(len(line))
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
					fn(e, complete)
				}
			}
		}
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

// scanMigrated is Scan of a session of an older version.
func scanMigrated(path string, fn func(e *Entry, complete bool)) (*Header, error) {
	l, err := Open(path)
	if err != nil {
		return nil, err
	}
	for _, e := range l.Entries {
		fn(e, true)
	}
	return l.Header, nil
}
