// Package spill keeps a stream of whole lines in memory up to a bound, then
// in a temporary file that has no name, so that what a write transaction
// holds in memory does not grow with what is written to it.
package spill

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// A transaction's lines, and the entries built from them, are kept in
// memory up to At bytes each, then in an unlinked temporary file, so
// that what a transaction holds in memory does not grow with what is
// written to it. Nothing of it is ever seen in the temporary folder: the
// file is made with O_TMPFILE (or removed as soon as it is made), and goes
// with its descriptor when the transaction ends, whatever ends it.

// At is the most a spill keeps in memory.
const At = 1 << 20

// Lines is a stream of whole lines, each kept with its newline after one
// reserved newline (see Batch).
type Lines struct {
	dir  string // where the file goes ("": os.TempDir())
	held *Held  // what the spills of one transaction hold in memory
	mem  []byte // the reserved newline, then the lines; nil once in f
	f    *os.File
	w    *bufio.Writer // into f
	size int64         // bytes of the lines
	n    int           // lines
	err  error         // the first error writing or reading f
}

// Held counts what a transaction's spills hold in memory now, and tells
// Peak (when set) each new count.
type Held struct {
	Now  int64
	Peak func(int64)
}

// Add counts n more bytes held (fewer when negative).
func (h *Held) Add(n int64) {
	if h == nil {
		return
	}
	h.Now += n
	if h.Peak != nil {
		h.Peak(h.Now)
	}
}

// New starts a stream whose file, past At bytes, goes in dir ("":
// os.TempDir()), counting what it holds in h (nil: uncounted).
func New(dir string, h *Held) *Lines {
	s := &Lines{dir: dir, held: h, mem: []byte{'\n'}}
	h.Add(int64(cap(s.mem)))
	return s
}

// Add keeps a line (without its newline); an error is kept for Err.
func (s *Lines) Add(line []byte) {
	if s.err != nil {
		return
	}
	s.size += int64(len(line)) + 1
	s.n++
	if s.f == nil && len(s.mem)+len(line)+1 <= At {
		before := cap(s.mem)
		s.mem = append(append(s.mem, line...), '\n')
		s.held.Add(int64(cap(s.mem) - before))
		return
	}
	if s.f == nil {
		if s.err = s.open(); s.err != nil {
			return
		}
	}
	if _, err := s.w.Write(line); err != nil {
		s.err = s.failed(err)
		return
	}
	if err := s.w.WriteByte('\n'); err != nil {
		s.err = s.failed(err)
	}
}

// failed says what a write to the temporary file met, and what to do.
func (s *Lines) failed(err error) error {
	dir := s.dir
	if dir == "" {
		dir = os.TempDir()
	}
	return fmt.Errorf("a transaction past %d MiB is kept in a temporary file in %s, whose write failed (%w): set TMPDIR to a folder with room, or write less at once", At>>20, dir, err)
}

// open moves the lines held in memory to a new unlinked file.
func (s *Lines) open() error {
	dir := s.dir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := tempFile(dir)
	if err != nil {
		return err
	}
	s.f, s.w = f, bufio.NewWriterSize(f, 64<<10)
	s.held.Add(64 << 10)
	if _, err := s.w.Write(s.mem); err != nil {
		return s.failed(err)
	}
	s.held.Add(-int64(cap(s.mem)))
	s.mem = nil
	return nil
}

// tempFile makes a file in dir that has no name: O_TMPFILE where the file
// system has it, else a file removed at once.
func tempFile(dir string) (*os.File, error) {
	f, err := openUnnamed(dir)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.EISDIR) && !errors.Is(err, syscall.EINVAL) {
		return nil, fmt.Errorf("a transaction past %d MiB is kept in a temporary file in %s: %w", At>>20, dir, err)
	}
	f, err = os.CreateTemp(dir, "pifs-transaction-")
	if err != nil {
		return nil, fmt.Errorf("a transaction past %d MiB is kept in a temporary file in %s: %w", At>>20, dir, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Err is the first error keeping or reading back the lines.
func (s *Lines) Err() error { return s.err }

// Size is the bytes of the lines, their newlines included.
func (s *Lines) Size() int64 { return s.size }

// Len is the number of lines.
func (s *Lines) Len() int { return s.n }

// Each gives the lines in order, each valid until the next (a line of the
// file is read into a buffer of its own size). It stops at fn's first
// error.
func (s *Lines) Each(fn func(i int, line []byte) error) error {
	if s.err != nil {
		return s.err
	}
	if s.f == nil {
		rest := s.mem[1:]
		for i := 0; len(rest) > 0; i++ {
			end := 0
			for rest[end] != '\n' {
				end++
			}
			if err := fn(i, rest[:end]); err != nil {
				return err
			}
			rest = rest[end+1:]
		}
		return nil
	}
	if err := s.w.Flush(); err != nil {
		s.err = err
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, 1, s.size), 64<<10)
	s.held.Add(64 << 10)
	defer s.held.Add(-64 << 10)
	for i := 0; i < s.n; i++ {
		line, err := r.ReadSlice('\n')
		long := int64(0)
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read it whole.
			var rest []byte
			line = append([]byte(nil), line...)
			rest, err = r.ReadBytes('\n')
			line = append(line, rest...)
			long = int64(cap(line) + cap(rest))
			s.held.Add(long)
		}
		if err != nil {
			s.err = fmt.Errorf("reading back a transaction's temporary file: %w", err)
			return s.err
		}
		err = fn(i, line[:len(line)-1])
		s.held.Add(-long)
		if err != nil {
			return err
		}
	}
	return nil
}

// All gives every line, read back into memory (what the entries of a batch
// that needs its own tree cost).
func (s *Lines) All() [][]byte {
	var out [][]byte
	if err := s.Each(func(_ int, l []byte) error {
		out = append(out, append([]byte(nil), l...))
		return nil
	}); err != nil {
		return nil
	}
	return out
}

// Batch gives the reserved newline and the lines, all in one slice, for
// one write(2): memory, or the file mapped (no copy on the heap). done
// gives the mapping back.
func (s *Lines) Batch() (data []byte, done func(), err error) {
	if s.err != nil {
		return nil, nil, s.err
	}
	if s.f == nil {
		return s.mem, func() {}, nil
	}
	if err := s.w.Flush(); err != nil {
		s.err = err
		return nil, nil, err
	}
	m, err := unix.Mmap(int(s.f.Fd()), 0, int(s.size+1), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping a transaction's temporary file: %w", err)
	}
	return m, func() { _ = unix.Munmap(m) }, nil
}

// Close gives back what the spill holds: its memory and its file.
func (s *Lines) Close() {
	if s == nil {
		return
	}
	if s.f != nil {
		s.f.Close()
		s.held.Add(-64 << 10)
		s.f, s.w = nil, nil
	}
	s.held.Add(-int64(cap(s.mem)))
	s.mem = nil
	if s.err == nil {
		s.err = errors.New("a transaction's lines were used after it ended")
	}
}
