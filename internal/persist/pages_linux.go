package persist

import "golang.org/x/sys/unix"

// dropPages unmaps the pages of a file mapped read-only at [addr, addr+n)
// from the process: a later read of them maps them again from the page
// cache.
func dropPages(addr, n uintptr) {
	unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_DONTNEED)
}
