package main

import (
	"log/slog"
	"os"
	"runtime/pprof"
)

// profileEnv names a file that receives a CPU profile of the mount, from
// the moment it is ready until it is unmounted. It is for the benches
// (bench/scale.sh --profile) and for finding where a walk spends its time:
//
//	PIFS_CPUPROFILE=/tmp/cpu.prof pifs MNT; go tool pprof -top pifs /tmp/cpu.prof
const profileEnv = "PIFS_CPUPROFILE"

// startProfile starts the profile that $PIFS_CPUPROFILE asks for, and
// returns what stops it (nil when none is asked for or it cannot start).
func startProfile(logger *slog.Logger) func() {
	path := os.Getenv(profileEnv)
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		logger.Warn(profileEnv + ": " + err.Error() + "; running without a profile")
		return nil
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		logger.Warn(profileEnv + ": " + err.Error() + "; running without a profile")
		return nil
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
