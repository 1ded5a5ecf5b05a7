package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
)

// TestGlobGrepParsesOnce: grep NEEDLE MNT/*/*/context.json, with a cache
// far smaller than the sessions, parses each session once: the glob's
// stats parse them for the size, and grep's reads, after the cache dropped
// the parses, are made from the plans those parses left, with the same
// bytes a parse gives. A session changed since is parsed again.
func TestGlobGrepParsesOnce(t *testing.T) {
	const n = 12
	store := genProject(t, "glob", n, 300, 800)
	glob := func(mnt string) []string {
		files, err := filepath.Glob(filepath.Join(mnt, "--home-user-glob--", "2025-*", "context.json"))
		if err != nil || len(files) != n {
			t.Fatalf("%d files (%v)", len(files), err)
		}
		return files
	}
	// A file changed in the last 2 s is read by a parse, which checks its
	// bytes (a rewrite within the same timestamp tick keeps the size and
	// times): plans serve older ones.
	racy, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheBytes: 1 << 20})
	// The files are touched just before, so that they are racy however
	// long the generator and the mount took on a loaded machine.
	written := time.Now()
	stored, err := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	if err != nil || len(stored) != n {
		t.Fatalf("%d session files (%v)", len(stored), err)
	}
	for _, f := range stored {
		if err := os.Chtimes(f, written, written); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range glob(mnt) {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range glob(mnt) {
		if _, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	// Only a walk done within the racy window can tell: on a machine so
	// loaded that it took longer, the files are no longer racy when read.
	if got := racy.Stats().Cache.FromPlan; got != 0 && time.Since(written) < 1500*time.Millisecond {
		t.Errorf("%d files of sessions written just before made from plans, want 0", got)
	}
	time.Sleep(2100 * time.Millisecond)

	m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheBytes: 1 << 20})
	files := glob(mnt)
	sizes := map[string]int64{}
	for i := len(files) - 1; i >= 0; i-- { // as bash's glob tests them
		fi, err := os.Stat(files[i])
		if err != nil {
			t.Fatal(err)
		}
		sizes[files[i]] = fi.Size()
	}
	parsed := m.Stats().Cache.Parsed
	if parsed != n {
		t.Fatalf("the stats parsed %d times, want %d", parsed, n)
	}
	// The same files from a mount that keeps every parse.
	_, ref := mountFS(t, fs.Options{SessionsDir: store})
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(ref, p[len(mnt):]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) || int64(len(data)) != sizes[p] {
			t.Fatalf("%s: %d bytes (stat said %d), differ from a parse's %d", p, len(data), sizes[p], len(want))
		}
	}
	if got := m.Stats().Cache.Parsed - parsed; got != 0 {
		t.Errorf("reading %d files after their stats parsed %d sessions again, want 0", n, got)
	}
	if got := m.Stats().Cache.FromPlan; got < n/2 {
		t.Errorf("%d of %d files made from plans; the cache holds far fewer parses", got, n)
	}

	// An append: the new version has no plan, and is parsed.
	src, err := filepath.Glob(filepath.Join(store, "--home-user-glob--", "*.jsonl"))
	if err != nil || len(src) != n {
		t.Fatal(err)
	}
	f, err := os.OpenFile(src[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	const text = "appended after the plan was made"
	_, err = f.WriteString(`{"type":"message","id":"plan0001","parentId":null,"timestamp":"2025-05-12T11:00:00.000Z","message":{"role":"user","content":"` + text + `"}}` + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := m.Stats().Cache.Parsed
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(text)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("context.json does not show the append after 5 s")
		}
	}
	if m.Stats().Cache.Parsed == before {
		t.Error("the changed session was not parsed again")
	}
}
