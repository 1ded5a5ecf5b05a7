package render

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// FuzzTreeText renders every /tree view and prompts.txt of arbitrary
// sessions, with every entry as the active leaf: each view is as long as
// its size says, has one row per listed entry, each one line with one tab
// before the entry's id; the rows of the active path are marked and the
// id of every row resolves to itself.
func FuzzTreeText(f *testing.F) {
	for _, name := range []string{"cycle.jsonl", "duplicate-ids.jsonl", "orphans.jsonl", "no-ids.jsonl", "retained-tail.jsonl", "v1.jsonl", "damaged.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}
{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"x\ud83d\u0000\n\t\r y"}}
{"type":"message","id":"b\tc","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","arguments":{"path":"/home/user/a","offset":"0x10","limit":[2]}}],"stopReason":"error","errorMessage":{"x":1}}}
{"type":"message","id":"c","parentId":"b\tc","timestamp":"2025-01-01T00:00:03Z","message":{"role":"toolResult","toolCallId":"t","content":[]}}
{"type":"label","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04Z","targetId":"a","label":["x",null,1]}
`))
	// Prompts whose ends are JavaScript white space (trimmed), or that are
	// nothing else, in strings and in text blocks.
	f.Add([]byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}
{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"\u2028 \u00a0hi\r\n\t\ufeff"}}
{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"user","content":" \n\u3000"}}
{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03Z","message":{"role":"user","content":[{"type":"text","text":"\t"},{"type":"image","data":"x"},{"type":"text","text":"x\u200a"}]}}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := sessions.Parse(data)
		if err != nil || l.Header == nil {
			return
		}
		tr := tree.New(l)
		leaves := []string{"", tr.FileLeafID()}
		for i, e := range tr.Entries() {
			if i < 8 && e.ID != "" {
				leaves = append(leaves, e.ID)
			}
		}
		now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
		for _, leaf := range leaves {
			sizes := TreeTextSizes(tr, leaf, home)
			if n, times := TreeViewSizes(tr, leaf, home, time.UTC, now).Times, TreeTimesText(tr, leaf, tree.FilterDefault, home, time.UTC, now); n != int64(len(times)) {
				t.Fatalf("tree-times.txt at %q: size %d, len %d", leaf, n, len(times))
			}
			for _, f := range tree.Filters {
				b := TreeText(tr, leaf, f, home)
				if n := sizes[f]; n != int64(len(b)) {
					t.Fatalf("%v at %q: size %d, len %d", f, leaf, n, len(b))
				}
				s := tr.Selector(leaf, f)
				if len(s.Rows) == 0 {
					if string(b) != noEntries+"\n" {
						t.Fatalf("%v at %q: no rows, view %q", f, leaf, b)
					}
					continue
				}
				rows := bytes.SplitAfter(b, []byte("\n"))
				if len(rows[len(rows)-1]) == 0 {
					rows = rows[:len(rows)-1] // after the last line feed
				}
				if len(rows) != len(s.Rows) {
					t.Fatalf("%v at %q: %d lines for %d rows", f, leaf, len(rows), len(s.Rows))
				}
				onPath := map[string]bool{}
				for _, e := range tr.PathTo(leaf) {
					onPath[e.ID] = true
				}
				for i, row := range rows {
					r := s.Rows[i]
					if bytes.Count(row, []byte("\t")) != 1 || bytes.Count(row, []byte("\n")) != 1 || bytes.IndexByte(row, '\r') >= 0 {
						t.Fatalf("row %q is not one line with one tab", row)
					}
					if r.Active != onPath[r.Node.ID] {
						t.Fatalf("row %s: active %v, on the path %v", r.Node.ID, r.Active, onPath[r.Node.ID])
					}
					if !utf8.Valid(row) {
						t.Fatalf("row %q is not UTF-8", row)
					}
				}
			}
		}
		p := Prompts(tr)
		if n := PromptsSize(tr); n != int64(len(p)) {
			t.Fatalf("prompts: size %d, len %d", n, len(p))
		}
		for _, row := range bytes.SplitAfter(p, []byte("\n")) {
			if len(row) > 0 && (bytes.Count(row, []byte("\t")) != 1 || bytes.IndexByte(row, '\r') >= 0) {
				t.Fatalf("prompt %q is not one line with one tab", row)
			}
		}
	})
}
