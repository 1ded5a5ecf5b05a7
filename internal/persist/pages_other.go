//go:build !linux

package persist

// dropPages leaves the mapping to the kernel where MADV_DONTNEED of a
// shared file mapping is only a hint.
func dropPages(addr, n uintptr) {}
