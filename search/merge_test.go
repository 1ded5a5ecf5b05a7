package search

import (
	"context"
	"fmt"
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

// TestTidy: after the merge into one, each append told writes a segment
// of its own; tidying keeps them to a few, where FTS5 alone lets them add
// up, and never rewrites the largest segment.
func TestTidy(t *testing.T) {
	for _, tidy := range []bool{true, false} {
		store := t.TempDir()
		files, err := gen.Store(store, gen.StoreSpec{Sessions: 80, Projects: 2, Seed: 6, MinEntries: 20, MaxExtra: 40, AvgBytes: 400})
		if err != nil {
			t.Fatal(err)
		}
		x := openIndex(t, store, Options{})
		x.noTidy = !tidy
		idx := build(t, x, store)
		// The build's own merge leaves each table in one segment, or in a
		// few when its commits came in sizes the rule does not merge (on
		// a loaded machine): start from one, as after a merge, so that
		// what follows depends on the appends alone.
		for _, table := range []string{tableTri, tableWords} {
			if _, err := x.w.Exec(`INSERT INTO ` + table + `(` + table + `) VALUES ('optimize')`); err != nil {
				t.Fatal(err)
			}
		}
		structure := func() []ftsLevel {
			var rec []byte
			if err := x.w.QueryRow(`SELECT block FROM `+tableTri+`_data WHERE id = ?`, structureID).Scan(&rec); err != nil {
				t.Fatal(err)
			}
			levels, err := parseStructure(rec)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, l := range levels {
				n += len(l.sizes)
			}
			if sizes, _ := x.segments(tableTri); len(sizes) != n {
				t.Fatalf("the structure has %d segments, %%_idx %d", n, len(sizes))
			}
			return levels
		}
		largest := func(levels []ftsLevel) int64 {
			l := levels[largestLevel(levels)]
			return slices.Max(l.sizes)
		}
		s0, big := x.Stats(), largest(structure())
		path := filepath.Join(store, files[1].Path)
		for i := range 12 {
			appendLines(t, path, fmt.Sprintf(`{"type":"message","id":"t%07d","parentId":null,"timestamp":"2025-05-02T01:00:00.000Z","message":{"role":"user","content":"appended text %d","timestamp":1}}`, i, i))
			follow(t, x, idx, path)
		}
		levels := structure()
		n := 0
		for _, l := range levels {
			n += len(l.sizes)
		}
		s := x.Stats()
		t.Logf("tidy %v: %d segments after 12 appends, %d merge steps", tidy, n, s.MergeSteps-s0.MergeSteps)
		if tidy && s.Merges != s0.Merges || largest(levels) != big {
			t.Fatalf("tidy %v: the largest segment rewritten (%d pages, was %d; %+v)", tidy, largest(levels), big, s)
		}
		if tidy && (n > 3 || s.MergeSteps == s0.MergeSteps) {
			t.Fatalf("tidied: %d segments after 12 appends (%+v)", n, levels)
		}
		if !tidy && n < 10 {
			t.Fatalf("FTS5 alone: %d segments after 12 appends, want many (%+v)", n, levels)
		}
		if got := find(t, x, "appended"); len(got) != 12 {
			t.Fatalf("tidy %v: %d appended entries found", tidy, len(got))
		}
	}
}

func TestNextMerged(t *testing.T) {
	lv := func(merging int, n int) ftsLevel { return ftsLevel{merging, make([]int64, n)} }
	for _, c := range []struct {
		levels []ftsLevel
		next   int
		tidy   bool
	}{
		{[]ftsLevel{lv(0, 1), lv(0, 0), lv(0, 1)}, -1, false},
		{[]ftsLevel{lv(0, 2), lv(0, 0), lv(0, 1)}, 0, true},
		{[]ftsLevel{lv(0, 1), lv(0, 3), lv(0, 1)}, 1, false},
		{[]ftsLevel{lv(0, 1), lv(0, 4), lv(0, 1)}, 1, true},
		{[]ftsLevel{lv(0, 2), lv(0, 0), lv(0, 3)}, 2, false}, // the largest's level has the most
		{[]ftsLevel{lv(0, 1), lv(2, 3), lv(0, 1)}, 1, true},  // a merge under way, below the largest
		{[]ftsLevel{lv(0, 2), lv(2, 3), lv(0, 1)}, 0, true},  // a level below it holds as many
	} {
		for i := range c.levels {
			for k := range c.levels[i].sizes {
				c.levels[i].sizes[k] = 1
			}
		}
		last := len(c.levels) - 1
		c.levels[last].sizes[0] = 100
		if got := nextMerged(c.levels); got != c.next {
			t.Errorf("%v: next %d, want %d", c.levels, got, c.next)
		}
		if got := tidyWanted(c.levels); got != c.tidy {
			t.Errorf("%v: tidy %v, want %v", c.levels, got, c.tidy)
		}
	}
}

// FuzzStructure: any bytes as a structure record give levels or an
// error, never a panic.
func FuzzStructure(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 1, 5, 0, 1, 3, 1, 4})
	f.Add([]byte{0, 0, 0, 0, 0xff, 0, 0, 1, 1, 1, 5, 0, 1, 3, 1, 4, 0, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, rec []byte) {
		if levels, err := parseStructure(rec); err == nil {
			nextMerged(levels)
			tidyWanted(levels)
		}
	})
}

