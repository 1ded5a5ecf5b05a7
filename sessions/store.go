package sessions

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
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
