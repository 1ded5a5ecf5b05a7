package nodes

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/pifs/pifs/view"
)

// rename is a rename inside the mount: the view takes a session folder
// into trash/ and back (view.View.Rename) and refuses anything else. The
// kernel then moves its node of the old name to the new one; the view has
// the kernel forget it there (a trashed session is another node).
func (d *dir) rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	to, ok := folderOf(newParent)
	if !ok {
		return syscall.EXDEV
	}
	return d.r.errno(d.r.v.Rename(d.f, name, to, newName, flags, caller(ctx)))
}

// folderOf is the view folder a node of the mount serves.
func folderOf(n fs.InodeEmbedder) (view.Folder, bool) {
	switch n := n.(type) {
	case *dir:
		return n.f, true
	case *Root:
		return n.f, true
	}
	return nil, false
}
