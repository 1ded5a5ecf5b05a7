package names

import (
	"slices"
	"strings"
	"testing"
)

// TestPathOrder: PathOrder gives every position once, in the order of
// their PathNames.
func TestPathOrder(t *testing.T) {
	for _, n := range []int{0, 1, 9, 999, 1000, 1001, 9999, 10000, 10001, 12345, 100000, 100010} {
		var got []string
		PathOrder(n, func(pos int) { got = append(got, PathName(pos, "message", "id", ".json")) })
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
			if pos, ok := PathPos(s); !ok || PathName(pos, "message", "id", ".json") != s {
				t.Fatalf("n %d: %s reads as position %d", n, s, pos)
			}
		}
		if n > 0 && !strings.HasPrefix(got[0], "0001-") {
			t.Fatalf("n %d: first %s", n, got[0])
		}
	}
}
