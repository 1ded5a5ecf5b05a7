package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/oracle"
)

// piAppender starts pi's own SessionManager on a session file; each call
// appends a user message through it and returns the new entry's id.
func piAppender(t *testing.T, file string) func(text string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "append.mjs")
	os.WriteFile(script, []byte(`
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";
const { SessionManager } = await import(pathToFileURL(join(process.env.PIFS_ORACLE_DIR,
  "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href);
const sm = SessionManager.open(process.argv[2]);
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const id = sm.appendMessage({ role: "user", content: [{ type: "text", text: line }], timestamp: Date.now() });
  console.log(id);
}
`), 0o644)
	cmd := oracleCommand(t, script, file)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	r := bufio.NewReader(out)
	return func(text string) string {
		fmt.Fprintln(in, text)
		id, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("pi appender: %v", err)
		}
		return strings.TrimSpace(id)
	}
}

// output collects what a follower prints.
type output struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// follower runs a command that follows a file until the test ends.
func follower(t *testing.T, name string, args ...string) *output {
	t.Helper()
	cmd := exec.Command(name, args...)
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, io.Discard
	cmd.Env = append(os.Environ(), "TERM=dumb", "LESS=", "COLUMNS=200", "LINES=50")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killTree(cmd.Process.Pid); cmd.Wait() })
	return out
}

// killTree kills a process and every process below it: less runs under
// script in a session of its own, which killing script alone leaves
// holding the followed file open, and the mount busy.
func killTree(pid int) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				killTree(n)
			}
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// TestFollowTranscript: tail -f, tail -F and less +F on transcript.md show
// each message pi's SessionManager appends, while they hold the file open;
// fstat on the open file gives the grown size.
func TestFollowTranscript(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	file := files[0]
	dir := filepath.Join(testMount(t, store), filepath.Base(filepath.Dir(file)), strings.TrimSuffix(filepath.Base(file), ".jsonl"))
	transcript := filepath.Join(dir, "transcript.md")

	// An open file grows in place: fstat and reads past the old end.
	fd, err := os.Open(transcript)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	before, _ := io.ReadAll(fd)
	// branches/<leaf>/transcript.md, held open, follows the branch as it
	// grows under that entry.
	leaf := strings.TrimSpace(string(readMount(t, filepath.Join(dir, "leaf"))))
	bfd, err := os.Open(filepath.Join(dir, "branches", leaf, "transcript.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer bfd.Close()
	branchBefore, _ := io.ReadAll(bfd)
	appendByPi := piAppender(t, file)
	id := appendByPi("grown in place")
	eventually(t, "fstat of the open transcript grows", func() (bool, string) {
		fi, err := fd.Stat()
		return err == nil && fi.Size() > int64(len(before)), fmt.Sprint(fi.Size(), " vs ", len(before))
	})
	more, _ := io.ReadAll(fd)
	if !strings.Contains(string(more), "grown in place") || !strings.Contains(string(more), id) {
		t.Fatalf("read past the old end gave %q", more)
	}
	eventually(t, "the open branches/<leaf>/transcript.md grows", func() (bool, string) {
		fi, err := bfd.Stat()
		return err == nil && fi.Size() > int64(len(branchBefore)), fmt.Sprint(fi.Size())
	})
	if more, _ := io.ReadAll(bfd); !strings.Contains(string(more), "grown in place") {
		t.Errorf("the branch transcript grew by %q", more)
	}
	// A new open of that branch shows the path to its own entry only.
	if b := readMount(t, filepath.Join(dir, "branches", leaf, "transcript.md")); string(b) != string(branchBefore) {
		t.Errorf("a new open of branches/%s/transcript.md changed", leaf)
	}
	whole, _ := os.ReadFile(transcript)
	if string(whole) != string(before)+string(more) {
		t.Errorf("the grown file is not the new rendering: %d+%d bytes vs %d", len(before), len(more), len(whole))
	}

	followers := map[string]*output{
		"tail -f": follower(t, "tail", "-n", "+1", "-f", transcript),
		"tail -F": follower(t, "tail", "-n", "+1", "-F", transcript),
		"less +F": follower(t, "script", "-qfc", "less +F "+transcript, "/dev/null"),
	}
	for name, out := range followers {
		waitFor(t, 10*time.Second, name+" shows the transcript", func() (bool, string) {
			return strings.Contains(out.String(), "grown in place"), tailOf(out.String())
		})
	}
	for i := 0; i < 3; i++ {
		text := fmt.Sprintf("followed message %d", i)
		start := time.Now()
		appendByPi(text)
		for name, out := range followers {
			waitFor(t, 10*time.Second, name+" shows "+text, func() (bool, string) {
				return strings.Contains(out.String(), text), tailOf(out.String())
			})
		}
		t.Logf("%s shown by all followers after %v", text, time.Since(start).Round(time.Millisecond))
	}
}

// TestFollowKeepsSnapshot: when the leaf moves to another branch, an open
// transcript keeps serving what it served (never a mix of two renderings),
// and a new open sees the new one.
func TestFollowKeepsSnapshot(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	transcript := filepath.Join(sessionPath(mnt), "transcript.md")
	fd, err := os.Open(transcript)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	before, _ := io.ReadAll(fd)
	if err := writeControl(filepath.Join(sessionPath(mnt), "leaf"), "a1\n"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "new open sees the moved leaf", func() (bool, string) {
		b, _ := os.ReadFile(transcript)
		return len(b) < len(before), fmt.Sprint(len(b))
	})
	rest, _ := io.ReadAll(fd)
	if len(rest) != 0 {
		t.Errorf("the open transcript grew by %q after the leaf moved away", rest)
	}
	if fi, _ := fd.Stat(); fi.Size() != int64(len(before)) {
		t.Errorf("fstat of the open transcript: %d bytes, want its snapshot's %d", fi.Size(), len(before))
	}
}

func tailOf(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}

// waitFor polls cond until it holds; limit only detects a hang.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v; last: %s", what, limit, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
