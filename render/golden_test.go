package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"hash"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The golden file holds a SHA-256 of every view of every test session, as
// the renderers wrote them when the file was made: a change to how a view
// is computed must leave every byte as it was. Make it anew, only when a
// rendering is meant to change, with
//
//	go test ./render/ -run TestGolden -update-golden
var updateGolden = flag.Bool("update-golden", false, "write render/testdata/golden.sha256 from the renderings")

const goldenFile = "testdata/golden.sha256"

// goldenSessions are the sessions the golden file covers: the stores and
// fixtures, the parser's and the tree's fuzz corpora, the hand-made edge
// cases, render's shapes session (every kind of entry, role and block)
// and a generated one.
func goldenSessions(t *testing.T) map[string]*tree.Tree {
	out := map[string]*tree.Tree{}
	for _, p := range append(storeFiles(t), "testdata/shapes.jsonl") {
		if tr := openTree(t, p); tr != nil {
			out[strings.TrimPrefix(p, "../")] = tr
		}
	}
	for p, data := range fuzzCorpus(t) {
		if l, err := sessions.Parse(data); err == nil && l.Header != nil {
			out["fuzz/"+strings.TrimPrefix(p, "../")] = tree.New(l)
		}
	}
	out["edge/markdown"] = parseTree(t, markdownSession())
	out["edge/injection"] = parseTree(t, injectionSession())
	var buf bytes.Buffer
	if err := gen.Session(&buf, 120, 1650); err != nil {
		t.Fatal(err)
	}
	out["gen/120"] = parseTree(t, buf.String())
	return out
}

// viewSums hashes each view of a session: header.json and every entry
// indented, info.json, and context.json, transcript.md and transcript.html
// at the leaf and at every entry (the branches/<id>/ views).
func viewSums(tr *tree.Tree) map[string]string {
	sums := map[string]string{}
	sum := func(view string, fill func(add func([]byte))) {
		h := sha256.New()
		fill(func(b []byte) { writeChunk(h, b) })
		sums[view] = hex.EncodeToString(h.Sum(nil))
	}
	p := PageOf(tr)
	sum("header.json", func(add func([]byte)) { add(Indent(nil, tr.Header.Raw)) })
	sum("entries", func(add func([]byte)) {
		for _, e := range tr.Entries() {
			add([]byte(e.ID))
			add(Indent(nil, e.Raw))
		}
	})
	sum("info.json", func(add func([]byte)) { add(Info("/store/session.jsonl", tr, time.Unix(1700000000, 0))) })
	sum("context.json", func(add func([]byte)) { add(ContextJSON(tr.Context())) })
	sum("transcript.md", func(add func([]byte)) { add(Transcript(tr.LeafPath())) })
	sum("transcript.html", func(add func([]byte)) { add(SessionHTML(tr)) })
	sum("images", func(add func([]byte)) {
		for _, im := range Images(tr.Entries()) {
			add([]byte(im.Name))
			b, _ := DecodeImage(im.Data)
			add(b)
		}
	})
	var ids []string
	for _, e := range tr.Entries() {
		if e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
	sum("branches/context.json", func(add func([]byte)) {
		for _, id := range ids {
			add(ContextJSON(tr.ContextAt(id)))
		}
	})
	sum("branches/transcript.md", func(add func([]byte)) {
		for _, id := range ids {
			add(Transcript(tr.PathTo(id)))
		}
	})
	sum("branches/transcript.html", func(add func([]byte)) {
		for _, id := range ids {
			add(TranscriptHTML(p, tr.PathTo(id)))
		}
	})
	return sums
}

// writeChunk hashes b with its length first, so that the pieces' bounds
// count too.
func writeChunk(h hash.Hash, b []byte) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// TestGolden: every view of every test session is byte for byte what the
// golden file says.
func TestGolden(t *testing.T) {
	var lines []string
	for name, tr := range goldenSessions(t) {
		for view, s := range viewSums(tr) {
			lines = append(lines, s+"  "+name+"  "+view)
		}
	}
	sort.Slice(lines, func(i, j int) bool {
		return lines[i][sha256.Size*2:] < lines[j][sha256.Size*2:]
	})
	got := strings.Join(lines, "\n") + "\n"
	if *updateGolden {
		if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d views", goldenFile, len(lines))
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (make it with -update-golden)", err)
	}
	wantSums := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(want), "\n"), "\n") {
		s, key, _ := strings.Cut(l, "  ")
		wantSums[key] = s
	}
	gotSums := map[string]string{}
	for _, l := range lines {
		s, key, _ := strings.Cut(l, "  ")
		gotSums[key] = s
	}
	var diff []string
	for key, s := range wantSums {
		switch g, ok := gotSums[key]; {
		case !ok:
			diff = append(diff, "missing: "+key)
		case g != s:
			diff = append(diff, "changed: "+key)
		}
	}
	for key := range gotSums {
		if _, ok := wantSums[key]; !ok {
			diff = append(diff, "new: "+key)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Fatalf("%d of %d views differ from %s:\n%s", len(diff), len(wantSums), goldenFile, strings.Join(diff, "\n"))
	}
	if len(gotSums) < 200 {
		t.Fatalf("only %d views compared", len(gotSums))
	}
	t.Logf("%d views as the golden file says", len(gotSums))
}
