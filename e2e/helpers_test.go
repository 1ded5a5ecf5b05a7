package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
)

// testMount mounts store in a temporary directory and unmounts it when the
// test ends. FUSE debug output shows only with -v. When FUSE is not
// available the test is skipped, unless PIFS_REQUIRE_FUSE=1.
func testMount(t *testing.T, store string, opts ...func(*fs.Options)) string {
	t.Helper()
	mnt := t.TempDir()
	o := fs.Options{SessionsDir: store, Debug: testing.Verbose(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if testing.Verbose() {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	for _, fn := range opts {
		fn(&o)
	}
	m, err := fs.Mount(mnt, o)
	if err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatalf("mount: %v", err)
		}
		t.Skipf("cannot mount FUSE: %v", err)
	}
	t.Cleanup(func() {
		// A follower the test killed (less under script) may hold a file
		// open for a moment longer: the mount is busy until it is gone.
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if err = m.Unmount(); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return mnt
}

// Fixture: one project with one session holding two branches, a label and
// a session name.
const (
	fixProject = "--work-proj--"
	fixSession = "2024-01-01T00-00-00-000Z_11111111-2222-3333-4444-555555555555"
	fixID      = "11111111-2222-3333-4444-555555555555"
)

var fixLines = []string{
	`{"type":"session","version":3,"id":"11111111-2222-3333-4444-555555555555","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/work/proj"}`,
	`{"type":"model_change","id":"m0","parentId":null,"timestamp":"2024-01-01T00:00:00.500Z","provider":"anthropic","modelId":"claude-x"}`,
	`{"type":"message","id":"a1","parentId":"m0","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1704067201000}}`,
	`{"type":"message","id":"a2","parentId":"a1","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"hi there"},{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"ls"}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"cost":{"total":0.01}},"timestamp":1704067202000}}`,
	`{"type":"message","id":"a3","parentId":"a2","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"file1\nfile2"}],"isError":false,"timestamp":1704067203000}}`,
	`{"type":"message","id":"b1","parentId":"a1","timestamp":"2024-01-01T00:00:04.000Z","message":{"role":"user","content":"other branch","timestamp":1704067204000}}`,
	`{"type":"label","id":"l1","parentId":"b1","timestamp":"2024-01-01T00:00:05.000Z","targetId":"a2","label":"good/one"}`,
	`{"type":"session_info","id":"s1","parentId":"l1","timestamp":"2024-01-01T00:00:06.000Z","name":"My session"}`,
}

// writeStore makes a store holding the fixture and returns its path and the
// session file's path.
func writeStore(t *testing.T) (store, file string) {
	t.Helper()
	store = t.TempDir()
	dir := filepath.Join(store, fixProject)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, fixSession+".jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(fixLines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return store, file
}

func sessionPath(mnt string) string { return filepath.Join(mnt, fixProject, fixSession) }

// command runs prog in dir. The child changes into dir only after exec,
// through sh: a forked child of the test process must never touch the
// mount before exec, or it can block on the file system this very process
// serves while the Go runtime waits for the forking thread (vfork).
func command(dir, prog string, args ...string) *exec.Cmd {
	if dir == "" {
		return exec.Command(prog, args...)
	}
	return exec.Command("sh", append([]string{"-c", `cd "$0" && exec "$@"`, dir, prog}, args...)...)
}

// run runs a program and returns its standard output; it fails the test
// when the program fails.
func run(t *testing.T, dir, prog string, args ...string) string {
	t.Helper()
	cmd := command(dir, prog, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", prog, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// runStatus runs a program and returns its output and exit code.
func runStatus(t *testing.T, dir, prog string, args ...string) (string, int) {
	t.Helper()
	cmd := command(dir, prog, args...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return string(out), 0
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// hashTree hashes every file of a directory tree with its name, mode and
// mtime, to tell that nothing changed.
func hashTree(t *testing.T, root string) string {
	t.Helper()
	var names []string
	sums := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		sum := fi.Mode().String() + " " + fi.ModTime().String()
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(data)
			sum += " " + hex.EncodeToString(h[:])
		}
		names = append(names, rel)
		sums[rel] = sum
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		io.WriteString(h, n+"\x00"+sums[n]+"\n")
	}
	return hex.EncodeToString(h.Sum(nil))
}

// eventually polls cond every 50ms for up to 2s.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %q after 2s", what, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
