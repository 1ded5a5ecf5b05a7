package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// checkPathSizes compares each size function with the length of its
// rendering for one path.
func checkPathSizes(t *testing.T, name string, p Page, c *tree.Context, path []*sessions.Entry) {
	t.Helper()
	checkContext(t, name, c)
	if n, want := TranscriptSize(path), len(Transcript(path)); n != int64(want) {
		t.Fatalf("%s: TranscriptSize = %d, want %d", name, n, want)
	}
	if n, want := TranscriptHTMLSize(p, path), len(TranscriptHTML(p, path)); n != int64(want) {
		t.Fatalf("%s: TranscriptHTMLSize = %d, want %d", name, n, want)
	}
}

// checkSizes checks the views at the leaf, at every tip, and with
// everyEntry at every entry that has an id (the branches/<id>/ views).
func checkSizes(t *testing.T, name string, tr *tree.Tree, everyEntry bool) int {
	t.Helper()
	p := PageOf(tr)
	checkPathSizes(t, name+" at the leaf", p, tr.Context(), tr.LeafPath())
	if n, want := SessionHTMLSize(tr, ""), len(SessionHTML(tr)); n != int64(want) {
		t.Fatalf("%s: SessionHTMLSize = %d, want %d", name, n, want)
	}
	if n, want := TranscriptSize(tr.LeafPath()), len(Transcript(tr.LeafPath())); n != int64(want) {
		t.Fatalf("%s: TranscriptSize from a branch = %d, want %d", name, n, want)
	}
	ids := []string{}
	for _, n := range tr.Tips() {
		ids = append(ids, n.ID)
	}
	if everyEntry {
		for _, e := range tr.Entries() {
			if e.ID != "" {
				ids = append(ids, e.ID)
			}
		}
	}
	for _, id := range ids {
		checkPathSizes(t, name+" at "+id, p, tr.ContextAt(id), tr.PathTo(id))
	}
	return 1 + len(ids)
}

// fuzzCorpus is the sessions that the parser's and the tree's fuzz
// corpora hold (the first []byte argument of each file).
func fuzzCorpus(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	for _, dir := range []string{"../sessions/testdata/fuzz", "../tree/testdata/fuzz"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if arg, ok := strings.CutPrefix(line, "[]byte("); ok {
					s, err := strconv.Unquote(strings.TrimSuffix(arg, ")"))
					if err != nil {
						t.Fatalf("%s: %v", p, err)
					}
					out[p] = []byte(s)
					break
				}
			}
			return nil
		})
	}
	if len(out) == 0 {
		t.Fatal("no fuzz corpus found")
	}
	return out
}

// TestSizesOnStores: for every session of the repository's stores,
// fixtures and fuzz corpora, and for hand-made and generated ones, every
// view's size is its rendering's length, at the leaf and at every entry,
// and ContextJSON is Indent of the compact context.
func TestSizesOnStores(t *testing.T) {
	views := 0
	for _, p := range storeFiles(t) {
		if tr := openTree(t, p); tr != nil {
			views += checkSizes(t, p, tr, true)
		}
	}
	for p, data := range fuzzCorpus(t) {
		if l, err := sessions.Parse(data); err == nil && l.Header != nil {
			views += checkSizes(t, p, tree.New(l), true)
		}
	}
	views += checkSizes(t, "markdown edge cases", parseTree(t, markdownSession()), true)
	views += checkSizes(t, "injection", parseTree(t, injectionSession()), true)
	t.Logf("%d paths compared", views)
}

func TestSizesOnGenerated(t *testing.T) {
	for _, g := range []struct {
		entries    int
		everyEntry bool
	}{{300, true}, {3000, false}} {
		var buf bytes.Buffer
		if err := gen.Session(&buf, g.entries, 1650); err != nil {
			t.Fatal(err)
		}
		checkSizes(t, "gen "+strconv.Itoa(g.entries), parseTree(t, buf.String()), g.everyEntry)
	}
}

func BenchmarkTranscriptSize(b *testing.B) {
	t := big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.SetBytes(TranscriptSize(t.LeafPath()))
	}
}

func BenchmarkTranscriptHTMLSize(b *testing.B) {
	t := big(b)
	p := PageOf(t)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.SetBytes(TranscriptHTMLSize(p, t.LeafPath()))
	}
}
