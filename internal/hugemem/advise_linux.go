package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pifs/pifs/internal/par"
)

const hugePage = 2 << 20

// populateChunk is how much of a buffer one core faults in at a time.
const populateChunk = 16 << 20

// advise backs the huge pages inside b with huge pages: it marks them as
// wanting huge pages, faults them in (MADV_POPULATE_WRITE, on every core),
// and takes the mark back. Marked memory that the heap frees and the
// runtime returns to the kernel would be collapsed into huge pages again by
// khugepaged (which fills a huge page around a single page in use), and the
// mount would hold memory it does not use; unmarked, the huge pages stay
// until the runtime returns their memory. Where the kernel cannot fault
// them in ahead (before Linux 5.14), the buffer is an ordinary one. The
// memory is new or free in the heap's eyes: the advice changes how it is
// backed, never what it holds.
func advise(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(len(b))) &^ (hugePage - 1)
	if end <= start {
		return
	}
	r := b[start-p : end-p]
	if unix.Madvise(r, unix.MADV_HUGEPAGE) != nil {
		return
	}
	n := (len(r) + populateChunk - 1) / populateChunk
	par.Each(n, func(i int) {
		_ = unix.Madvise(r[i*populateChunk:min((i+1)*populateChunk, len(r))], unix.MADV_POPULATE_WRITE)
	})
	_ = unix.Madvise(r, unix.MADV_NOHUGEPAGE)
}
