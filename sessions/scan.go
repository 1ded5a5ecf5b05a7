package sessions

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/pifs/pifs/sessions/schema"
)

// Scan reads the session at path once, from start to end, and calls fn with
// each entry whose line keep lets through, parsed as Open parses it. It
// keeps nothing: an entry (and its Raw bytes) is valid only during its call,
// so a reader that needs a few fields of some lines (the usage reports)
// reads a large store without holding it in memory. keep sees the raw line
// and must let through every line the caller could want (a cheap substring
// test); nil keeps every line.
//
// A session of an older version is migrated as Open migrates it: the ids
// pi derives depend on every line before, so such a file is parsed whole.
func Scan(path string, keep func(line []byte) bool, fn func(e *Entry)) (*Header, error) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var (
		h    *Header
		seq  int
		off  int64
		long []byte // a line longer than the buffer, gathered
	)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if long != nil {
			line = append(long, line...)
			long = long[:0]
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
				case e.Type != schema.TypeSession: // later header lines are never entries
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
