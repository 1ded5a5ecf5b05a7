package nodes

import (
	"errors"
	iofs "io/fs"
	"log"
	"syscall"

	"github.com/pifs/pifs/sessions"
)

// The errors nodes report. Every error a handler returns goes through
// toErrno, the one place that turns errors into errno values.
var (
	ErrNotFound = errors.New("no such file or directory")
	ErrReadOnly = errors.New("read-only file system")
	ErrInvalid  = errors.New("invalid argument")
	ErrNotDir   = errors.New("not a directory")
)

// logger receives what cannot be returned: unknown errors, panics.
var logger = log.Default()

// toErrno maps err to an errno with errors.Is over the sentinel errors;
// anything unknown is logged and becomes EIO.
func toErrno(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrNotFound), errors.Is(err, iofs.ErrNotExist), errors.Is(err, sessions.ErrNotSession):
		return syscall.ENOENT
	case errors.Is(err, ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, ErrInvalid):
		return syscall.EINVAL
	case errors.Is(err, ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, iofs.ErrPermission):
		return syscall.EACCES
	}
	logger.Printf("pifs: %v", err)
	return syscall.EIO
}
