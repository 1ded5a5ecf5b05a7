package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Faults under the mount: a full disk, a FIFO where a session was.

// smallTmpfs mounts a tmpfs of the given size (root only).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatalf("mount tmpfs: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
	return dir
}

// TestFullDiskAppend: a store on a 1 MiB tmpfs with 20 KB free; a 100 KB line
// to append gets ENOSPC (not EIO) and the file stays byte for byte as it
// was, with the reason in errors.
func TestFullDiskAppend(t *testing.T) {
	store := smallTmpfs(t, "1m")
	dir := filepath.Join(store, fixProject)
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, fixSession+".jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(fixLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(store, &st); err != nil {
		t.Fatal(err)
	}
	if avail := int64(st.Bavail) * int64(st.Bsize); avail > 20<<10 {
		if err := os.WriteFile(filepath.Join(store, "filler"), make([]byte, avail-20<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := readText(t, file)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	out := py(t, s, `
import os
fd = os.open("append", os.O_WRONLY)
os.write(fd, b'{"role":"user","content":"' + b"x" * 100000 + b'"}\n')
try:
    os.close(fd); print("closed")
except OSError as e: print("close", e.errno)
`)
	if out != "close 28\n" {
		t.Errorf("python: %q, want ENOSPC (28) at close", out)
	}
	if readText(t, file) != before {
		t.Fatal("the file changed: a partial line is left")
	}
	if last := lastError(t, s); !strings.Contains(last, "no space left on device") || !strings.Contains(last, "cut back") {
		t.Errorf("errors: %q", last)
	}
}

// TestFIFORace: a FIFO renamed over a session file, again and again, while
// the session is read through the mount: no read ever hangs (a plain open
// of the FIFO in pifs would block for ever, its reader unkillable). The
// timeout only detects a hang; it measures nothing.
func TestFIFORace(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	reg, _ := os.ReadFile(file)
	dir := filepath.Dir(file)
	const iterations = 300
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp, fifo := filepath.Join(dir, ".tmp"), filepath.Join(dir, ".f")
		for i := 0; i < iterations; i++ {
			os.WriteFile(tmp, reg, 0o644)
			os.Rename(tmp, file)
			os.Remove(fifo)
			syscall.Mkfifo(fifo, 0o644)
			os.Rename(fifo, file)
		}
	}()
	reads := 0
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		for _, name := range []string{"leaf", "session.jsonl", "info.json"} {
			finished := make(chan struct{})
			go func() {
				defer close(finished)
				os.ReadFile(filepath.Join(s, name))
				os.ReadDir(filepath.Join(mnt, fixProject))
			}()
			select {
			case <-finished:
			case <-time.After(20 * time.Second):
				t.Fatalf("a read of %s hangs (after %d reads)", name, reads)
			}
		}
	}
	t.Logf("%d rounds of reads during %d replacements", reads, iterations)
}
