package sessions

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
)

// maxHeaderScan bounds the search for the header, as pi bounds its own
// discovery scan.
const maxHeaderScan = 1 << 20

// ReadHeader reads only as much of a file as it takes to find its header:
// the first line that parses (blank and malformed lines are skipped, as pi
// skips them).
func ReadHeader(path string) (*Header, error) {
	f, _, err := openFd(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHeader(f)
}

func readHeader(r io.Reader) (*Header, error) {
	// One buffer, lent by a pool (a store's headers are read when it is
	// listed), read into directly; it grows only for a long first line.
	pooled := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(pooled)
	buf := (*pooled)[:0]
	start := 0 // start of the current line in buf
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
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
		buf = buf[:copy(buf, buf[start:])]
		start = 0
	}
}

// headerBufs lend readHeader its buffer.
var headerBufs = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

func headerOf(e *Entry) (*Header, error) {
	h, ok := parseHeader(e.Raw)
	if !ok {
		return nil, ErrNotSession
	}
	// The header must not alias the read buffer, which is reused: it
	// keeps a copy of its own, its id and cwd read in place.
	h2, _ := parseHeaderIn(append([]byte(nil), h.Raw...), true)
	return h2, nil
}
