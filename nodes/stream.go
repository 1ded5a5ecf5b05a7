package nodes

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/events"
	"github.com/pifs/pifs/view"
)

// streamFile is a file whose reads are a stream of lines from the moment it
// is opened (events): a read with nothing new waits for the next line (see
// events.Reader.Read), and each open file has a size of its own, what it
// was given, so that tail -f, which polls the size with fstat, follows it.
//
// The kernel does not say which open file an fstat is of (go-fuse hands
// Getattr the first one open), so the size is that of the open file of the
// process that asks; stat by any other process shows 0. The kernel keeps
// none of its attributes (see AttrNever), or fstat would not reach pifs.
type streamFile struct {
	fs.Inode
	r *Root
	f view.Streamer

	mu   sync.Mutex
	open map[*streamHandle]bool
}

// streamHandle is an open stream and the process that opened it.
type streamHandle struct {
	rd  *events.Reader
	pid uint32
}

var (
	_ = (fs.NodeGetattrer)((*streamFile)(nil))
	_ = (fs.NodeSetattrer)((*streamFile)(nil))
	_ = (fs.NodeOpener)((*streamFile)(nil))
	_ = (fs.NodeReader)((*streamFile)(nil))
	_ = (fs.NodeReleaser)((*streamFile)(nil))
	_ = (fs.NodeOnAdder)((*streamFile)(nil))
	_ = (fs.NodeOnForgetter)((*streamFile)(nil))
)

// AttrNever is the attribute timeout of a stream: go-fuse takes 0 for
// "the mount's default", so the shortest it keeps as it is.
const AttrNever = time.Nanosecond

func (f *streamFile) OnAdd(ctx context.Context) { f.r.v.NodeAdded() }
func (f *streamFile) OnForget()                 { f.r.v.NodeForgotten() }

func (f *streamFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if errno := f.r.attr(f.f, nil, &out.Attr); errno != 0 {
		return errno
	}
	if h := f.handleOf(ctx, fh); h != nil {
		out.Attr.Size = uint64(h.rd.Size())
		out.Attr.Blocks = (out.Attr.Size + 511) / 512
	}
	out.SetTimeout(AttrNever)
	return 0
}

// handleOf is the open file an fstat is of: the caller's own.
func (f *streamFile) handleOf(ctx context.Context, fh fs.FileHandle) *streamHandle {
	pid := caller(ctx).Pid
	if h, ok := fh.(*streamHandle); ok && h.pid == pid {
		return h
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for h := range f.open {
		if h.pid == pid {
			return h
		}
	}
	return nil
}

func (f *streamFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (f *streamFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if wantsWrite(flags) {
		return nil, 0, syscall.EROFS
	}
	rd, err := f.r.v.Events(f.f, caller(ctx))
	if err != nil {
		return nil, 0, f.r.errno(err)
	}
	h := &streamHandle{rd: rd, pid: caller(ctx).Pid}
	f.mu.Lock()
	if f.open == nil {
		f.open = map[*streamHandle]bool{}
	}
	f.open[h] = true
	f.mu.Unlock()
	return h, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

func (f *streamFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h, ok := fh.(*streamHandle)
	if !ok {
		return nil, syscall.EBADF
	}
	data, err := h.rd.Read(ctx, off, len(dest))
	if err != nil {
		return nil, syscall.EINTR
	}
	return fuse.ReadResultData(data), 0
}

func (f *streamFile) Release(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	if h, ok := fh.(*streamHandle); ok {
		f.mu.Lock()
		delete(f.open, h)
		f.mu.Unlock()
		h.rd.Close()
	}
	return 0
}
