package nodes

import (
	"container/list"
	"context"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/sessions"
)

// The descriptors pifs holds for open session.jsonl files are bounded: a
// reader holding thousands of them open must not take the descriptors
// every other user's request needs. All the opens of one store file (one
// device and inode) share one descriptor, and at most maxRawFds are kept;
// past that, the one used least recently and not being read is closed,
// and an open file whose descriptor was closed opens its file again by
// name at its next read, checking that it is still the same file. So an
// open session.jsonl stays valid after its file is renamed or replaced
// while its descriptor is kept; once that descriptor was closed, a read
// finds the file by its name, and when the name is gone or is another
// file, it gets ESTALE (docs/guarantees.md).

// maxRawFds bounds the descriptors kept for open session.jsonl files.
const maxRawFds = 256

// fileID is a store file's identity.
type fileID struct{ dev, ino uint64 }

func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

// rawFds are the descriptors kept for open store files.
type rawFds struct {
	mu    sync.Mutex
	max   int
	byID  map[fileID]*list.Element // of *sharedFd
	order list.List                // least recently used first
	// opens counts the open files of each store file: its descriptor
	// goes with the last.
	opens map[fileID]int
}

// sharedFd is one descriptor and the reads using it now.
type sharedFd struct {
	id    fileID
	f     *os.File
	using int
}

// put keeps f, just opened, as the descriptor of its file, unless one is
// kept already (then f is closed). It returns the file's identity.
func (t *rawFds) put(f *os.File) (fileID, os.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fileID{}, nil, err
	}
	id, ok := idOf(fi)
	if !ok {
		f.Close()
		return fileID{}, nil, syscall.ENOTSUP
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opens == nil {
		t.opens = map[fileID]int{}
	}
	t.opens[id]++
	if el := t.byID[id]; el != nil {
		f.Close()
		t.order.MoveToBack(el)
		return id, fi, nil
	}
	t.keep(&sharedFd{id: id, f: f})
	return id, fi, nil
}

// closed ends one open file of id; the last closes its descriptor.
func (t *rawFds) closed(id fileID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opens[id]--; t.opens[id] > 0 {
		return
	}
	delete(t.opens, id)
	if el := t.byID[id]; el != nil && el.Value.(*sharedFd).using == 0 {
		el.Value.(*sharedFd).f.Close()
		delete(t.byID, id)
		t.order.Remove(el)
	}
}

// keep adds a descriptor and closes the oldest unused ones past max.
// t.mu is held.
func (t *rawFds) keep(s *sharedFd) *sharedFd {
	if t.byID == nil {
		t.byID = map[fileID]*list.Element{}
	}
	t.byID[s.id] = t.order.PushBack(s)
	for el := t.order.Front(); el != nil && t.order.Len() > t.max; {
		next := el.Next()
		if old := el.Value.(*sharedFd); old.using == 0 {
			old.f.Close()
			delete(t.byID, old.id)
			t.order.Remove(el)
		}
		el = next
	}
	return s
}

// acquire gives the descriptor of file id, opening path again when it was
// closed; release must follow.
func (t *rawFds) acquire(id fileID, path string) (*sharedFd, error) {
	t.mu.Lock()
	if el := t.byID[id]; el != nil {
		s := el.Value.(*sharedFd)
		s.using++
		t.order.MoveToBack(el)
		t.mu.Unlock()
		return s, nil
	}
	t.mu.Unlock()
	f, err := sessions.OpenRegular(path)
	if err != nil {
		return nil, syscall.ESTALE
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if got, ok := idOf(fi); !ok || got != id {
		f.Close()
		return nil, syscall.ESTALE // the name is another file now
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if el := t.byID[id]; el != nil {
		f.Close()
		s := el.Value.(*sharedFd)
		s.using++
		t.order.MoveToBack(el)
		return s, nil
	}
	s := &sharedFd{id: id, f: f, using: 1}
	return t.keep(s), nil
}

func (t *rawFds) release(s *sharedFd) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.using--; s.using == 0 && t.opens[s.id] == 0 {
		if el := t.byID[s.id]; el != nil && el.Value.(*sharedFd) == s {
			s.f.Close()
			delete(t.byID, s.id)
			t.order.Remove(el)
		}
	}
}

// osFile is an open session.jsonl: its file's identity and name, whose
// descriptor the mount's rawFds keep.
type osFile struct {
	fds  *rawFds
	id   fileID
	path string
	// r and open are the mount and the OPEN request that made it, for
	// PassthroughFd.
	r    *Root
	open <-chan struct{}
}

func (h *osFile) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h.r != nil {
		h.r.files.RawReads.Add(1)
	}
	s, err := h.fds.acquire(h.id, h.path)
	if err != nil {
		return nil, toErrno(err)
	}
	defer h.fds.release(s)
	n, err := s.f.ReadAt(dest, off)
	if n > 0 || err == nil || err == io.EOF {
		return fuse.ReadResultData(dest[:n]), 0
	}
	return nil, toErrno(err)
}

func (h *osFile) Stat() (os.FileInfo, error) {
	s, err := h.fds.acquire(h.id, h.path)
	if err != nil {
		return nil, err
	}
	defer h.fds.release(s)
	return s.f.Stat()
}

// openAttr answers fstat of an open view whose session is gone (its file
// renamed away or moved to the trash): the open file stays valid, with the
// attributes it had when opened.
func openAttr(fh fs.FileHandle, errno syscall.Errno, out *fuse.Attr) syscall.Errno {
	var s *snapshot
	switch h := fh.(type) {
	case *snapshot:
		s = h
	case *keptSnapshot:
		s = &h.snapshot
	case *growing:
		a := h.attr
		a.Size = uint64(h.g.Size())
		s = &snapshot{attr: a}
	}
	if s == nil || errno != syscall.ENOENT || s.attr.Mode == 0 {
		return errno
	}
	setAttr(out, s.attr)
	return 0
}
