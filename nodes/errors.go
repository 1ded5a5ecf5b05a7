package nodes

import (
	"errors"
	iofs "io/fs"
	"syscall"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The errors nodes report. Every error a handler returns goes through
// toErrno, the one place that turns errors into errno values.
var (
	ErrNotFound = errors.New("no such file or directory")
	ErrReadOnly = errors.New("read-only file system")
	ErrInvalid  = errors.New("invalid argument")
	ErrNotDir   = errors.New("not a directory")
	// ErrExists: a session id given to fork or new is already taken.
	ErrExists = errors.New("already exists")
	// ErrBusy: a version 1 or 2 session kept changing while pifs
	// migrated it before a write.
	ErrBusy = errors.New("session busy")
	// ErrTooLong: a line written to a control is longer than pifs buffers.
	ErrTooLong = errors.New("line too long")
	// ErrNotPermitted: a change no file of the mount takes (chmod, chown).
	ErrNotPermitted = errors.New("operation not permitted")
)

// toErrno maps err to an errno with errors.Is over the sentinel errors; an
// error from the OS gives its own errno (ENOSPC, EDQUOT, EACCES, EIO reach
// the caller as themselves); anything else becomes EIO (Root.errno logs
// it).
func toErrno(err error) syscall.Errno {
	var errno syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotFound), errors.Is(err, iofs.ErrNotExist), errors.Is(err, sessions.ErrNotSession),
		errors.Is(err, tree.ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, ErrInvalid), errors.Is(err, tree.ErrInvalid):
		return syscall.EINVAL
	case errors.Is(err, ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, ErrExists), errors.Is(err, iofs.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, ErrBusy):
		return syscall.EBUSY
	case errors.Is(err, ErrTooLong):
		return syscall.EFBIG
	case errors.Is(err, ErrNotPermitted):
		return syscall.EPERM
	case errors.As(err, &errno) && errno != 0:
		return errno
	case errors.Is(err, iofs.ErrPermission):
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

// refusal is a refused write: the sentence that says why and what to do
// instead (for the session's errors file and the log), and the sentinel
// that gives the errno.
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }
