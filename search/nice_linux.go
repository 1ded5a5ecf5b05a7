package search

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lowerPriority runs the calling goroutine on a thread of its own, at a
// lower priority (nice 10), so that the builder takes what the mount
// leaves of the cores. The thread ends with the goroutine.
func lowerPriority() {
	runtime.LockOSThread()
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 10)
}
