package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// reader is cat of an events file, as root or as user 65534.
type reader struct {
	cmd *exec.Cmd
	out lockedBuffer
}

// lockedBuffer is what a process wrote, read while it writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func readEvents(t *testing.T, asNobody bool, path string) *reader {
	t.Helper()
	r := &reader{cmd: exec.Command("cat", path)}
	if asNobody {
		r.cmd = exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", path)
	}
	r.cmd.Stdout = &r.out
	r.cmd.Stderr = &r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.stop() })
	// The stream starts with its open line.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(r.out.String(), `"event":"open"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no open line: %q", path, r.out.String())
		}
	}
	return r
}

func (r *reader) stop() string {
	if r.cmd.ProcessState == nil {
		r.cmd.Process.Signal(syscall.SIGTERM)
		r.cmd.Wait()
	}
	return r.out.String()
}

// TestEventsAndActivePerCaller: on a shared mount, another user's events
// (the store's and a project's), active/ and a session's forks/ tell only
// of the sessions whose file they may read and whose folder they may
// search: the changes to a 0600 session of root's, in a folder they may
// enter or not, never reach them, nor its link in active/, forks/ or a
// fork's parent; root sees all.
func TestEventsAndActivePerCaller(t *testing.T) {
	bin := buildPifs(t)
	store, own, private := sharedStore(t)
	gamma := filepath.Join(store, "--home-dev-gamma--")
	os.Mkdir(gamma, 0o755)
	os.Chmod(gamma, 0o755)
	// A private fork of the other user's session, in a folder they may
	// enter.
	secret := filepath.Join(gamma, "2024-01-03T00-00-00-000Z_33333333-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(secret, []byte(`{"type":"session","version":3,"id":"33333333-2222-3333-4444-555555555555","timestamp":"2024-01-03T00:00:00.000Z","cwd":"/home/dev/gamma","parentSession":"`+own+`"}
{"type":"message","id":"c1","parentId":null,"timestamp":"2024-01-03T00:00:01.000Z","message":{"role":"user","content":"private words","timestamp":1704240001000}}
`), 0o600)
	// A fork others may read of a session they may not: its parent link
	// would tell of that one.
	child := filepath.Join(gamma, "2024-01-05T00-00-00-000Z_55555555-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(child, []byte(`{"type":"session","version":3,"id":"55555555-2222-3333-4444-555555555555","timestamp":"2024-01-05T00:00:00.000Z","cwd":"/home/dev/gamma","parentSession":"`+private+`"}
`), 0o644)
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	ownDir := filepath.Join(mnt, "--home-dev-alpha--", strings.TrimSuffix(filepath.Base(own), ".jsonl"))

	rootAll := readEvents(t, false, filepath.Join(mnt, "events"))
	theirAll := readEvents(t, true, filepath.Join(mnt, "events"))
	theirGamma := readEvents(t, true, filepath.Join(mnt, "--home-dev-gamma--", "events"))
	theirAlpha := readEvents(t, true, filepath.Join(mnt, "--home-dev-alpha--", "events"))

	// Every session changes: their own, the private ones, and a new
	// private one.
	appendTo := func(file, line string) {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line + "\n")
		f.Close()
	}
	appendTo(own, `{"type":"message","id":"a2","parentId":"a1","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"mine","timestamp":1704067202000}}`)
	appendTo(private, `{"type":"message","id":"b2","parentId":"b1","timestamp":"2024-01-02T00:00:03.000Z","message":{"role":"user","content":"hidden","timestamp":1704153603000}}`)
	appendTo(secret, `{"type":"message","id":"c2","parentId":"c1","timestamp":"2024-01-03T00:00:02.000Z","message":{"role":"user","content":"hidden","timestamp":1704240002000}}`)
	fresh := filepath.Join(gamma, "2024-01-04T00-00-00-000Z_44444444-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(fresh, []byte(`{"type":"session","version":3,"id":"44444444-2222-3333-4444-555555555555","timestamp":"2024-01-04T00:00:00.000Z","cwd":"/home/dev/gamma"}
{"type":"message","id":"d1","parentId":null,"timestamp":"2024-01-04T00:00:01.000Z","message":{"role":"user","content":"new and private","timestamp":1704326401000}}
`), 0o600)
	os.Chmod(fresh, 0o600)
	// Their own session again, last: once root's reader has it, every
	// reader has been given all the lines before it.
	appendTo(own, `{"type":"message","id":"a3","parentId":"a2","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"user","content":"mine again","timestamp":1704067203000}}`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := rootAll.out.String()
		if strings.Contains(got, `"id":"a3"`) && strings.Contains(got, `"id":"b2"`) && strings.Contains(got, `"id":"c2"`) && strings.Contains(got, `"id":"d1"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("root's events lack lines:\n%s", got)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(theirAll.out.String(), `"id":"a3"`) || !strings.Contains(theirAlpha.out.String(), `"id":"a3"`); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("their events lack their own session's lines:\n%s\n%s", theirAll.out.String(), theirAlpha.out.String())
		}
	}
	time.Sleep(200 * time.Millisecond)
	leaks := []string{"22222222", "33333333", "44444444", `"b2"`, `"c2"`, `"d1"`}
	for name, r := range map[string]*reader{"events": theirAll, "gamma/events": theirGamma, "alpha/events": theirAlpha} {
		out := r.stop()
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Errorf("another user's %s tells of a session they may not read (%s):\n%s", name, l, out)
			}
		}
		if name != "gamma/events" && !strings.Contains(out, `"id":"a2"`) {
			t.Errorf("another user's %s lacks their own session:\n%s", name, out)
		}
	}

	// active/ and forks/, as each reads them.
	childDir := filepath.Join(mnt, "--home-dev-gamma--", strings.TrimSuffix(filepath.Base(child), ".jsonl"))
	look := `cd ` + mnt + ` && ls -la -- active --home-dev-gamma--/active --home-dev-alpha--/active ` + ownDir + `/forks ` + childDir +
		`; readlink active/* ` + ownDir + `/forks/* ` + childDir + `/parent; true`
	seen, _ := asNobody(t, look)
	for _, l := range []string{"22222222", "33333333", "44444444"} {
		if strings.Contains(seen, l) {
			t.Errorf("another user's active/ or forks/ shows a session they may not read (%s):\n%s", l, seen)
		}
	}
	if !strings.Contains(seen, "11111111") {
		t.Errorf("another user's active/ lacks their own session:\n%s", seen)
	}
	if strings.Contains(seen, " parent") {
		t.Errorf("another user sees the parent link to a session they may not read:\n%s", seen)
	}
	all, err := exec.Command("sh", "-c", look).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"11111111", "22222222", "33333333", "44444444"} {
		if !strings.Contains(string(all), l) {
			t.Errorf("root does not see %s in active/ or forks/:\n%s", l, all)
		}
	}
	if fi, err := os.Lstat(filepath.Join(ownDir, "forks", strings.TrimSuffix(filepath.Base(secret), ".jsonl"))); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("root's forks/ lacks the fork: %v", err)
	}
}

// TestTrashPerCaller: trash/ shows another user a trashed session only
// when they may read its file and search the trash folder that holds it:
// none while the trash of the user pifs runs as is closed to them (as the
// trash specification makes it), then only their own session once they
// may enter it; root sees all.
func TestTrashPerCaller(t *testing.T) {
	bin := buildPifs(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	store, own, private := sharedStore(t)
	gamma := filepath.Join(store, "--home-dev-gamma--")
	os.Mkdir(gamma, 0o755)
	os.Chmod(gamma, 0o755)
	secret := filepath.Join(gamma, "2024-01-03T00-00-00-000Z_33333333-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(secret, []byte(`{"type":"session","version":3,"id":"33333333-2222-3333-4444-555555555555","timestamp":"2024-01-03T00:00:00.000Z","cwd":"/home/dev/gamma"}
`), 0o600)
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{own, private, secret} {
		os.Chtimes(f, old, old)
	}
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	for _, f := range []string{own, private, secret} {
		rel, _ := filepath.Rel(store, strings.TrimSuffix(f, ".jsonl"))
		if out, err := exec.Command("mv", filepath.Join(mnt, rel), filepath.Join(mnt, "trash")+"/").CombinedOutput(); err != nil {
			t.Fatalf("mv %s to trash/: %v\n%s", rel, err, out)
		}
	}
	look := `ls -la ` + filepath.Join(mnt, "trash") + `; true`
	all, _ := exec.Command("sh", "-c", look).CombinedOutput()
	for _, id := range []string{"11111111", "22222222", "33333333"} {
		if !strings.Contains(string(all), id) {
			t.Errorf("root's trash/ lacks %s:\n%s", id, all)
		}
	}
	seen, _ := asNobody(t, look)
	for _, id := range []string{"11111111", "22222222", "33333333"} {
		if strings.Contains(seen, id) {
			t.Errorf("another user's trash/ shows %s from a trash they may not enter:\n%s", id, seen)
		}
	}

	// The trash opened to them: their own session shows, once the mount
	// has seen a change (what a caller sees is worked out per version of
	// the index).
	for p := filepath.Join(home, ".local", "share", "Trash", "files"); p != filepath.Dir(home); p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	os.Chmod(filepath.Dir(home), 0o755)
	other := filepath.Join(store, "--home-nobody--", "x.jsonl")
	os.WriteFile(other, []byte(`{"type":"session","version":3,"id":"99999999-2222-3333-4444-555555555555","timestamp":"2024-01-09T00:00:00.000Z","cwd":"/home/nobody"}`+"\n"), 0o644)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(mnt, "--home-nobody--", "x")); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	seen, _ = asNobody(t, look)
	if !strings.Contains(seen, "11111111") {
		t.Errorf("another user's trash/ lacks their own session in a trash they may enter:\n%s", seen)
	}
	for _, id := range []string{"22222222", "33333333"} {
		if strings.Contains(seen, id) {
			t.Errorf("another user's trash/ shows %s, which they may not read:\n%s", id, seen)
		}
	}
}
