package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePage = 2 << 20

// advise marks the huge pages inside b as wanting huge pages. The memory
// is new or free in the heap's eyes: the advice changes how it is backed,
// never what it holds.
func advise(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(len(b))) &^ (hugePage - 1)
	if end <= start {
		return
	}
	_ = unix.Madvise(b[start-p:end-p], unix.MADV_HUGEPAGE)
}
