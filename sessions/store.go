package sessions

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
)

// Store is a sessions directory: one folder per project, one .jsonl file
// per session.
type Store struct {
	Dir string
}

// Projects lists the project folders (folders and symlinks to folders),
// sorted by name.
func (s *Store) Projects() ([]string, error) {
	des, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, de.Name())
			continue
		}
		if de.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(s.Dir, de.Name())); err == nil && fi.IsDir() {
				out = append(out, de.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// SessionFile is a session found in a project, known by its header only.
type SessionFile struct {
	// Name is the file name without .jsonl.
	Name    string
	Path    string
	Header  *Header
	Size    int64
	ModTime time.Time
}

// Sessions lists a project's sessions: .jsonl files whose first parsed line
// is a valid header. Only headers are read, never session bodies.
func (s *Store) Sessions(project string) ([]SessionFile, error) {
	dir := filepath.Join(s.Dir, project)
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []SessionFile
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".jsonl") || de.IsDir() {
			continue
		}
		sf, err := Stat(filepath.Join(dir, name))
		if err != nil {
			continue // not a session, or gone meanwhile
		}
		out = append(out, sf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Stat reads a session file's header and size.
func Stat(path string) (SessionFile, error) {
	f, fi, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return SessionFile{}, err
	}
	defer f.Close()
	h, err := readHeader(f)
	if err != nil {
		return SessionFile{}, err
	}
	return SessionFile{
		Name:    strings.TrimSuffix(filepath.Base(path), ".jsonl"),
		Path:    path,
		Header:  h,
		Size:    fi.Size(),
		ModTime: fi.ModTime(),
	}, nil
}

// maxHeaderScan bounds the search for the header, as pi bounds its own
// discovery scan.
const maxHeaderScan = 1 << 20

// ReadHeader reads only as much of a file as it takes to find its header:
// the first line that parses (blank and malformed lines are skipped, as pi
// skips them).
func ReadHeader(path string) (*Header, error) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHeader(f)
}

func readHeader(r io.Reader) (*Header, error) {
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 4096)
	start := 0 // start of the current line in buf
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			nl := bytes.IndexByte(buf[start:], '\n')
			if nl < 0 {
				break
			}
			if e, ok := parseLine(buf[start:start+nl], 0, 0); ok {
				return headerOf(e)
			}
			start += nl + 1
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			if e, ok := parseLine(buf[start:], 0, 0); ok {
				return headerOf(e)
			}
			return nil, ErrNotSession
		}
		if err != nil {
			return nil, err
		}
		if len(buf) > maxHeaderScan {
			return nil, ErrNotSession
		}
		// Keep only the unfinished line.
		buf = append(buf[:0], buf[start:]...)
		start = 0
	}
}

func headerOf(e *Entry) (*Header, error) {
	h, ok := parseHeader(e.Raw)
	if !ok {
		return nil, ErrNotSession
	}
	// The header must not alias the read buffer, which is reused.
	h.Raw = append([]byte(nil), h.Raw...)
	h2, _ := parseHeader(h.Raw)
	return h2, nil
}

// LastEntryTime returns the time (ms since the epoch) of the file's last
// entry that has a valid timestamp, reading the file from its end: a
// session's latest activity without parsing it. ok is false when no such
// entry is found within the last few MiB.
func LastEntryTime(path string) (ms float64, ok bool) {
	f, fi, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	// Read backwards in growing chunks: the last line usually fits in the
	// first 4 KiB. Give up after maxTailScan (then the header's time
	// serves).
	chunk := int64(4 << 10)
	end := fi.Size()
	var carry []byte // the start of a line cut by the previous chunk
	for end > 0 && fi.Size()-end < maxTailScan {
		start := max(0, end-chunk)
		buf := make([]byte, end-start, end-start+int64(len(carry)))
		if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
			return 0, false
		}
		buf = append(buf, carry...)
		lines := bytes.Split(buf, []byte{'\n'})
		from := 0
		if start > 0 {
			carry = append([]byte(nil), lines[0]...)
			from = 1
		} else {
			carry = nil
		}
		for i := len(lines) - 1; i >= from; i-- {
			if ms, ok := entryTime(lines[i]); ok {
				return ms, true
			}
		}
		end = start
		chunk = min(chunk*2, 1<<20)
	}
	return 0, false
}

// maxTailScan bounds how much of a file's end is read for its last
// activity.
const maxTailScan = 4 << 20

// entryTime is the timestamp of an entry line, when it is one pi keeps and
// the timestamp is a valid date. Header lines are not entries.
func entryTime(line []byte) (float64, bool) {
	e, ok := parseLine(line, 0, 0)
	if !ok || !e.Object || e.Type == "session" {
		return 0, false
	}
	ms := jsjson.DateValue(e.Timestamp)
	return ms, !math.IsNaN(ms)
}
