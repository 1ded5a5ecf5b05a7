package main

import (
	"log/slog"
	"os"
	"runtime/pprof"
)

// profileEnv names a file that receives a CPU profile of the mount, from
// the moment it is ready until it is unmounted, and allocsEnv one that
// receives the profile of what the mount allocated (pprof's allocs: every
// allocation sampled since start), written at unmount. They are for the
// benches (bench/scale.sh --profile) and for finding where a walk spends
// its time or makes its garbage:
//
//	PIFS_CPUPROFILE=/tmp/cpu.prof pifs MNT; go tool pprof -top pifs /tmp/cpu.prof
//	PIFS_ALLOCSPROFILE=/tmp/a.prof pifs MNT; go tool pprof -sample_index=alloc_space -top pifs /tmp/a.prof
const (
	profileEnv = "PIFS_CPUPROFILE"
	allocsEnv  = "PIFS_ALLOCSPROFILE"
)

// startProfile starts the profiles that $PIFS_CPUPROFILE and
// $PIFS_ALLOCSPROFILE ask for, and returns what stops them and writes
// them (nil when none is asked for or none can start).
func startProfile(logger *slog.Logger) func() {
	var stops []func()
	if path := os.Getenv(profileEnv); path != "" {
		if f, ok := createProfile(logger, profileEnv, path); ok {
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				logger.Warn(profileEnv + ": " + err.Error() + "; running without a profile")
			} else {
				stops = append(stops, func() {
					pprof.StopCPUProfile()
					f.Close()
				})
			}
		}
	}
	if path := os.Getenv(allocsEnv); path != "" {
		if f, ok := createProfile(logger, allocsEnv, path); ok {
			stops = append(stops, func() {
				if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
					logger.Warn(allocsEnv + ": " + err.Error())
				}
				f.Close()
			})
		}
	}
	if len(stops) == 0 {
		return nil
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

func createProfile(logger *slog.Logger, env, path string) (*os.File, bool) {
	f, err := os.Create(path)
	if err != nil {
		logger.Warn(env + ": " + err.Error() + "; running without a profile")
		return nil, false
	}
	return f, true
}
