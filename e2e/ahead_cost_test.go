package e2e

import (
	"testing"

	"github.com/pifs/pifs/fs"
)

// TestReadAheadWithinBudget: grep -r over a generated store, through the
// mount, at a cache of 1 MiB and of 64 MiB. Reading ahead of the walk
// makes renderings the walk then reads: none is dropped before the walk
// reads it, however small the cache (what the cache cannot hold is left
// to the walk), and the walk parses each session about once; with room,
// it reads ahead.
func TestReadAheadWithinBudget(t *testing.T) {
	store := genProject(t, "ahead", 40, 100, 300)
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"1MiB", 1 << 20}, {"64MiB", 64 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheBytes: c.bytes})
			if out, code := runStatus(t, mnt, "grep", "-r", "-l", "no such needle anywhere", "."); code != 1 {
				t.Fatalf("grep -r: exit %d: %s", code, out)
			}
			st := m.Stats()
			t.Logf("cache %s: %d renderings made ahead, %d dropped unread, %d sessions left to the walk, %d parses",
				c.name, st.Cache.AheadMade, st.Cache.AheadUnread, st.Cache.AheadGaveUp, st.Cache.Parsed)
			if st.Cache.AheadUnread != 0 {
				t.Errorf("cache %s: %d of %d renderings made ahead were dropped before grep read them; want none",
					c.name, st.Cache.AheadUnread, st.Cache.AheadMade)
			}
			// What the walk itself could not keep it parses again, but
			// not session after session.
			if st.Cache.Parsed > 2*40 {
				t.Errorf("cache %s: grep -r over 40 sessions parsed %d", c.name, st.Cache.Parsed)
			}
			if c.bytes == 64<<20 && st.Cache.AheadMade == 0 {
				t.Errorf("cache %s: nothing was made ahead of grep -r", c.name)
			}
		})
	}
}
