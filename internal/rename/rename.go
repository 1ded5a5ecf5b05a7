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