// TestMergeUnderWay: a merge begun is under way until its last step, and
// then over, with the segments written meanwhile left to themselves.
func TestMergeUnderWay(t *testing.T) {
	store := t.TempDir()
	files, err := gen.Store(store, gen.StoreSpec{Sessions: 30, Projects: 2, Seed: 8, MinEntries: 20, MaxExtra: 40, AvgBytes: 400})
	if err != nil {
		t.Fatal(err)
	}
	x := openIndex(t, store, Options{BatchBytes: 4 << 10})
	x.noMerge = true
	idx := build(t, x, store)
	if going, err := x.mergeUnderWay(tableTri); err != nil || going {
		t.Fatalf("before: under way %v, %v", going, err)
	}
	if _, err := x.mergeStep(tableTri, -2); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(store, files[0].Path)
	steps := 0
	for ; ; steps++ {
		going, err := x.mergeUnderWay(tableTri)
		if err != nil {
			t.Fatal(err)
		}
		if !going {
			break
		}
		if steps == 1 || steps == 2 {
			// Segments written meanwhile: each append told, one.
			appendLines(t, path, fmt.Sprintf(`{"type":"message","id":"u%07d","parentId":null,"timestamp":"2025-05-02T01:00:00.000Z","message":{"role":"user","content":"meanwhile %d","timestamp":1}}`, steps, steps))
			follow(t, x, idx, path)
		}
		if _, err := x.mergeStep(tableTri, 2); err != nil {
			t.Fatal(err)
		}
	}
	levels, err := x.structure(tableTri)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range levels {
		n += len(l.sizes)
	}
	if steps < 3 || n != 3 {
		t.Fatalf("after %d steps: %d segments (%+v), want the merged one and the two written meanwhile", steps, n, levels)
	}
	// Why the builder stops there: a further 'merge' starts another.
	if more, err := x.mergeStep(tableTri, 2); err != nil || !more {
		t.Fatalf("a further merge: %v, %v", more, err)
	}
}

// segments are the sizes of a table's segments as its %_idx table gives
// them: the last leaf page's number of each (twice the page count, give
// or take), read apart from the structure record the builder reads.
func (x *Index) segments(table string) ([]int64, error) {
	rows, err := x.w.Query(`SELECT max(pgno) FROM ` + table + `_idx GROUP BY segid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var sizes []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		sizes = append(sizes, n)
	}
	return sizes, rows.Err()
}

// TestMergeWait: after a commit, the builder looks for segments to merge
// only once mergeSettle has passed without another; a merge under way,
// or nothing new to look at, does not wait.
func TestMergeWait(t *testing.T) {
	x := &Index{mergeSettle: time.Second}
	b := &builder{x: x, batch: &batch{commits: 3, committed: time.Now()}}
	if w := b.mergeWait(); w <= 0 || w > time.Second {
		t.Errorf("just after a commit: wait %v, want up to a second", w)
	}
	b.batch.committed = time.Now().Add(-2 * time.Second)
	if w := b.mergeWait(); w > 0 {
		t.Errorf("two seconds after a commit: wait %v", w)
	}
	b.batch.committed = time.Now()
	b.merging.checked = b.batch.commits + 1
	if w := b.mergeWait(); w != 0 {
		t.Errorf("looked already since the commit: wait %v", w)
	}
	b.merging.checked, b.merging.tables = 0, []string{tableTri}
	if w := b.mergeWait(); w != 0 {
		t.Errorf("a merge under way: wait %v", w)
	}
}
