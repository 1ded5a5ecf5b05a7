package fs

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
)

// The tests of this package check the mount's own machinery (the folder
// handles, the notices on the kernel's nodes, panics, the mount table);
// the whole system is tested in package e2e.

// mountFS mounts o in a temporary folder, quietly, until the test ends,
// and gives the FS and the mountpoint.
func mountFS(t *testing.T, o Options) (*FS, string) {
	t.Helper()
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := Mount(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unmount() })
	return m, m.Mountpoint
}

// genProject makes a store of one project, --home-user-NAME--, of n
// generated sessions (see gen.Project).
func genProject(t *testing.T, name string, n, entries, avgBytes int) string {
	t.Helper()
	store := t.TempDir()
	if err := gen.Project(store, name, n, entries, avgBytes); err != nil {
		t.Fatal(err)
	}
	return store
}

// eventually polls cond every 50ms for up to 2s.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %q after 2s", what, got)
		}
	}
}

// TestWalkShedsEvictedSessions: after grep -r over more sessions than the
// cache holds, pifs keeps the nodes of entries/, branches/ and tree/ only
// for about the sessions it still caches: the kernel is told to forget the
// names below those folders when a session leaves the cache, so memory
// after a walk follows --cache-size, not the size of the store.
func TestWalkShedsEvictedSessions(t *testing.T) {
	const n = 30
	store := genProject(t, "big", n, 300, 200)
	// A 1 MiB cache holds a handful of these sessions (about 60 KB each,
	// parsed, with their renderings).
	m, mnt := mountFS(t, Options{SessionsDir: store, CacheBytes: 1 << 20})
	if out, err := exec.Command("grep", "-rlc", "NEEDLE-NOT-THERE", mnt).CombinedOutput(); err == nil || len(out) > 0 {
		t.Fatalf("grep -r: %v %s", err, out)
	}
	// held counts the sessions whose heavy folders pifs still holds nodes
	// below.
	held := func() (bool, string) {
		pn := m.root.EmbeddedInode().GetChild("--home-user-big--")
		if pn == nil {
			return false, "the project is not held at all"
		}
		// The walk read every session (the names in the folders it left
		// may be forgotten too, as the nodes pass their share).
		count, walked := 0, parsed(t, mnt)
		for _, sn := range pn.Children() {
			for _, name := range []string{"entries", "branches", "tree"} {
				if d := sn.GetChild(name); d != nil && len(d.Children()) > 0 {
					count++
					break
				}
			}
		}
		return count <= n/3 && walked >= n, fmt.Sprintf("%d of %d walked sessions still hold entry nodes", count, walked)
	}
	eventually(t, "the nodes of evicted sessions are let go", held)
}

// parsed is how many sessions the mount at mnt parsed, as .pifs/stats
// tells.
func parsed(t *testing.T, mnt string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(mnt, ".pifs", "stats"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Cache struct{ Parsed int } }
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s.Cache.Parsed
}
