package main

import (
	"fmt"
	"log/slog"
	"syscall"
)

// raiseFileLimit sets the soft limit of open files to the hard one: a
// mount holds a descriptor for every file its readers have open, and the
// Go runtime raises the soft limit only to one below the hard limit. Where
// the hard limit cannot be taken as it is (macOS's unlimited), the limit
// the runtime set stays. It logs what it did at debug level.
func raiseFileLimit(logger *slog.Logger) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		logger.Debug("open files: reading the limit: " + err.Error())
		return
	}
	if lim.Cur >= lim.Max {
		logger.Debug(fmt.Sprintf("open files: limit %d, the hard limit", lim.Cur))
		return
	}
	soft := lim.Cur
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		logger.Debug(fmt.Sprintf("open files: limit %d; raising it to the hard limit %d: %v", soft, lim.Max, err))
		return
	}
	logger.Debug(fmt.Sprintf("open files: limit raised from %d to the hard limit %d", soft, lim.Max))
}
