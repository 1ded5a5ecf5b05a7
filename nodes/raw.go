package nodes

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/view"
)

// rawFile is a file served from the store's file itself (session.jsonl):
// its size and content are always the file's.
type rawFile struct {
	fs.Inode
	r *Root
	f view.Raw
}

var (
	_ = (fs.NodeGetattrer)((*rawFile)(nil))
	_ = (fs.NodeSetattrer)((*rawFile)(nil))
	_ = (fs.NodeOpener)((*rawFile)(nil))
)

func (f *rawFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*osFile); ok {
		fi, err := h.Stat()
		if err != nil {
			return f.r.errno(err)
		}
		setAttr(&out.Attr, f.r.v.OpenAttr(f.f, fi))
		return 0
	}
	return f.r.attr(f.f, nil, &out.Attr)
}

func (f *rawFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (f *rawFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if wantsWrite(flags) {
		return nil, 0, syscall.EROFS
	}
	fd, err := f.r.v.OpenRaw(f.f)
	if err != nil {
		return nil, 0, f.r.errno(err)
	}
	path := fd.Name()
	id, _, err := f.r.fds.put(fd)
	if err != nil {
		return nil, 0, f.r.errno(err)
	}
	h := &osFile{fds: &f.r.fds, id: id, path: path}
	if c, ok := ctx.(*fuse.Context); ok {
		h.r, h.open = f.r, c.Cancel
	}
	return h, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

// PassthroughFd gives the kernel the store's file itself to read from
// (FUSE passthrough, where the kernel lets pifs do it: Linux 6.9 and
// later, and a mount by root), so that reads of session.jsonl cost what
// reads of the file cost: no request reaches pifs. The kernel takes its
// own reference to the file: the descriptor is held only until the open
// is answered (see Root.Opened), then goes back to the mount's bounded
// set. The open is direct I/O until the kernel accepted the file (then
// the mount's wrapper takes that flag off, which would send the reads to
// pifs again), so a refusal leaves it as it was.
func (h *osFile) PassthroughFd() (int, bool) {
	if h.r == nil || h.open == nil {
		return 0, false
	}
	s, err := h.fds.acquire(h.id, h.path)
	if err != nil {
		return 0, false
	}
	h.r.pinMu.Lock()
	if h.r.pins == nil {
		h.r.pins = map[<-chan struct{}]*sharedFd{}
	}
	h.r.pins[h.open] = s
	h.r.pinMu.Unlock()
	return int(s.f.Fd()), true
}

// PassthroughOffered tells the nodes whether the kernel offers
// passthrough (for .pifs/stats).
func (r *Root) PassthroughOffered(ok bool) {
	if ok {
		r.files.PassthroughOffered.Store(1)
	}
}

// Opened is told by the mount, once an OPEN request (whose cancel channel
// is open) was answered, to let go of the descriptor held for it (see
// osFile.PassthroughFd), and whether the kernel took the file.
func (r *Root) Opened(open <-chan struct{}, passthrough bool) {
	if passthrough {
		r.files.Passthrough.Add(1)
	}
	r.pinMu.Lock()
	s := r.pins[open]
	delete(r.pins, open)
	r.pinMu.Unlock()
	if s != nil {
		r.fds.release(s)
	}
}

var (
	_ = (fs.FileReader)((*osFile)(nil))
	_ = (fs.FileReleaser)((*osFile)(nil))
)

func (h *osFile) Release(ctx context.Context) syscall.Errno {
	h.fds.closed(h.id)
	return 0
}
