//go:build !linux

package rename

import "syscall"

// renameNoReplace: no rename that refuses to replace is used outside
// Linux; NoReplace links and unlinks instead.
func renameNoReplace(src, dst string) error { return syscall.ENOSYS }

// renameExchange: no exchange is used outside Linux.
func renameExchange(a, b string) error { return syscall.ENOSYS }
