package e2e

import (
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
)

// The built binary as its own process: a mount it serves never deadlocks
// the test process, and signals reach it as they reach a user's pifs.

var built struct {
	sync.Once
	bin string
	err error
}

// buildPifs builds the binary once per test run.
func buildPifs(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	built.Do(func() {
		dir, err := os.MkdirTemp("", "pifs-e2e-bin")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "pifs")
		if out, err := exec.Command("go", "build", "-o", built.bin, "github.com/pifs/pifs/cmd/pifs").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// mountedAt tells whether a mount is at mnt.
func mountedAt(mnt string) bool {
	data, _ := os.ReadFile("/proc/self/mounts")
	return strings.Contains(string(data), " "+mnt+" ")
}

// daemon mounts store with the built binary and returns the mountpoint and
// the serving process's pid; the mount is removed when the test ends.
func daemon(t *testing.T, store string, flags ...string) (string, int) {
	t.Helper()
	bin := buildPifs(t)
	tmp := t.TempDir()
	mnt := filepath.Join(tmp, "mnt")
	os.Mkdir(mnt, 0o755)
	pidFile := filepath.Join(tmp, "pid")
	args := append([]string{"--daemon", "--sessions-dir", store, "--pid-file", pidFile, "--cache-dir", filepath.Join(tmp, "cache")}, flags...)
	if out, err := exec.Command(bin, append(args, mnt)...).CombinedOutput(); err != nil {
		t.Fatalf("pifs --daemon: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file: %q", data)
	}
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 100 && mountedAt(mnt); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if mountedAt(mnt) {
			syscall.Kill(pid, syscall.SIGKILL)
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
			t.Error("still mounted 5s after SIGTERM")
		}
	})
	return mnt, pid
}
