//go:build !linux

package spill

import (
	"os"
	"syscall"
)

// openUnnamed: no O_TMPFILE here; tempFile makes a file and removes it.
func openUnnamed(string) (*os.File, error) { return nil, syscall.EOPNOTSUPP }
