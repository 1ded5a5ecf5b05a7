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
	files, x, st := genCache(t, gen.StoreSpec{Sessions: 2000, Projects: 4, Seed: 1, MinEntries: 8, AvgBytes: 200}, 8<<20)
	var largest int64
	withEach(t, x, st, files, func(s *Session) { largest = max(largest, s.cost) })
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

// TestWalkedSessionKept: the session a request asked for last stays
// parsed while sessions made for others (ahead of a walk) fill the cache
// past its budget: a walk reads one session's views one after the other,
// and must not parse it again for each.
func TestWalkedSessionKept(t *testing.T) {
	dir := t.TempDir()
	files, err := gen.Store(dir, gen.StoreSpec{Sessions: 8, Projects: 1, Seed: 1, MinEntries: 200, AvgBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	x := sessions.NewIndex(dir)
	st := New(x, Options{Budget: 4 << 20 / 3}) // a cache of 1 MiB: two sessions parsed
	with := func(i int, asked bool) *sessions.File {
		t.Helper()
		f := files[i]
		name := strings.TrimSuffix(filepath.Base(f.Path), ".jsonl")
		m, err := x.Lookup(f.Project, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.with(f.Project, name, m, asked, func(*Session) error { return nil }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	walked := with(0, true)
	for i := 1; i < len(files); i++ {
		with(i, false) // made ahead, each the most recent
	}
	if held := st.lru.Len(); held >= len(files) {
		t.Fatalf("all %d sessions held: the cache is too large to tell", held)
	}
	if s := st.Cached(walked.Path); s == nil || s.Log == nil {
		t.Error("the session asked for was dropped for sessions made ahead")
	}
	before := st.Stats().Parsed
	with(0, true)
	if n := st.Stats().Parsed - before; n != 0 {
		t.Errorf("asked for again, the session was parsed %d more times", n)
	}
}

// withEach takes the session of each of files from the cache in turn, and
// gives it to fn.
func withEach(t *testing.T, x *sessions.Index, st *Cache, files []gen.File, fn func(*Session)) {
	t.Helper()
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f.Path), ".jsonl")
		m, err := x.Lookup(f.Project, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.With(f.Project, name, m, func(s *Session) error { fn(s); return nil }); err != nil {
			t.Fatal(err)
		}
	}
}

// genCache makes a store as spec says, its index, and a cache of budget.
func genCache(t *testing.T, spec gen.StoreSpec, budget int64) ([]gen.File, *sessions.Index, *Cache) {
	t.Helper()
	dir := t.TempDir()
	files, err := gen.Store(dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	x := sessions.NewIndex(dir)
	return files, x, New(x, Options{Budget: budget})
}
