package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/internal/gen"
)

// TestGrepParsesOncePerSession: grep -r over a store much larger than the
// cache (40 sessions of 300 KB and two of 3 MB, a 16 MiB cache that holds
// a few of them parsed with their views) parses each session once: the
// walk reads every view of a session, one after the other, and what is
// made ahead of it must neither push the session it is in out of the
// cache (a large one, with the small ones made ahead of it) nor be made,
// dropped and made again.
func TestGrepParsesOncePerSession(t *testing.T) {
	const n = 40
	store := genProject(t, "grep", n, 300, 1000)
	for i, at := range []string{"10-00-15-500Z", "10-00-30-500Z"} {
		f, err := os.Create(filepath.Join(store, "--home-user-grep--", "2025-05-12T"+at+fmt.Sprintf("_big%d.jsonl", i)))
		if err != nil {
			t.Fatal(err)
		}
		err = gen.Write(f, gen.Spec{ID: fmt.Sprintf("0196c3ef-e100-70f4-96f8-00000000b1g%d", i), Cwd: "/home/user/grep",
			Start: time.Date(2025, 5, 12, 10, 0, 15+15*i, 0, time.UTC), Seed: int64(100 + i), Entries: 3000, AvgBytes: 1000})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheBytes: 16 << 20})
	if out, code := runStatus(t, mnt, "grep", "-r", "-l", "no such needle anywhere", "./--home-user-grep--"); code != 1 {
		t.Fatalf("grep -r: exit %d: %s", code, out)
	}
	st := m.Stats()
	t.Logf("%d parses of %d sessions; %d renderings made ahead, %d sessions left to the walk", st.Cache.Parsed, n+2, st.Cache.AheadMade, st.Cache.AheadGaveUp)
	if st.Cache.Parsed > n+2 {
		t.Errorf("grep -r over %d sessions parsed %d: %+v", n+2, st.Cache.Parsed, st.Cache)
	}
}
