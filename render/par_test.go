package render

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// partCounts are the cuts compared with the whole: two parts, an odd
// number, and more parts than most paths have entries (one entry a part).
var partCounts = []int{2, 3, 7, 1 << 20}

// checkParts compares, for one path and its context, every view counted
// and rendered in parts with the same view done in one part.
func checkParts(t *testing.T, name string, p Page, c *tree.Context, path []*sessions.Entry) {
	t.Helper()
	md, page, ctx := transcript(path, 1), transcriptHTML(p, path, 1), contextJSON(c, 1)
	if !bytes.Equal(ctx, Indent(nil, c.JSON())) {
		t.Fatalf("%s: context.json in one part is not Indent(JSON())", name)
	}
	for _, k := range partCounts {
		// A path cut in parts is rendered into a buffer of the exact size ...
		cut := len(pathParts(path, k)) > 2
		got, apart := transcriptApart(path, k)
		if !bytes.Equal(got, md) || cut && len(got) != cap(got) {
			t.Fatalf("%s: transcript.md in %d parts differs (%d bytes, cap %d; want %d)", name, k, len(got), cap(got), len(md))
		}
		// ... each part rendered in its place, not apart and copied.
		if apart != 0 {
			t.Errorf("%s: transcript.md in %d parts: %d parts rendered apart and copied", name, k, apart)
		}
		if got := transcriptHTML(p, path, k); !bytes.Equal(got, page) {
			t.Fatalf("%s: transcript.html in %d parts differs (%d bytes, want %d)", name, k, len(got), len(page))
		}
		if got := contextJSON(c, k); !bytes.Equal(got, ctx) || len(got) != cap(got) {
			t.Fatalf("%s: context.json in %d parts differs (%d bytes, cap %d; want %d)", name, k, len(got), cap(got), len(ctx))
		}
		if n := transcriptSize(path, k); n != int64(len(md)) {
			t.Fatalf("%s: transcript.md counted in %d parts: %d, want %d", name, k, n, len(md))
		}
		// Rendered from the count stat made, in place as well.
		if got, apart := transcriptParts(path, pathParts(path, k), countTranscript(path, k).sizes); !bytes.Equal(got, md) || apart != 0 {
			t.Fatalf("%s: transcript.md in %d parts from its count differs (%d bytes, want %d; %d apart)", name, k, len(got), len(md), apart)
		}
		if n := transcriptHTMLSize(p, path, k); n != int64(len(page)) {
			t.Fatalf("%s: transcript.html counted in %d parts: %d, want %d", name, k, n, len(page))
		}
		if n := contextSizeIn(c, k); n != int64(len(ctx)) {
			t.Fatalf("%s: context.json counted in %d parts: %d, want %d", name, k, n, len(ctx))
		}
	}
}

// checkTreeParts checks the views at the leaf and at every tip, and the
// usage totals over the whole file.
func checkTreeParts(t *testing.T, name string, tr *tree.Tree) {
	t.Helper()
	p := PageOf(tr)
	checkParts(t, name+" at the leaf", p, tr.Context(), tr.LeafPath())
	for _, n := range tr.Tips() {
		checkParts(t, name+" at "+n.ID, p, tr.ContextAt(n.ID), tr.PathTo(n.ID))
	}
	page := pageHTML(p, tr.LeafPath(), tr, 1)
	for _, k := range partCounts {
		if got := pageHTML(p, tr.LeafPath(), tr, k); !bytes.Equal(got, page) {
			t.Fatalf("%s: the session's transcript.html in %d parts differs (%d bytes, want %d)", name, k, len(got), len(page))
		}
		// From its count: the same bytes, in a buffer of the exact size,
		// each part in its place.
		c := countSessionPage(tr, "", k)
		got, copied := renderSessionPageIn(layoutSession(tr), c.bounds, &c)
		room := runSlack * (len(c.bounds) - 1 + len(rowParts(len(tr.Selector(tr.FileLeafID(), tree.FilterAll).Rows))))
		if !bytes.Equal(got, page) || c.Size() != int64(len(page)) || copied != 0 || cap(got)-len(got) > room {
			t.Fatalf("%s: the session's transcript.html in %d parts from its count: %d bytes (cap %d, %d copied), counted %d, want %d",
				name, k, len(got), cap(got), copied, c.Size(), len(page))
		}
	}
	want := tr.Usage()
	for _, k := range append([]int{1}, partCounts...) {
		if got := usageTotalsIn(tr.Entries(), k); got != want {
			t.Fatalf("%s: usage totals in %d parts %+v, want %+v", name, k, got, want)
		}
	}
}

// TestPartsMatchWhole: over every session of the repository's stores,
// fixtures and fuzz corpora, and hand-made and generated ones, each view
// counted or rendered in parts is the view done in one, byte for byte.
func TestPartsMatchWhole(t *testing.T) {
	for _, p := range storeFiles(t) {
		if tr := openTree(t, p); tr != nil {
			checkTreeParts(t, p, tr)
		}
	}
	for p, data := range fuzzCorpus(t) {
		if l, err := sessions.Parse(data); err == nil && l.Header != nil {
			checkTreeParts(t, p, tree.New(l))
		}
	}
	checkTreeParts(t, "markdown edge cases", parseTree(t, markdownSession()))
	checkTreeParts(t, "injection", parseTree(t, injectionSession()))
	for _, n := range []int{300, 5000} {
		var buf bytes.Buffer
		if err := gen.Session(&buf, n, 1650); err != nil {
			t.Fatal(err)
		}
		checkTreeParts(t, "gen "+strconv.Itoa(n), parseTree(t, buf.String()))
	}
}

// TestBigPathsAreCut: the exported views cut a big path into parts (the
// comparison above is of the code that runs), and leave a small one whole.
func TestBigPathsAreCut(t *testing.T) {
	if partsFor(htmlMinBytes-1, htmlMinBytes) != 1 || partsFor(100<<20, textMinBytes) < 2 {
		t.Errorf("partsFor: %d bytes in %d parts, %d bytes in %d", htmlMinBytes-1, partsFor(htmlMinBytes-1, htmlMinBytes), 100<<20, partsFor(100<<20, textMinBytes))
	}
	var buf bytes.Buffer
	if err := gen.Session(&buf, 3000, 1650); err != nil {
		t.Fatal(err)
	}
	path := parseTree(t, buf.String()).LeafPath()
	if n := rawBytes(path); partsFor(n, textMinBytes) < 2 {
		t.Errorf("a path of %d bytes is done in %d part", n, partsFor(n, textMinBytes))
	}
}

// BenchmarkParts times counting generated paths of about 130 KiB to
// 1 MiB in one, two and four parts: where cutting starts to pay off is
// where htmlMinBytes and textMinBytes are set.
func BenchmarkParts(b *testing.B) {
	for _, n := range []int{80, 160, 320, 640} {
		var buf bytes.Buffer
		if err := gen.Session(&buf, n, 1650); err != nil {
			b.Fatal(err)
		}
		tr := parseTree(b, buf.String())
		path, p, c := tr.LeafPath(), PageOf(tr), tr.Context()
		for _, parts := range []int{1, 2, 4} {
			name := strconv.Itoa(rawBytes(path)>>10) + "KiB/parts" + strconv.Itoa(parts)
			b.Run(name+"/html", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					transcriptHTMLSize(p, path, parts)
				}
			})
			b.Run(name+"/md", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					transcriptSize(path, parts)
				}
			})
			b.Run(name+"/context", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					contextSizeIn(c, parts)
				}
			})
		}
	}
}
