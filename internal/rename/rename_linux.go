package rename

import "golang.org/x/sys/unix"

// renameNoReplace is renameat2 with RENAME_NOREPLACE.
func renameNoReplace(src, dst string) error {
	return unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
}

// renameExchange is renameat2 with RENAME_EXCHANGE.
func renameExchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
