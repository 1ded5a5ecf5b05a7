package cache

import (
	"testing"

	"github.com/pifs/pifs/internal/gen"
)

// TestSqueeze: asked to keep n bytes below its budget, the cache drops
// its least recently used sessions at once (not at the next parse) until
// what it holds fits, keeps the most recent, and takes more again once
// the squeeze is lifted; it never gives up more than half its budget.
func TestSqueeze(t *testing.T) {
	files, x, st := genCache(t, gen.StoreSpec{Sessions: 40, Projects: 1, Seed: 3, MinEntries: 50, AvgBytes: 500}, 5<<20)
	parse := func() { withEach(t, x, st, files, func(*Session) {}) }
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
