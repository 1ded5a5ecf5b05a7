package nodes

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/view"
)

// importFile creates name in d when d takes it as an import (a
// NAME.jsonl in a project folder, see view.Import): ok tells that it did
// or refused it; else d refuses the create as it refuses any other.
func (d *dir) importFile(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, syscall.Errno, bool) {
	im, c, err := d.r.v.Import(d.f, name, caller(ctx))
	if err != nil {
		return nil, nil, d.r.errno(err), true
	}
	if im == nil {
		return nil, nil, 0, false
	}
	n, errno := d.newInode(ctx, c, c.Node(), nil, out)
	if errno != 0 {
		im.Release()
		return nil, nil, errno, true
	}
	return n, &importHandle{r: d.r, im: im}, 0, true
}

// importHandle is the open file of an import: writes go to the import's
// temporary file, the first close stores it.
type importHandle struct {
	r  *Root
	im *view.Import
}

var (
	_ = (fs.FileWriter)((*importHandle)(nil))
	_ = (fs.FileFlusher)((*importHandle)(nil))
	_ = (fs.FileFsyncer)((*importHandle)(nil))
	_ = (fs.FileReleaser)((*importHandle)(nil))
)

func (h *importHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n, err := h.im.WriteAt(data, off)
	if err != nil {
		return uint32(n), h.r.errno(err)
	}
	return uint32(n), 0
}

func (h *importHandle) Flush(ctx context.Context) syscall.Errno {
	return h.r.errno(h.im.Flush())
}

// Fsync: the bytes are on their way to a temporary file; the import takes
// effect at close.
func (h *importHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno { return 0 }

func (h *importHandle) Release(ctx context.Context) syscall.Errno {
	h.im.Release()
	return 0
}
