package view

import (
	"slices"
	"strings"
	"testing"

	"github.com/pifs/pifs/sessions"
)

// TestPathOrder: pathOrder gives every position once, in the order of
// the names the branch folder gives them.
func TestPathOrder(t *testing.T) {
	e := &sessions.Entry{ID: "id", Type: "message"}
	for _, n := range []int{0, 1, 9, 999, 1000, 1001, 9999, 10000, 10001, 12345, 100000, 100010} {
		var got []string
		pathOrder(n, func(pos int) { got = append(got, pathFileName(pos, e)) })
		if len(got) != n {
			t.Fatalf("n %d: %d positions", n, len(got))
		}
		if !slices.IsSorted(got) {
			t.Fatalf("n %d: not in name order", n)
		}
		seen := map[string]bool{}
		for _, s := range got {
			if seen[s] {
				t.Fatalf("n %d: %s twice", n, s)
			}
			seen[s] = true
		}
		if n > 0 && !strings.HasPrefix(got[0], "0001-") {
			t.Fatalf("n %d: first %s", n, got[0])
		}
	}
}
