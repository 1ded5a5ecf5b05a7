package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// linearSession is a session of n entries on one path: turns of an
// assistant message editing one of 50 files, then the edit's result with
// pi's patch, every tenth a write instead.
func linearSession(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"lin","timestamp":"2025-07-01T08:00:00.000Z","cwd":"/home/user/proj"}` + "\n")
	parent := "null"
	for i := 0; i < n; i += 2 {
		id, rid := fmt.Sprintf("a%07x", i), fmt.Sprintf("r%07x", i)
		file := fmt.Sprintf("src/f%02d.go", i%50)
		call := fmt.Sprintf(`{"type":"toolCall","id":"call_0","name":"edit","arguments":{"path":%q,"edits":[{"oldText":"x := %d\n","newText":"x := %d\n"}]}}`, file, i, i+1)
		details := `{"patch":"--- f\n+++ f\n@@ -10,3 +10,3 @@\n a\n-x := 1\n+x := 2\n b\n"}`
		if i%20 == 0 {
			call = fmt.Sprintf(`{"type":"toolCall","id":"call_0","name":"write","arguments":{"path":%q,"content":%q}}`, file, strings.Repeat("line\n", 40))
			details = `{}`
		}
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2025-07-01T08:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"editing"},%s],"provider":"p","model":"m","usage":{"input":1},"timestamp":1}}`+"\n", id, parent, call)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%q,"timestamp":"2025-07-01T08:00:02.000Z","message":{"role":"toolResult","toolCallId":"call_0","toolName":"edit","content":[{"type":"text","text":"Successfully replaced 1 block(s)."}],"details":%s,"isError":false,"timestamp":1}}`+"\n", rid, id, details)
		parent = fmt.Sprintf("%q", rid)
	}
	return []byte(b.String())
}

// BenchmarkFilesLeaf computes the files of a 20,000-entry path (10,000
// calls naming 50 files) and counts the sizes of files.txt, files.json
// and changes.patch, as a stat of the three would.
func BenchmarkFilesLeaf(b *testing.B) {
	data := linearSession(20000)
	l, err := sessions.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	tr := tree.New(l)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f := tr.FilesAt("")
		FilesTextSize(f)
		FilesJSONSize(f)
		ChangesPatchSize(f)
	}
}

// BenchmarkFilesOnly is BenchmarkFilesLeaf without the sizes: the
// calls and lists of the path alone.
func BenchmarkFilesOnly(b *testing.B) {
	data := linearSession(20000)
	l, err := sessions.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	tr := tree.New(l)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tr.FilesAt("")
	}
}
