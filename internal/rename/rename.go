// Package rename moves a file to a new name without ever replacing what is
// there: the trash and the import of sessions take a name only when it is
// free, in one step that no other writer can come between.
package rename

import (
	"errors"
	"os"
	"syscall"
)

// NoReplace renames src to dst unless dst exists; then it changes nothing
// and returns an error that is fs.ErrExist (EEXIST). Where the file system
// cannot rename without replacing (RENAME_NOREPLACE is refused: NFS, some
// FUSE file systems), dst is made a hard link, which also fails when it
// exists, and src's name is taken away after: the file keeps a name at
// every moment, and its bytes are never copied.
func NoReplace(src, dst string) error {
	err := renameNoReplace(src, dst)
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.ENOTSUP) {
		if err := os.Link(src, dst); err != nil {
			return err
		}
		return os.Remove(src)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	return nil
}

// Exchange swaps the files at a and b in one step (RENAME_EXCHANGE): each
// name has a file at every moment. Where the file system or the system
// cannot (EINVAL, ENOSYS, ENOTSUP), it changes nothing and returns that
// error.
func Exchange(a, b string) error {
	if err := renameExchange(a, b); err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
