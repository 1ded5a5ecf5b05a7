package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
)

// buildPifs builds the binary once per test run; every test runs it as
// its own process.
func buildPifs(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		skipOrFail(t, "no /dev/fuse")
	}
	built.Do(func() {
		dir, err := os.MkdirTemp("", "pifs-bin")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "pifs")
		if out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

var built struct {
	sync.Once
	bin string
	err error
}

func TestMain(m *testing.M) {
	// Daemons log to the state directory: not the user's.
	state, err := os.MkdirTemp("", "pifs-state")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	// Nor to the user's cache directory: the persistent caches of the
	// tests' stores go to a folder of their own, the oracle stays where
	// it is.
	if os.Getenv("PIFS_ORACLE_DIR") == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if !filepath.IsAbs(cache) {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		os.Setenv("PIFS_ORACLE_DIR", filepath.Join(cache, "pifs", "oracle-1.6.0"))
	}
	// The go command's build cache stays the user's: the tests build pifs.
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
		}
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(state, "cache"))
	code := m.Run()
	os.RemoveAll(state)
	if built.bin != "" {
		os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

// daemon mounts store with the built binary and returns the mountpoint and
// the serving process's pid; the mount is removed when the test ends.
func daemon(t *testing.T, bin, store string, flags ...string) (string, int) {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(mnt, 0o755)
	pidFile := filepath.Join(t.TempDir(), "pid")
	args := append([]string{"--daemon", "--sessions-dir", store, "--pid-file", pidFile}, flags...)
	if out, err := exec.Command(bin, append(args, mnt)...).CombinedOutput(); err != nil {
		t.Fatalf("pifs --daemon: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 100 && mounted(mnt); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if mounted(mnt) {
			syscall.Kill(pid, syscall.SIGKILL)
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
			t.Error("still mounted 5s after SIGTERM")
		}
	})
	return mnt, pid
}

// procField reads a number from /proc/PID/FILE ("rchar" in io, "VmHWM" in
// status; kB for the latter).
func procField(t *testing.T, pid int, file, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/%s", field, pid, file)
	return 0
}

// TestLazyMount: mounting a store of 10,000 sessions reads none of them, and
// listing a project reads only each file's header and last line (its
// folder's mtime is the last entry's time) — the work, counted by the
// kernel, is the same for mounting as for an empty store.
func TestLazyMount(t *testing.T) {
	bin := buildPifs(t)
	empty := t.TempDir()
	big := t.TempDir()
	proj := filepath.Join(big, "--home-u-big--")
	os.Mkdir(proj, 0o755)
	const n = 10000
	for i := 0; i < n; i++ {
		p := filepath.Join(proj, fmt.Sprintf("s%05d.jsonl", i))
		os.WriteFile(p, []byte(fmt.Sprintf(`{"type":"session","version":3,"id":"id-%05d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/big"}`+"\n", i)), 0o644)
		os.Truncate(p, 256<<10) // a 256 KiB body, sparse, then a last entry
		f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		fmt.Fprintf(f, "\n"+`{"type":"message","id":"m","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"x"}}`+"\n")
		f.Close()
	}
	// The search index reads the whole store once, in the background,
	// on a store's first mount (search's own tests and bench measure
	// it); what is checked here is what mounting and listing read.
	_, emptyPid := daemon(t, bin, empty, "--index", "none")
	mnt, pid := daemon(t, bin, big, "--index", "none")
	emptyRead, bigRead := procField(t, emptyPid, "io", "rchar"), procField(t, pid, "io", "rchar")
	t.Logf("bytes read while mounting: empty store %d, 10,000 sessions %d", emptyRead, bigRead)
	if bigRead > emptyRead+64<<10 {
		t.Errorf("mounting 10,000 sessions read %d bytes, an empty store %d: sessions were read", bigRead, emptyRead)
	}
	out, err := exec.Command("ls", filepath.Join(mnt, "--home-u-big--")).Output()
	if err != nil || len(strings.Fields(string(out))) != n+8 { // and active, by-file, by-name, cwd, errors, latest, new, usage
		t.Fatalf("ls: %v, %d names", err, len(strings.Fields(string(out))))
	}
	listed := procField(t, pid, "io", "rchar") - bigRead
	t.Logf("ls of 10,000 sessions read %d bytes (%.0f per session)", listed, float64(listed)/n)
	if listed > n*16384 {
		t.Errorf("listing read %d bytes: more than headers and last lines", listed)
	}
}

// TestCacheBound: with --cache-size 16MiB, reading the context of 12
// sessions of 10 MB keeps at most a few parsed; peak memory stays well under what
// the same reads cost with room for all of them.
func TestCacheBound(t *testing.T) {
	bin := buildPifs(t)
	store := t.TempDir()
	proj := filepath.Join(store, "--p--")
	os.Mkdir(proj, 0o755)
	const sessions = 12
	for i := 0; i < sessions; i++ {
		f, _ := os.Create(filepath.Join(proj, fmt.Sprintf("s%02d.jsonl", i)))
		if err := gen.Session(f, 6000, 1650); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	peak := func(cache string) int64 {
		mnt, pid := daemon(t, bin, store, "--cache-size", cache)
		for i := 0; i < sessions; i++ {
			if out, err := exec.Command("cat", filepath.Join(mnt, "--p--", fmt.Sprintf("s%02d", i), "context.json")).Output(); err != nil || len(out) < 1000 {
				t.Fatalf("cat context.json: %v (%d bytes)", err, len(out))
			}
		}
		return procField(t, pid, "status", "VmHWM")
	}
	bounded, unbounded := peak("16MiB"), peak("1GiB")
	t.Logf("peak RSS after reading %d sessions of 10 MB: cache 16MiB: %d MB, cache 1GiB: %d MB", sessions, bounded>>10, unbounded>>10)
	if bounded*2 > unbounded {
		t.Errorf("--cache-size 16MiB peaked at %d kB, no eviction at %d kB: the cache is not bounded", bounded, unbounded)
	}
}
