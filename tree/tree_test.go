package tree_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// These tests pin what pifs does where pi 1.6 hangs, misbehaves or (for
// retainedTail) predates the SPEC. Each expectation was worked out by hand
// from the fixture.

func load(t *testing.T, name string) *tree.Tree {
	t.Helper()
	l, err := sessions.Open(filepath.Join("..", "testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return tree.New(l)
}

func ids[T interface{ *tree.Node | *sessions.Entry }](list []T) []string {
	out := []string{}
	for _, x := range list {
		switch v := any(x).(type) {
		case *tree.Node:
			out = append(out, v.ID)
		case *sessions.Entry:
			out = append(out, v.ID)
		}
	}
	return out
}

func texts(t *testing.T, c *tree.Context) []string {
	t.Helper()
	var out []string
	for _, m := range c.Messages {
		var v struct {
			Role    string
			Content json.RawMessage
			Summary string
		}
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatal(err)
		}
		text := v.Summary
		var s string
		var blocks []struct{ Text string }
		if json.Unmarshal(v.Content, &s) == nil {
			text = s
		} else if json.Unmarshal(v.Content, &blocks) == nil && len(blocks) > 0 {
			text = blocks[0].Text
		}
		out = append(out, v.Role+":"+text)
	}
	return out
}

func TestCycle(t *testing.T) {
	tr := load(t, "cycle.jsonl")
	if got := ids(tr.Roots()); !reflect.DeepEqual(got, []string{"r1", "s1"}) {
		t.Errorf("roots %v", got)
	}
	if got := ids(tr.Tips()); !reflect.DeepEqual(got, []string{"r3", "s1"}) {
		t.Errorf("tips %v (entries on or below the cycle are not reachable)", got)
	}
	if got := ids(tr.PathTo("y1")); !reflect.DeepEqual(got, []string{"x2", "x1", "y1"}) {
		t.Errorf("path to y1 %v: the walk must stop before repeating", got)
	}
	if got := ids(tr.PathTo("s1")); !reflect.DeepEqual(got, []string{"s1"}) {
		t.Errorf("self-parent path %v", got)
	}
	if got := texts(t, tr.ContextAt("x1")); !reflect.DeepEqual(got, []string{"assistant:cycle b", "user:cycle a"}) {
		t.Errorf("context in cycle %v", got)
	}
	if n := tr.Node("x1"); n == nil || n.Parent == nil || n.Parent.ID != "x2" {
		t.Error("cycle entries are still entries")
	}
}

func TestRetainedTail(t *testing.T) {
	tr := load(t, "retained-tail.jsonl")
	want := []string{
		"system:be brief", "compactionSummary:summary of old",
		"user:kept question", "assistant:kept answer", // retainedTail, not entries t3 and t4
		"user:edited new question", "assistant:new answer",
	}
	if got := texts(t, tr.Context()); !reflect.DeepEqual(got, want) {
		t.Errorf("context\n got %q\nwant %q", got, want)
	}
	// Before the compaction, the path is read as usual.
	if got := texts(t, tr.ContextAt("t4")); len(got) != 5 || got[0] != "system:be brief" {
		t.Errorf("context at t4 %q", got)
	}
}

func TestDuplicateIDs(t *testing.T) {
	tr := load(t, "duplicate-ids.jsonl")
	p2 := tr.Node("p2")
	if !strings.Contains(string(p2.Raw), "second p2 wins") {
		t.Fatal("the later duplicate must win")
	}
	if got := ids(p2.Children); !reflect.DeepEqual(got, []string{"p3", "p4"}) {
		t.Errorf("children of p2 %v: the winner takes over the loser's children", got)
	}
	if got := ids(tr.Node("p1").Children); !reflect.DeepEqual(got, []string{"p2"}) {
		t.Errorf("children of p1 %v: p2 once", got)
	}
	if got := ids(tr.Tips()); !reflect.DeepEqual(got, []string{"p3", "p4"}) {
		t.Errorf("tips %v", got)
	}
	if tr.Len() != 4 {
		t.Errorf("Len %d, want 4 distinct ids", tr.Len())
	}
}

func TestNoIDs(t *testing.T) {
	tr := load(t, "no-ids.jsonl")
	if tr.Leaf().ID != "" || tr.LeafID() != "" {
		t.Error("the leaf is the last entry, which has no id")
	}
	want := []string{"user:has id", "user:has id again", "assistant:last without id"}
	if got := texts(t, tr.Context()); !reflect.DeepEqual(got, want) {
		t.Errorf("context at an id-less leaf %q", got)
	}
	if got := ids(tr.Tips()); !reflect.DeepEqual(got, []string{"i2"}) {
		t.Errorf("tips %v", got)
	}
}

func TestDamaged(t *testing.T) {
	tr := load(t, "damaged.jsonl")
	if n := len(tr.Entries()); n != 9 {
		t.Errorf("%d entries, want 9 (d1, four non-objects, d2, d4, d5, d6)", n)
	}
	if tr.Name() != "Damaged" {
		t.Errorf("name %q", tr.Name())
	}
	if l, _ := tr.Label("d1"); l.Text != "start" {
		t.Errorf("label %q", l.Text)
	}
	if tr.LeafID() != "d6" {
		t.Errorf("leaf %q: the last line has no newline but is complete", tr.LeafID())
	}
	if id, ok := tr.Resolve("start"); !ok || id != "d1" {
		t.Errorf("label resolves to %q", id)
	}
}

func TestSegments(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}`,
		`{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[]}}`,
		`{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"c"}}`,
		`{"type":"message","id":"d","parentId":"b","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"d"}}`,
		`{"type":"message","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","content":[]}}`,
		`{"type":"custom","customType":"pifs.leaf","data":{"leaf":"c"},"id":"f","parentId":"c","timestamp":"2026-01-01T00:00:06.000Z"}`,
	}
	l, err := sessions.Parse([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr := tree.New(l)
	segs := tr.Segments()
	if len(segs) != 1 || !reflect.DeepEqual(ids(segs[0].Nodes), []string{"a", "b"}) {
		t.Fatalf("root segment %v", segs)
	}
	var kids [][]string
	for _, s := range segs[0].Children {
		kids = append(kids, ids(s.Nodes))
	}
	if !reflect.DeepEqual(kids, [][]string{{"c"}, {"d", "e"}}) {
		t.Errorf("child segments %v (a childless leaf record is not a branch)", kids)
	}
	if got := ids(tr.Tips()); !reflect.DeepEqual(got, []string{"c", "e"}) {
		t.Errorf("tips %v: the leaf record is never a tip", got)
	}
	if tr.LeafID() != "c" {
		t.Errorf("leaf %q: a leaf record stands for the entry it points at", tr.LeafID())
	}
}

func TestV1StableIDs(t *testing.T) {
	a, b := load(t, "v1.jsonl"), load(t, "v1.jsonl")
	if !reflect.DeepEqual(ids(a.Roots()), ids(b.Roots())) || a.LeafID() != b.LeafID() || a.LeafID() == "" {
		t.Fatal("v1 ids must be the same on every read")
	}
	path := a.PathTo(a.LeafID())
	if len(path) != 7 {
		t.Fatalf("v1 path has %d entries, want the 7 as one chain", len(path))
	}
	comp := path[4]
	if fk, _ := comp.Str("firstKeptEntryId"); fk != path[2].ID || comp.Get("firstKeptEntryIndex") != nil {
		t.Errorf("firstKeptEntryIndex 3 must become the id of the third entry: %s", comp.Raw)
	}
	if path[5].Role != "custom" {
		t.Errorf("hookMessage must become custom, got %q", path[5].Role)
	}
}

// TestContextGrowsWithAppends builds each session of the demo store (written
// by pi) one entry at a time, asking for the context at every step, as the
// mount does while pi works; each must equal the context of a tree built
// from scratch.
func TestContextGrowsWithAppends(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "demo", "*", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no demo sessions")
	}
	steps := 0
	for _, f := range files {
		l, err := sessions.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		inc := tree.New(&sessions.Log{Header: l.Header})
		for i, e := range l.Entries {
			inc.Add(e)
			fresh := tree.New(&sessions.Log{Header: l.Header, Entries: l.Entries[:i+1]})
			if a, b := inc.Context().JSON(), fresh.Context().JSON(); string(a) != string(b) {
				t.Fatalf("%s: after entry %d (%s) the context differs", filepath.Base(f), i, e.Type)
			}
			steps++
		}
	}
	t.Logf("%d steps compared", steps)
}
