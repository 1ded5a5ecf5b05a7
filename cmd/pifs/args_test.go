package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestParseArgs: the mount helper form and pifs's own -o options.
func TestParseArgs(t *testing.T) {
	cfg, done, err := parseArgs([]string{"/s", "/m", "-o", "rw,noauto,cache_size=64MiB,log_file=/l,pid_file=/p,debug,verbose,allow_other"}, io.Discard)
	if err != nil || done {
		t.Fatal(err)
	}
	if cfg.mount.SessionsDir != "/s" || cfg.mountpoint != "/m" || !cfg.daemon || cfg.cacheBytes != 64<<20 || cfg.mount.CacheBytes != 64<<20 ||
		cfg.logFile != "/l" || cfg.pidFile != "/p" || !cfg.mount.Debug || cfg.verbose != 1 || len(cfg.mount.MountOptions) != 1 || cfg.mount.MountOptions[0] != "rw,noauto,allow_other" {
		t.Errorf("helper form: %+v", cfg)
	}
	cfg, _, err = parseArgs([]string{"-f", "/s", "/m", "-o", "ro"}, io.Discard)
	if err != nil || cfg.daemon {
		t.Errorf("-f: daemon %v, %v", cfg.daemon, err)
	}
	cfg, _, err = parseArgs([]string{"/s", "/m", "-o", "foreground"}, io.Discard)
	if err != nil || cfg.daemon {
		t.Errorf("-o foreground: daemon %v, %v", cfg.daemon, err)
	}
	cfg, _, err = parseArgs([]string{"--sessions-dir", "/s", "/m"}, io.Discard)
	if err != nil || cfg.daemon || cfg.mount.SessionsDir != "/s" || cfg.cacheBytes != 256<<20 {
		t.Errorf("one argument: %+v, %v", cfg, err)
	}
	cfg, _, err = parseArgs([]string{"-o", "sessions_dir=/t", "/m"}, io.Discard)
	if err != nil || cfg.mount.SessionsDir != "/t" {
		t.Errorf("-o sessions_dir: %+v, %v", cfg, err)
	}
	cfg, _, err = parseArgs([]string{"--poll", "2s", "/m"}, io.Discard)
	if err != nil || cfg.mount.PollInterval != 2*time.Second {
		t.Errorf("--poll 2s: %v, %v", cfg.mount.PollInterval, err)
	}
	cfg, _, err = parseArgs([]string{"/s", "/m", "-o", "poll=250ms"}, io.Discard)
	if err != nil || cfg.mount.PollInterval != 250*time.Millisecond || cfg.mount.MountOptions[0] != "" {
		t.Errorf("-o poll=250ms: %v, %q, %v", cfg.mount.PollInterval, cfg.mount.MountOptions, err)
	}
	for _, bad := range [][]string{{"--poll", "1ms", "/m"}, {"--poll=-1s", "/m"}, {"-o", "poll=soon", "/m"}} {
		if _, _, err := parseArgs(bad, io.Discard); err == nil || !strings.Contains(err.Error(), "poll") {
			t.Errorf("%q: %v, want an error about the interval", bad, err)
		}
	}
}
