package render

import (
	"bytes"
	"maps"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// storeFiles lists the session files of the demo store and the fixtures.
func storeFiles(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"../testdata/demo", "../testdata/fixtures", "../sessions/testdata", "../tree/testdata"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 20 {
		t.Fatalf("only %d session files found", len(files))
	}
	return files
}

func openTree(t testing.TB, p string) *tree.Tree {
	l, err := sessions.Open(p)
	if err != nil {
		return nil
	}
	return tree.New(l)
}

// checkTranscripts compares every entry's Markdown and the transcript of
// the leaf and of every tip with the reference renderer.
func checkTranscripts(t *testing.T, name string, tr *tree.Tree) {
	t.Helper()
	for _, e := range tr.Entries() {
		want := refTranscript([]*sessions.Entry{e})
		if got := AppendEntryMarkdown(nil, e); !bytes.Equal(got, want) {
			t.Fatalf("%s: entry %q (line %d):\ngot  %q\nwant %q", name, e.ID, e.Seq, got, want)
		}
	}
	paths := [][]*sessions.Entry{tr.LeafPath()}
	for _, n := range tr.Tips() {
		paths = append(paths, tr.PathTo(n.ID))
	}
	for _, p := range paths {
		if got, want := Transcript(p), refTranscript(p); !bytes.Equal(got, want) {
			t.Fatalf("%s: transcript of %d entries differs", name, len(p))
		}
	}
}

func TestTranscriptMatchesReference(t *testing.T) {
	n := 0
	for _, p := range storeFiles(t) {
		if tr := openTree(t, p); tr != nil {
			checkTranscripts(t, p, tr)
			n++
		}
	}
	t.Logf("%d sessions compared", n)
}

func TestTranscriptMatchesReferenceOnGenerated(t *testing.T) {
	var buf bytes.Buffer
	if err := gen.Session(&buf, 3000, 1650); err != nil {
		t.Fatal(err)
	}
	l, err := sessions.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	checkTranscripts(t, "gen", tree.New(l))
}

// Hand-made entries for what the stores lack: escapes, backtick runs,
// duplicate keys, odd value kinds.
var markdownLines = []string{
	`{"type":"message","id":"a1","parentId":null,"timestamp":"2025-05-12T10:00:00.000Z","message":{"role":"user","content":"hi \"there\"\n\u00e9\ud83d\ude00 \ud800 x","timestamp":1}}`,
	`{"type":"message","id":"a2","parentId":"a1","timestamp":"bad","message":{"role":"assistant","errorMessage":"boom","content":[{"type":"text","text":"a ` + "````" + ` b"},{"type":"thinking","thinking":null},{"type":"toolCall","name":"bash","id":7,"arguments":{"command":"echo ` + "```" + `","n":[1,{}],"e":{}}},{"type":"toolCall","name":"x"},{"type":"image","mimeType":"image/png","data":"AAAA"},{"type":"weird","x":[]},"str",5,{"t\u0079pe":"text","text":"escaped key"},{"type":"text","type":"thinking","thinking":"dup"}],"content":[{"type":"text","text":"second content wins"}]}}`,
	`{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-05-12T10:00:02.000Z","message":{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"out\n\n"}],"isError":true}}`,
	`{"type":"message","id":"a4","parentId":"a3","timestamp":"2025-05-12T10:00:03.000Z","message":{"role":"toolResult","toolName":"","content":"","isError":0}}`,
	`{"type":"message","id":"a5","parentId":"a4","timestamp":"2025-05-12T10:00:04.000Z","message":{"role":"bashExecution","command":"ls ` + "`" + `pwd` + "`" + `","output":"x\n\n","exitCode":"` + "```" + `"}}`,
	`{"type":"message","id":"a6","parentId":"a5","timestamp":"2025-05-12T10:00:05.000Z","message":{"role":"bashExecution","command":null,"output":{"a":1},"exitCode":null}}`,
	`{"type":"message","id":"a7","parentId":"a6","message":{"role":"branchSummary","content":{"k":"v"},"summary":"s"}}`,
	`{"type":"message","id":"a8","parentId":"a7","message":"just a string"}`,
	`{"type":"message","id":"a9","parentId":"a8","message":{"role":5,"content":"no role"}}`,
	`{"type":"custom_message","id":"b1","parentId":"a9","customType":"note","content":[{"type":"text","text":"custom"}],"display":true}`,
	`{"type":"custom_message","id":"b2","parentId":"b1","customType":null,"content":"plain"}`,
	`{"type":"branch_summary","id":"b3","parentId":"b2","fromId":"a1","summary":"went elsewhere"}`,
	`{"type":"compaction","id":"b4","parentId":"b3","summary":42,"firstKeptEntryId":"a1","tokensBefore":1}`,
	`{"type":"label","id":"b5","parentId":"b4","targetId":"a1","label":"x"}`,
	`{"type":"message","id":"b6","parentId":"b5","message":{"role":"system","content":[],"errorMessage":""}}`,
	`{"type":"message","id":"b7","parentId":"b6","message":{"role":"custom","content":"x","errorMessage":3}}`,
}

func markdownSession() string {
	return `{"type":"session","version":3,"id":"s","timestamp":"2025-05-12T10:00:00.000Z","cwd":"/tmp"}` + "\n" + strings.Join(markdownLines, "\n") + "\n"
}

func TestTranscriptMatchesReferenceOnEdgeCases(t *testing.T) {
	l, err := sessions.Parse([]byte(markdownSession()))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != len(markdownLines) {
		t.Fatalf("parsed %d entries of %d", len(l.Entries), len(markdownLines))
	}
	checkTranscripts(t, "edge", tree.New(l))
}

// TestTranscriptExtends: the transcript of a longer path is the shorter
// one's followed by the new entries, which a follower relies on.
func TestTranscriptExtends(t *testing.T) {
	l, _ := sessions.Parse([]byte(markdownSession()))
	path := tree.New(l).LeafPath()
	for k := range path {
		got := Transcript(path[:k])
		for _, e := range path[k:] {
			got = AppendEntryMarkdown(got, e)
		}
		if !bytes.Equal(got, Transcript(path)) {
			t.Fatalf("extending after %d entries differs", k)
		}
	}
}

func FuzzTranscript(f *testing.F) {
	for _, l := range markdownLines {
		f.Add([]byte(l))
	}
	for _, p := range []string{"../testdata/fixtures/retained-tail.jsonl", "../testdata/fixtures/v1.jsonl", "../testdata/fixtures/damaged.jsonl"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Branches, leaf records with and without entries under them, an
	// id-less leaf, a hidden message after the leaf in its branch.
	f.Add([]byte(`{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"a"}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"b"},{"type":"toolCall","id":"c","name":"ls","arguments":{}}],"usage":{"input":1,"output":2,"cost":{"total":0.5}}}}
{"type":"message","id":"u2","parentId":"a1","timestamp":"2025-01-01T00:00:03Z","message":{"role":"user","content":"c"}}
{"type":"custom_message","id":"h1","parentId":"u2","timestamp":"2025-01-01T00:00:04Z","customType":"x","content":"hidden","display":false}
{"type":"message","id":"u3","parentId":"a1","timestamp":"2025-01-01T00:00:05Z","message":{"role":"user","content":"d"}}
{"type":"custom","customType":"pifs.leaf","data":{"leaf":"a1"},"id":"r1","parentId":"a1","timestamp":"2025-01-01T00:00:06Z"}
{"type":"custom","customType":"pifs.leaf","data":{"leaf":"u2"},"id":"r2","parentId":"u2","timestamp":"2025-01-01T00:00:07Z"}
{"type":"message","id":"u4","parentId":"r2","timestamp":"2025-01-01T00:00:08Z","message":{"role":"user","content":"e"}}
{"type":"message","parentId":"u4","timestamp":"2025-01-01T00:00:09Z","message":{"role":"user","content":"no id"}}
`))
	f.Fuzz(func(t *testing.T, lines []byte) {
		data := append([]byte(`{"type":"session","version":3,"id":"s","cwd":"/"}`+"\n"), lines...)
		l, err := sessions.Parse(data)
		if err != nil || l.Header == nil {
			return
		}
		tr := tree.New(l)
		checkTranscripts(t, "fuzz", tr)
		checkSizes(t, "fuzz", tr, true)
		// The page escapes whatever the entries hold.
		page := TranscriptHTML(PageOf(tr), tr.LeafPath())
		if o, c := bytes.Count(page, []byte("<details")), bytes.Count(page, []byte("</details>")); o != c {
			t.Fatalf("%d <details> opened, %d closed", o, c)
		}
		if bytes.Contains(bytes.ToLower(page), []byte("<script")) {
			t.Fatal("page holds a <script")
		}
		if got, want := anchorsIn(page), wantAnchors(tr.LeafPath()); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("anchors %q, want %q", got, want)
		}
		// The session's page: every entry with an id once (an id two
		// entries share, once per entry), its markup balanced.
		sp := SessionHTML(tr)
		if o, c := bytes.Count(sp, []byte("<div")), bytes.Count(sp, []byte("</div>")); o != c {
			t.Fatalf("session page: %d <div> opened, %d closed", o, c)
		}
		if o, c := bytes.Count(sp, []byte("<details")), bytes.Count(sp, []byte("</details>")); o != c {
			t.Fatalf("session page: %d <details> opened, %d closed", o, c)
		}
		want := map[string]int{}
		for _, e := range tr.Entries() {
			if e.ID != "" {
				want[string(anchor(nil, e.ID))]++
			}
		}
		got := map[string]int{}
		for _, a := range anchorsIn(sp) {
			got[a]++
		}
		if !maps.Equal(got, want) {
			t.Fatalf("session page anchors %v, want %v", got, want)
		}
	})
}

var (
	bigOnce sync.Once
	bigData []byte
	bigTree *tree.Tree
)

// big is the bench generator's 60,000-entry, ~100 MB session, parsed.
func big(b *testing.B) *tree.Tree {
	bigOnce.Do(func() {
		var buf bytes.Buffer
		if err := gen.Session(&buf, 60000, 1650); err != nil {
			b.Fatal(err)
		}
		bigData = buf.Bytes()
		l, err := sessions.Parse(bigData)
		if err != nil {
			b.Fatal(err)
		}
		bigTree = tree.New(l)
	})
	return bigTree
}

// BenchmarkContextJSON is the cost Transcript is measured against:
// context.json's bytes at the leaf of the big session.
func BenchmarkContextJSON(b *testing.B) {
	t := big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := ContextJSON(t.Context())
		b.SetBytes(int64(len(out)))
	}
}

