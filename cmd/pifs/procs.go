package main

import (
	"os"
	"runtime"
)

// spareProc gives the Go scheduler one P more than it would take (one per
// core), unless $GOMAXPROCS says otherwise.
//
// go-fuse's readers wait for the kernel's next request in a blocking
// read(2), and a goroutine in a system call keeps its P until the runtime's
// monitor takes it back, 20 µs and more later. A walk sends a request every
// few dozen microseconds, so with a P per core the goroutines that parse
// and count ahead of it were left waiting for a P a third of the time
// while a core idled: on store A, `ls -l MNT/--*/*/` left 2.0 of its 10
// core-seconds idle with 2 Ps, 1.1 with 3. The spare P lets them run while
// a reader holds one; the kernel still shares the cores.
func spareProc() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
}
