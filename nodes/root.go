// Package nodes serves what package view shows to the kernel through
// go-fuse: a node type for each kind of value (folder, file, symlink, a
// file of the store), their open files, the errno of each kind of error,
// and the notices that keep what the kernel cached in step with the store.
//
// Package mount mounts its root and runs the watcher.
package nodes

import (
	"context"
	"errors"
	iofs "io/fs"
	"log/slog"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/view"
)

// Root is the mount's root folder.
type Root struct {
	dir
	v   *view.View
	log *slog.Logger

	// stale are the nodes whose pages or listing the kernel may keep
	// from before a change (see keptSnapshot, dirHandle.Releasedir),
	// for Deliver.
	staleMu sync.Mutex
	stale   []*fs.Inode

	// fds are the descriptors of open session.jsonl files.
	fds rawFds
	// pins are the descriptors held for an OPEN being answered, by its
	// request (see osFile.PassthroughFd).
	pinMu sync.Mutex
	pins  map[<-chan struct{}]*sharedFd

	counts noticeCounts
	files  fileCounts
}

var (
	_ = (fs.NodeStatfser)((*Root)(nil))
	_ = (fs.NodeLookuper)((*Root)(nil))
	_ = (fs.NodeReaddirer)((*Root)(nil))
)

// NewRoot makes the root of a mount of v; log receives the errors no
// caller sees.
func NewRoot(v *view.View, log *slog.Logger) *Root {
	r := &Root{v: v, log: log}
	r.fds.max = maxRawFds
	r.dir = dir{r: r, f: v.Root()}
	v.AddStats("notices", func() any { return &r.counts })
	v.AddStats("files", func() any { return &r.files })
	return r
}

func (r *Root) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize = 4096
	out.Frsize = 4096
	out.NameLen = 255
	return 0
}

// toErrno maps err to an errno: the kind of error the view says it is; an
// error from the OS gives its own errno (ENOSPC, EDQUOT, EACCES, EIO reach
// the caller as themselves); anything else becomes EIO (Root.errno logs
// it).
func toErrno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	switch view.Kind(err) {
	case view.ErrNotFound:
		return syscall.ENOENT
	case view.ErrReadOnly:
		return syscall.EROFS
	case view.ErrInvalid:
		return syscall.EINVAL
	case view.ErrNotDir:
		return syscall.ENOTDIR
	case view.ErrExists:
		return syscall.EEXIST
	case view.ErrBusy:
		return syscall.EBUSY
	case view.ErrTooLong:
		return syscall.EFBIG
	case view.ErrNotPermitted:
		return syscall.EPERM
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && errno != 0 {
		return errno
	}
	if errors.Is(err, iofs.ErrPermission) {
		return syscall.EACCES
	}
	return syscall.EIO
}

// errno is toErrno for a handler of this mount: an error that has no errno
// of its own is logged, since the caller only sees EIO.
func (r *Root) errno(err error) syscall.Errno {
	e := toErrno(err)
	var os syscall.Errno
	if e == syscall.EIO && !errors.As(err, &os) {
		r.log.Error("unexpected error, answered EIO: " + err.Error())
	}
	return e
}
