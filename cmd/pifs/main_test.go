package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDaemon builds pifs, mounts a store with --daemon, browses it from
// another process, stops it with SIGTERM and checks that no mount is left.
// pifs runs as its own process, so a mount can never deadlock the test.
func TestDaemon(t *testing.T) {
	bin := buildPifs(t)
	tmp := t.TempDir()
	store := filepath.Join(tmp, "store")
	proj := filepath.Join(store, "--p--")
	os.MkdirAll(proj, 0o755)
	session := `{"type":"session","version":3,"id":"sid","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}
`
	os.WriteFile(filepath.Join(proj, "s1.jsonl"), []byte(session), 0o644)
	mnt := filepath.Join(tmp, "mnt")
	os.Mkdir(mnt, 0o755)
	pidFile := filepath.Join(tmp, "pid")

	// Refusals come back from the parent, with the child's reason.
	out, err := exec.Command(bin, "--daemon", "--sessions-dir", store, proj).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "inside the sessions directory") {
		t.Errorf("mount inside the store: %v: %s", err, out)
	}

	cmd := exec.Command(bin, "--daemon", "--sessions-dir", store, "--pid-file", pidFile, "-o", "ro", mnt)
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "fusermount") || strings.Contains(string(out), "permission") {
			skipOrFail(t, string(out))
		}
		t.Fatalf("pifs --daemon: %v\n%s", err, out)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	t.Cleanup(func() {
		if mounted(mnt) {
			syscall.Kill(pid, syscall.SIGKILL)
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
	})
	// --daemon returned: the mount is ready now.
	if !mounted(mnt) {
		t.Fatalf("not mounted after --daemon returned")
	}
	got, err := exec.Command("cat", filepath.Join(mnt, "--p--", "s1", "leaf")).Output()
	if err != nil || string(got) != "a1\n" {
		t.Errorf("cat leaf = %q, %v", got, err)
	}
	got, err = exec.Command("cat", filepath.Join(mnt, "--p--", "s1", "session.jsonl")).Output()
	if err != nil || string(got) != session {
		t.Errorf("cat session.jsonl = %q, %v", got, err)
	}
	if out, err := exec.Command("grep", "-r", "-l", "hello", mnt).Output(); err != nil || !strings.Contains(string(out), "entries/a1.json") {
		t.Errorf("grep -r: %v: %s", err, out)
	}

	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for mounted(mnt) || syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("still mounted or running 5s after SIGTERM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
}

func mounted(mnt string) bool {
	data, _ := os.ReadFile("/proc/self/mounts")
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == mnt {
			return true
		}
	}
	return false
}

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}
