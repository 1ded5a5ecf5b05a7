package search

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
)

func TestMergeWanted(t *testing.T) {
	for _, c := range []struct {
		sizes []int64
		want  bool
	}{
		{nil, false},
		{[]int64{800}, false},
		{[]int64{800, 99}, false},
		{[]int64{800, 100}, true},
		{[]int64{50, 800, 30, 20}, true},
		{[]int64{2, 800, 2, 2, 2}, false},
		{[]int64{2, 2}, true},
	} {
		if got := mergeWanted(c.sizes); got != c.want {
			t.Errorf("mergeWanted(%v) = %v", c.sizes, got)
		}
	}
}

// TestMerge: an index left in many segments (as FTS5 leaves a first
// build committed in small batches) is merged into one segment a table
// when the builder runs out of work, after a remount too; every query
// answers as before; a small append afterwards merges nothing.
func TestMerge(t *testing.T) {
	store := t.TempDir()
	files, err := gen.Store(store, gen.StoreSpec{Sessions: 30, Projects: 3, Seed: 5, MinEntries: 20, MaxExtra: 60,
		AvgBytes: 400, NeedleEvery: 4, Needle: "NEEDLE-7f3a9c"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	queries := []string{"NEEDLE-7f3a9c", "needle", "ompil", "bench*", `"lazy dog"`, "compiling -tests", "role:user go"}
	project := files[0].Project
	answers := func(x *Index) map[string][]string {
		out := map[string][]string{}
		for _, q := range queries {
			for _, scope := range []Scope{{}, {Project: project}} {
				res, err := x.SearchString(context.Background(), q, time.UTC, scope, 5000)
				if err != nil {
					t.Fatalf("%q: %v", q, err)
				}
				var got []string
				for _, h := range res.Hits {
					got = append(got, h.Path+"#"+h.Entry)
				}
				slices.Sort(got)
				key := q + " in " + scope.Project
				out[key] = got
				if len(got) != res.Total {
					t.Fatalf("%s: %d hits of %d", key, len(got), res.Total)
				}
			}
		}
		return out
	}
	segments := func(x *Index) map[string]int {
		out := map[string]int{}
		for _, table := range []string{tableTri, tableWords} {
			sizes, err := x.segments(table)
			if err != nil {
				t.Fatal(err)
			}
			out[table] = len(sizes)
		}
		return out
	}

	x := openIndex(t, store, Options{Dir: dir, BatchBytes: 4 << 10})
	x.noMerge = true
	build(t, x, store)
	before := answers(x)
	for table, n := range segments(x) {
		sizes, _ := x.segments(table)
		if n < 3 || !mergeWanted(sizes) {
			t.Fatalf("%s: %d segments %v, want several to merge", table, n, sizes)
		}
	}
	if n := len(before["needle in "]); n == 0 {
		t.Fatal("the needle is not found")
	}
	x.Close()

	x = openIndex(t, store, Options{Dir: dir})
	idx := build(t, x, store)
	s := x.Stats()
	if s.Merges != 1 || s.MergeSteps < 2 || s.Full != 0 {
		t.Fatalf("remount: %+v, want one merge and nothing indexed", s)
	}
	if got := segments(x); got[tableTri] != 1 || got[tableWords] != 1 {
		t.Fatalf("after the merge: %v segments", got)
	}
	if after := answers(x); !maps.EqualFunc(before, after, slices.Equal) {
		t.Fatalf("answers changed by the merge:\nbefore %v\nafter  %v", before, after)
	}

	// An append: a segment of its own, too small to merge the table for.
	path := filepath.Join(store, files[1].Path)
	appendLines(t, path, `{"type":"message","id":"m0000001","parentId":null,"timestamp":"2025-05-02T01:00:00.000Z","message":{"role":"user","content":"appended okapi text","timestamp":1}}`)
	follow(t, x, idx, path)
	if s1 := x.Stats(); s1.Merges != 1 || s1.MergeSteps != s.MergeSteps || s1.Appended != 1 {
		t.Fatalf("after an append: %+v", s1)
	}
	if got := segments(x); got[tableTri] != 2 {
		t.Fatalf("after an append: %v segments, want the merged one and the append's", got)
	}
	if got := find(t, x, "okapi"); len(got) != 1 {
		t.Fatalf("appended entry: %q", got)
	}
}
