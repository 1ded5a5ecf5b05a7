// Package hugemem makes the large buffers that hold a whole session file or
// a whole rendered view, and asks the kernel to back them with huge pages.
//
// A new process's heap grows into memory the kernel has not mapped yet, and
// every 4 KiB page costs a fault on its first touch: reading a 103 MB
// session into a new buffer took 330–380 ms on the 2-core test machine
// (a virtual machine, where a fault costs about 12 µs), and the first scan
// of it 140 ms more, against 4 ms for a second scan. With the buffer's
// 2 MiB-aligned middle in huge pages the same read and scan took 180–200
// ms, and 30 ms where the memory had been used before. Linux gives huge
// pages to such memory only when asked (transparent_hugepage "madvise",
// the usual default), and Go's runtime does not ask. The pages are faulted
// in at once and the request taken back (see advise), so that memory the
// heap frees later is never filled with huge pages it does not use.
package hugemem

// Min is the capacity from which a buffer asks for huge pages: below it
// the pages at both ends, which stay small, are most of it.
const Min = 8 << 20

// Bytes is make([]byte, n, c), with the 2 MiB pages wholly inside it
// backed by huge pages where the system gives them, faulted in already.
// Where the system refuses, the buffer is an ordinary one.
func Bytes(n, c int) []byte {
	b := make([]byte, n, c)
	if c >= Min {
		advise(b[:c])
	}
	return b
}
