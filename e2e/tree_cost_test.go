package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/fs"
)

// combSession writes a session of forks entries in a chain where each
// also has a leaf child of its own (a comb): tree/ nests forks folders
// deep, each holding its entry's file and its leaf's folder. It returns
// the store and the session's folder below the mount.
func combSession(t *testing.T, forks int) (store, folder string) {
	t.Helper()
	store = t.TempDir()
	const proj, name = "--home-user-comb--", "2026-01-01T00-00-00-000Z_c0mb0000-0000-4000-8000-000000000000"
	if err := os.MkdirAll(filepath.Join(store, proj), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(store, proj, name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"type":"session","version":3,"id":"c0mb0000-0000-4000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/user/comb"}`)
	entry := func(id, parent string) {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		fmt.Fprintf(w, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"%s","timestamp":1767225600000}}`+"\n", id, p, id)
	}
	parent := ""
	for i := 0; i < forks; i++ {
		c := fmt.Sprintf("c%07d", i)
		entry(c, parent)
		entry(fmt.Sprintf("l%07d", i), c)
		parent = c
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return store, proj + "/" + name
}

// TestTreeWalkLinearInForks: find over tree/ of a session of 10,000 forks
// (10,000 folders nested, 20,000 entries) follows at most a few parent
// links per entry in all: where an entry's folder and position are and
// what owns it come from tables made once per version, never from a walk
// up the tree per lookup (which costs the square of the forks).
func TestTreeWalkLinearInForks(t *testing.T) {
	const forks = 10000
	store, folder := combSession(t, forks)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store})
	before := m.Stats().Cache.ParentSteps
	// Paths reach 90 KB: print one byte per name, not the names.
	out := run(t, filepath.Join(mnt, folder), "find", "tree", "-printf", "x")
	entries := 2 * forks
	// Every entry's file, a folder per segment (a leaf starts its own),
	// and tree/ itself; the last entry and its leaf are one segment.
	if got, want := len(out), entries+2*forks; got != want {
		t.Fatalf("find tree listed %d names; want %d", got, want)
	}
	steps := m.Stats().Cache.ParentSteps - before
	t.Logf("find tree over %d entries: %d parent links followed", entries, steps)
	if steps > 4*int64(entries) {
		t.Errorf("find tree over %d entries followed %d parent links; want at most %d (4 per entry)", entries, steps, 4*entries)
	}
	if strings.Contains(out, "\n") {
		t.Errorf("find printed something else: %.200q", out)
	}
}