// BenchmarkContextJSONIndent makes context.json the plain way, for
// ContextJSON to beat: the compact context, then Indent.
func BenchmarkContextJSONIndent(b *testing.B) {
	t := big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := Indent(nil, t.Context().JSON())
		b.SetBytes(int64(len(out)))
	}
}

// BenchmarkPathJSON indents what context.json would hold if the path had
// no compaction: every message on the leaf's path, the same text that
// Transcript shows. It is the like-for-like measure of Transcript's cost.
func BenchmarkPathJSON(b *testing.B) {
	t := big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx := tree.Context{}
		for _, e := range t.LeafPath() {
			if e.Msg != nil {
				ctx.Messages = append(ctx.Messages, e.Msg)
			}
		}
		out := Indent(nil, ctx.JSON())
		b.SetBytes(int64(len(out)))
	}
}

// BenchmarkFirstContextJSON and BenchmarkFirstTranscript are a first
// read of each file, as the mount serves it: parse the
// session, build its tree, render. The context at the leaf starts at the
// last compaction (about 9 MB) while the transcript shows the whole path
// (about 85 MB), so rendering alone is not comparable; the first read is.
func BenchmarkFirstContextJSON(b *testing.B) {
	big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := sessions.Parse(bigData)
		if err != nil {
			b.Fatal(err)
		}
		Indent(nil, tree.New(l).Context().JSON())
	}
}

