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
	return &osFile{fds: &f.r.fds, id: id, path: path}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

var (
	_ = (fs.FileReader)((*osFile)(nil))
	_ = (fs.FileReleaser)((*osFile)(nil))
)

func (h *osFile) Release(ctx context.Context) syscall.Errno {
	h.fds.closed(h.id)
	return 0
}
