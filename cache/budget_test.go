package cache

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
)

// TestIndexCountedInBudget: what the index holds of every session file
// counts against the budget with the parsed sessions, so that on a store
// of many sessions the sessions parsed leave room for it: after every
// session is parsed once, the sessions held, the index, the plans and the
// nodes come to the budget at most (and the one session just parsed,
// which stays).
func TestIndexCountedInBudget(t *testing.T) {
	dir := t.TempDir()
	files, err := gen.Store(dir, gen.StoreSpec{Sessions: 2000, Projects: 4, Seed: 1, MinEntries: 8, AvgBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	x := sessions.NewIndex(dir)
	st := New(x, Options{Budget: 8 << 20})
	var largest int64
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f.Path), ".jsonl")
		m, err := x.Lookup(f.Project, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.With(f.Project, name, m, func(s *Session) error {
			largest = max(largest, s.cost)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	index := x.Len() * IndexFileBytes
	if index < st.budget/4 {
		t.Fatalf("the index holds %d bytes of a %d budget: too little to tell", index, st.budget)
	}
	st.mu.Lock()
	used, held := st.used, st.lru.Len()
	st.mu.Unlock()
	total := used + index + st.plans.held.Load() + st.nodes.Load()*nodeBytes
	if total > st.budget+largest {
		t.Errorf("%d sessions parsed: %d held (%d bytes) with an index of %d bytes: %d bytes, budget %d", len(files), held, used, index, total, st.budget)
	}
	if held == 0 {
		t.Error("no session held")
	}
}
