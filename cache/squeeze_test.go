package cache

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
)

// TestSqueeze: asked to keep n bytes below its budget, the cache drops
// its least recently used sessions at once (not at the next parse) until
// what it holds fits, keeps the most recent, and takes more again once
// the squeeze is lifted; it never gives up more than half its budget.
func TestSqueeze(t *testing.T) {
	dir := t.TempDir()
	files, err := gen.Store(dir, gen.StoreSpec{Sessions: 40, Projects: 1, Seed: 3, MinEntries: 50, AvgBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	x := sessions.NewIndex(dir)
	st := New(x, Options{Budget: 5 << 20})
	parse := func() {
		t.Helper()
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f.Path), ".jsonl")
			m, err := x.Lookup(f.Project, name)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.With(f.Project, name, m, func(*Session) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	held := func() (int64, int) {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.used, st.lru.Len()
	}
	parse()
	used, n := held()
	if n != len(files) {
		t.Fatalf("%d of %d sessions held before the squeeze: the cache is too small to tell", n, len(files))
	}
	st.Squeeze(st.budget)
	if got := st.Stats().Squeezed; got != st.budget/2 {
		t.Errorf("squeezed %d, want at most half the budget, %d", got, st.budget/2)
	}
	after, m := held()
	if room := st.sessionBudget(); after > room || m == 0 {
		t.Errorf("squeezed to %d bytes, the cache holds %d bytes in %d sessions (%d before)", room, after, m, used)
	}
	if m >= n {
		t.Errorf("squeezed, the cache still holds all %d sessions", m)
	}
	st.Squeeze(0)
	parse()
	if _, m := held(); m != len(files) {
		t.Errorf("squeeze lifted, %d of %d sessions held", m, len(files))
	}
}
