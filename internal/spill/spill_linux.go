package spill

import (
	"os"

	"golang.org/x/sys/unix"
)

// openUnnamed makes a file in dir that has no name (O_TMPFILE).
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir+"/(transaction)"), nil
}
