package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// countFds is the number of descriptors process pid holds.
func countFds(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestFdsBoundedPerOpen: a reader holding thousands of session.jsonl open
// (400 sessions, 10 opens each) does not make pifs hold a descriptor per
// open: pifs keeps at most one per file and a bounded number in all, every
// open file still reads its file's bytes, and other users' reads go on.
func TestFdsBoundedPerOpen(t *testing.T) {
	bin := buildPifs(t)
	store := filepath.Join(t.TempDir(), "store")
	proj := filepath.Join(store, "--p--")
	os.MkdirAll(proj, 0o755)
	const sessions, opens = 400, 10
	for i := 0; i < sessions; i++ {
		os.WriteFile(filepath.Join(proj, fmt.Sprintf("s%04d.jsonl", i)), []byte(fmt.Sprintf(`{"type":"session","version":3,"id":"id-%04d","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hello %d"}}
`, i, i)), 0o644)
	}
	mnt, pid := daemon(t, bin, store)
	base := countFds(t, pid)

	// A reader opens every session.jsonl ten times and holds them, says
	// so, reads each to the end when told, and says whether every read
	// gave its file's bytes.
	script := fmt.Sprintf(`
import os, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = []
for i in range(%d):
    p = "%s/--p--/s%%04d/session.jsonl" %% i
    for _ in range(%d):
        held.append((os.open(p, os.O_RDONLY), "%s/--p--/s%%04d.jsonl" %% i))
print("held", len(held), flush=True)
sys.stdin.readline()
bad = 0
for fd, src in held:
    if os.pread(fd, 1 << 20, 0) != open(src, "rb").read():
        bad += 1
print("bad", bad, flush=True)
`, sessions, mnt, opens, store)
	cmd := exec.Command("python3", "-c", script)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != fmt.Sprintf("held %d", sessions*opens) {
		t.Fatalf("the reader did not open its files: %q", lines.Text())
	}
	held := countFds(t, pid)
	// Meanwhile another reader is served.
	if data, err := os.ReadFile(filepath.Join(mnt, "--p--", "s0007", "context.json")); err != nil || !strings.Contains(string(data), "hello 7") {
		t.Errorf("another read while %d files are held: %v", sessions*opens, err)
	}
	fmt.Fprintln(stdin)
	if !lines.Scan() || lines.Text() != "bad 0" {
		t.Errorf("reads of the held files: %q, want every one its file's bytes", lines.Text())
	}
	during := countFds(t, pid)
	stdin.Close()
	cmd.Wait()
	t.Logf("pifs holds %d descriptors idle, %d with %d files held open, %d after reading them all", base, held, sessions*opens, during)
	if held-base > maxRawFds+16 || during-base > maxRawFds+16 {
		t.Errorf("pifs went from %d descriptors to %d (%d after reading) for %d open files of %d sessions; want at most %d more", base, held, during, sessions*opens, sessions, maxRawFds+16)
	}
}

// maxRawFds is nodes.maxRawFds: the descriptors pifs keeps for open
// session.jsonl files.
const maxRawFds = 256
