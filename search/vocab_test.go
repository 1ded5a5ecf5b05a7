package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
)

// TestWordsFromPages: the words a prefix begins, read from the words
// table's leaf pages, are fts5vocab's, for every prefix of 3 or more bytes
// of every ASCII word of the index: in many segments, at each step of a
// merge and merged; after rows are deleted, fts5vocab's and at most words
// that match nothing. A page that does not parse is an error, never a
// wrong answer.
func TestWordsFromPages(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	files, err := gen.Store(store, gen.StoreSpec{Sessions: 12, Projects: 2, Seed: 9, MinEntries: 20, MaxExtra: 40,
		AvgBytes: 300, NeedleEvery: 3, Needle: "NEEDLE-7f3a9c"})
	if err != nil {
		t.Fatal(err)
	}
	x := openIndex(t, store, Options{BatchBytes: 2 << 10})
	x.noMerge = true
	idx := build(t, x, store)
	ctx := context.Background()

	vocab := func(lo, hi string) []string {
		rows, err := x.query(ctx, `SELECT term FROM `+tableTerms+` WHERE term >= ? AND term < ?`, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var w string
			if err := rows.Scan(&w); err != nil {
				t.Fatal(err)
			}
			out = append(out, w)
		}
		return out
	}
	check := func(when string, deleted bool) int {
		t.Helper()
		prefixes := map[string]bool{}
		for _, w := range vocab("", "\xff") {
			if strings.IndexFunc(w, func(r rune) bool { return r >= 0x80 }) >= 0 {
				continue
			}
			for n := minExpand; n <= len(w); n++ {
				prefixes[w[:n]] = true
			}
		}
		for p := range prefixes {
			past := p[:len(p)-1] + string(p[len(p)-1]+1)
			got, err := x.wordsBetween(ctx, p, past, 1<<30)
			if err != nil {
				t.Fatalf("%s: %q: %v", when, p, err)
			}
			want := vocab(p, past)
			if !deleted && !slices.Equal(got, want) {
				t.Fatalf("%s: %q: pages give %q, fts5vocab %q", when, p, got, want)
			}
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Fatalf("%s: %q: pages miss %q (%q)", when, p, w, got)
				}
			}
			for _, w := range got {
				if !slices.Contains(want, w) && len(find(t, x, w)) > 0 {
					t.Fatalf("%s: %q: pages give %q, which fts5vocab does not and which matches", when, p, w)
				}
			}
			// Bounded: one more than most says there are more.
			if len(want) > 2 {
				if got, err := x.wordsBetween(ctx, p, past, 2); err != nil || got != nil {
					t.Fatalf("%s: %q at most 2: %q, %v", when, p, got, err)
				}
			}
		}
		return len(prefixes)
	}
	sizes, _ := x.segments(tableWords)
	if len(sizes) < 4 {
		t.Fatalf("%d segments, want several", len(sizes))
	}
	if n := check("in many segments", false); n < 300 {
		t.Fatalf("%d prefixes checked", n)
	}
	// A merge, a few pages a step: the segments it reads from are cut as
	// it goes.
	for step := 0; ; step++ {
		pages := 3
		if step == 0 {
			pages = -3
		}
		more, err := x.mergeStep(tableWords, pages)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			break
		}
		if step%4 == 1 {
			check("merging", false)
		}
	}
	if sizes, _ := x.segments(tableWords); len(sizes) != 1 {
		t.Fatalf("merged: %d segments", len(sizes))
	}
	check("merged", false)

	// A session rewritten: its rows go (FTS5 marks them deleted), new
	// ones come.
	path := filepath.Join(store, files[0].Path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), "e", "q")), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	follow(t, x, idx, path)
	check("after a rewrite", true)
}

// FuzzPageTerms: any bytes as a leaf page give terms or an error, never a
// panic.
func FuzzPageTerms(f *testing.F) {
	f.Add([]byte{0, 0, 0, 9, 3, 'a', 'b', 'c', 0, 4})
	f.Add([]byte{0, 0, 0, 12, 2, '0', 'a', 1, 1, 'b', 0, 0, 4, 4})
	f.Fuzz(func(t *testing.T, page []byte) {
		pageTerms(page, func([]byte) {})
	})
}
