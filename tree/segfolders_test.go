package tree_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// segTree is a→b, b forks into c (with a childless leaf record f below
// it) and d→e.
func segTree(t *testing.T) *tree.Tree {
	t.Helper()
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
	return tree.New(l)
}

// TestSegmentTable: each folder of the tree of segments holds its
// segment's nodes, knows the position of the first on its root path, and
// the segments that start below it; the top's are the roots.
func TestSegmentTable(t *testing.T) {
	m := segTree(t).SegmentTable()
	got := map[string]string{}
	for k, info := range m {
		got[k] = fmt.Sprint(ids(info.Nodes), info.Pos, ids(info.Next))
	}
	want := map[string]string{
		"":  "[] 0 [a]",
		"a": "[a b] 1 [c d]",
		"c": "[c] 3 []",
		"d": "[d e] 3 []",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("segment table %v, want %v", got, want)
	}
}

// TestSegmentFolder: an entry's folder is the segments from the top down
// to its own, and its position is on its root path; a childless leaf
// record shows in no folder.
func TestSegmentFolder(t *testing.T) {
	tr := segTree(t)
	for id, want := range map[string]string{
		"a": "[a] 1 true",
		"b": "[a] 2 true",
		"c": "[a c] 3 true",
		"e": "[a d] 4 true",
		"f": "[] 0 false",
	} {
		firsts, pos, ok := tr.SegmentFolder(tr.Node(id))
		if got := fmt.Sprint(ids2(firsts), pos, ok); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}

func ids2(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// TestVisibleBefore: the children of a node that showed before the
// entries from an offset on were added: those written before it, but a
// leaf record that had no children then.
func TestVisibleBefore(t *testing.T) {
	tr := segTree(t)
	b, c := tr.Node("b"), tr.Node("c")
	d, f := tr.Node("d"), tr.Node("f")
	for _, tc := range []struct {
		n    *tree.Node
		from int64
		want int
	}{
		{b, d.Offset, 1},     // c only: d came later
		{b, f.Offset + 1, 2}, // c and d
		{b, b.Offset + 1, 0}, // neither
		{c, f.Offset + 1, 0}, // f is a leaf record without children
		{d, f.Offset + 1, 1}, // e
	} {
		if got := tc.n.VisibleBefore(tc.from); got != tc.want {
			t.Errorf("%s before %d: %d, want %d", tc.n.ID, tc.from, got, tc.want)
		}
	}
}
