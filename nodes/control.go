package nodes

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/view"
)

// controlHandle is a control opened for writing: the view's transaction
// of this open file (see view.Txn), answered to the kernel.
type controlHandle struct {
	r *Root
	t *view.Txn
}

var (
	_ = (fs.FileWriter)((*controlHandle)(nil))
	_ = (fs.FileFlusher)((*controlHandle)(nil))
	_ = (fs.FileFsyncer)((*controlHandle)(nil))
	_ = (fs.FileReader)((*controlHandle)(nil))
	_ = (fs.FileReleaser)((*controlHandle)(nil))
)

func (h *controlHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n, err := h.t.Write(data)
	if err != nil {
		return 0, h.r.errno(err)
	}
	return uint32(n), 0
}

// Flush comes at every close of a descriptor of the open file (twice
// after dup): the transaction takes effect at the first.
func (h *controlHandle) Flush(ctx context.Context) syscall.Errno {
	return h.r.errno(h.t.Flush())
}

func (h *controlHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return h.r.errno(h.t.Sync())
}

func (h *controlHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	data, err := h.t.Read(dest, off)
	if err != nil {
		return nil, h.r.errno(err)
	}
	return fuse.ReadResultData(data), 0
}

// Release comes when the last descriptor of the open file is closed: what
// its transaction still holds (its temporary file) is given back.
func (h *controlHandle) Release(ctx context.Context) syscall.Errno {
	h.t.Close()
	return 0
}
