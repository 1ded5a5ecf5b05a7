package sessions

import (
	"bufio"
	"errors"
	"io"
	"os"
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
	return scan(path, keep, fn, MaxLine)
}

// scan is Scan, skipping lines of maxLine bytes or more.
func scan(path string, keep func(line []byte) bool, fn func(e *Entry), maxLine int64) (*Header, error) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var (
		h   *Header
		seq int
		off int64
	)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read whole, once, or
			// skipped unread when pi could not read it either.
			var next int64
			if line, next, err = readLong(f, off, maxLine); err != nil {
				return nil, err
			}
			if _, err := f.Seek(next, io.SeekStart); err != nil {
				return nil, err
			}
			r.Reset(f)
			if line == nil {
				off = next
				continue
			}
			if line[len(line)-1] != '\n' {
				err = io.EOF
			}
		} else if err != nil && err != io.EOF {
			return nil, err
		}
		at := off
		off += int64(len(line))
		last := err == io.EOF
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		if len(line) > 0 && (h == nil || keep == nil || keep(line)) {
			if e, ok := parseLine(line, seq, at); ok {
				seq++
				switch {
				case h == nil:
					if h, ok = parseHeader(e.Raw); !ok {
						return nil, ErrNotSession
					}
					if h.Version < CurrentVersion {
						return scanMigrated(path, fn)
					}
				case e.Type != "session": // later header lines are never entries
					fn(e)
				}
			}
		}
		if last {
			break
		}
	}
	if h == nil {
		return nil, ErrNotSession
	}
	return h, nil
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
func scanMigrated(path string, fn func(e *Entry)) (*Header, error) {
	l, err := Open(path)
	if err != nil {
		return nil, err
	}
	for _, e := range l.Entries {
		fn(e)
	}
	return l.Header, nil
}