func BenchmarkFirstTranscript(b *testing.B) {
	big(b)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		l, err := sessions.Parse(bigData)
		if err != nil {
			b.Fatal(err)
		}
		Transcript(tree.New(l).LeafPath())
	}
}

func BenchmarkTranscript(b *testing.B) {
	t := big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := Transcript(t.LeafPath())
		b.SetBytes(int64(len(out)))
	}
}

// BenchmarkTranscriptReference is the reference renderer, which reads
// each field with jsjson.Get.
func BenchmarkTranscriptReference(b *testing.B) {
	t := big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := refTranscript(t.LeafPath())
		b.SetBytes(int64(len(out)))
	}
}

func BenchmarkIndent(b *testing.B) {
	raw := big(b).Context().JSON()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Indent(nil, raw)
	}
}

func BenchmarkIndentEncodingJSON(b *testing.B) {
	raw := big(b).Context().JSON()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		jsonIndent(raw)
	}
}

func TestAppendISO(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := []float64{0, -1, 1, 1747044000000, -62167219200000, -62167219200001, 253402300799999, 253402300800000, 8.64e15, -8.64e15, 951782400000, 4107542400000}
	for i := 0; i < 100000; i++ {
		cases = append(cases, math.Trunc((r.Float64()*2-1)*8.64e15), math.Trunc(r.Float64()*4e12))
	}
	for _, ms := range cases {
		if got, want := string(appendISO(nil, ms)), jsjson.FormatISO(ms); got != want {
			t.Fatalf("appendISO(%v) = %q, want %q", ms, got, want)
		}
	}
}

// TestIndentOnStores: every entry, header and context of the stores
// indents as json.Indent does.
func TestIndentOnStores(t *testing.T) {
	for _, p := range storeFiles(t) {
		tr := openTree(t, p)
		if tr == nil {
			continue
		}
		raws := [][]byte{tr.Header.Raw, tr.Context().JSON()}
		for _, e := range tr.Entries() {
			raws = append(raws, e.Raw)
		}
		for _, raw := range raws {
			if got, want := Indent(nil, raw), jsonIndent(raw); !bytes.Equal(got, want) {
				t.Fatalf("%s: Indent(%.80q) differs", p, raw)
			}
		}
	}
}
