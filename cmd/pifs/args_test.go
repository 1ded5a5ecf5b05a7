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

// TestHelpDefaultsOnce: each flag of --help says its default once at
// most: pflag's "(default X)" is left out where the usage names the
// default in words (--tz's "the local zone"), and a flag with a default
// still says it.
func TestHelpDefaultsOnce(t *testing.T) {
	var help strings.Builder
	if _, done, err := parseArgs([]string{"--help"}, &help); err != nil || !done {
		t.Fatalf("--help: %v", err)
	}
	flagsPart, _, _ := strings.Cut(help.String(), "\nMount options")
	_, flagsPart, _ = strings.Cut(flagsPart, "\nFlags:\n")
	blocks := map[string]string{}
	var name string
	for _, line := range strings.Split(flagsPart, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "-") {
			name = f[0]
			if strings.HasSuffix(name, ",") {
				name = f[1]
			}
		}
		blocks[name] += line + "\n"
	}
	if len(blocks) < 10 {
		t.Fatalf("found %d flags in --help:\n%s", len(blocks), help.String())
	}
	for name, b := range blocks {
		if n := len(defaultWords.FindAllString(b, -1)); n > 1 {
			t.Errorf("%s says its default %d times:\n%s", name, n, b)
		}
	}
	for name, want := range map[string]string{"--tz": "default the local zone", "--cache-size": "(default 256MiB)", "--poll": "(default 0s)"} {
		if !strings.Contains(strings.Join(strings.Fields(blocks[name]), " "), want) {
			t.Errorf("%s does not say %q:\n%s", name, want, blocks[name])
		}
	}
}
