package tree_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// shape describes a tree by ids for comparisons.
func shape(tr *tree.Tree) string {
	var s string
	tr.Walk(func(n *tree.Node) bool {
		s += n.ID + "("
		for _, c := range n.Children {
			s += c.ID + ","
		}
		s += ")"
		return true
	})
	return s + fmt.Sprint(ids(tr.Roots()))
}

func FuzzTree(f *testing.F) {
	for _, name := range []string{"cycle.jsonl", "duplicate-ids.jsonl", "orphans.jsonl", "no-ids.jsonl", "retained-tail.jsonl", "v1.jsonl", "damaged.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		l, err := sessions.Parse(data)
		if err != nil || l.Header == nil {
			return
		}
		tr := tree.New(l)
		reachable := 0
		tr.Walk(func(n *tree.Node) bool {
			reachable++
			if reachable > len(l.Entries) {
				t.Fatal("walk visits more nodes than there are entries")
			}
			return true
		})
		// Segments hold every reachable entry once (bar childless leaf records).
		seen := map[string]int{}
		var visit func(ss []*tree.Segment)
		visit = func(ss []*tree.Segment) {
			for _, s := range ss {
				for _, n := range s.Nodes {
					seen[n.ID]++
				}
				visit(s.Children)
			}
		}
		visit(tr.Segments())
		for id, c := range seen {
			if c != 1 {
				t.Fatalf("entry %s appears %d times in segments", id, c)
			}
		}
		for _, tip := range tr.Tips() {
			path := tr.PathTo(tip.ID)
			if len(path) == 0 || path[len(path)-1].ID != tip.ID {
				t.Fatalf("path to tip %s is %v", tip.ID, ids(path))
			}
			if !json.Valid(tr.ContextAt(tip.ID).JSON()) {
				t.Fatalf("context at %s is not valid JSON", tip.ID)
			}
		}
		if !json.Valid(tr.Context().JSON()) {
			t.Fatal("context at leaf is not valid JSON")
		}
		// The context comes back from the file's bytes by its plan.
		c := tr.Context()
		p := tree.NewPlan(c, int64(len(data)), l.FileOffset, 1<<30)
		from, to := p.Span()
		if back, ok := p.Context(data[from:to], from); !ok || !reflect.DeepEqual(back.Messages, c.Messages) {
			t.Fatalf("context from its plan differs")
		}
		// Adding entries in two batches builds the same tree as at once.
		cut := int(split) % (len(l.Entries) + 1)
		inc := tree.New(&sessions.Log{Header: l.Header, Entries: l.Entries[:cut]})
		_ = inc.Context() // remembered, then extended or rebuilt
		inc.Add(l.Entries[cut:]...)
		if a, b := inc.Context().JSON(), tr.Context().JSON(); string(a) != string(b) {
			t.Fatalf("context after adding differs:\n%s\n%s", a, b)
		}
		if a, b := shape(inc), shape(tr); a != b {
			t.Fatalf("incremental tree differs:\n%s\n%s", a, b)
		}
		if !reflect.DeepEqual(inc.Labels(), tr.Labels()) || inc.Name() != tr.Name() {
			t.Fatal("incremental labels or name differ")
		}
	})
}
