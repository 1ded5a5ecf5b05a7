package view

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
)

// TestIndexCountedInBudget: what the index holds of every session file
// counts against the budget with the parsed sessions, so that on a store
// of many sessions the sessions parsed leave room for it: after every
// session is parsed once, the sessions held, the index, the usage
// records, the plans and the nodes come to the budget at most (and the
// one session just parsed, which stays).
func TestIndexCountedInBudget(t *testing.T) {
	dir := t.TempDir()
	files, err := gen.Store(dir, gen.StoreSpec{Sessions: 2000, Projects: 4, Seed: 1, MinEntries: 8, AvgBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	v := New(Options{SessionsDir: dir, CacheBytes: 8 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	st := v.st
	var largest int64
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f.Path), ".jsonl")
		if err := st.withSession(f.Project, name, func(s *session) error {
			largest = max(largest, s.cost)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	index := st.x.Len() * indexFileBytes
	if index < st.budget/4 {
		t.Fatalf("the index holds %d bytes of a %d budget: too little to tell", index, st.budget)
	}
	st.mu.Lock()
	used, held := st.used, st.lru.Len()
	st.mu.Unlock()
	total := used + index + st.usage.held.Load() + st.plans.held.Load() + st.nodes.Load()*nodeBytes
	if total > st.budget+largest {
		t.Errorf("%d sessions parsed: %d held (%d bytes) with an index of %d bytes: %d bytes, budget %d", len(files), held, used, index, total, st.budget)
	}
	if held == 0 {
		t.Error("no session held")
	}
}
