package par

import (
	"sync/atomic"
	"testing"
)

// TestEach: every index is called exactly once, whatever n.
func TestEach(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		calls := make([]atomic.Int32, n)
		Each(n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}

// TestRanges: the ranges cover 0…n-1 in order, at least one and at most
// parts of them, none empty but the one of n = 0, and with equal weights they differ in length by at most one.
func TestRanges(t *testing.T) {
	weights := map[string]func(int) int{
		"equal":   func(int) int { return 1 },
		"zero":    func(int) int { return 0 },
		"one big": func(i int) int { return map[bool]int{true: 1000, false: 1}[i == 3] },
		"growing": func(i int) int { return i * i },
	}
	for name, w := range weights {
		for _, n := range []int{0, 1, 2, 5, 100} {
			for _, parts := range []int{0, 1, 2, 3, 8, 200} {
				b := Ranges(n, parts, w)
				if b[0] != 0 || b[len(b)-1] != n {
					t.Fatalf("%s n=%d parts=%d: bounds %v do not span 0…%d", name, n, parts, b, n)
				}
				if want := max(min(parts, n), 1); len(b)-1 > want || len(b) < 2 {
					t.Fatalf("%s n=%d parts=%d: %d ranges, want at most %d", name, n, parts, len(b)-1, want)
				}
				for k := 1; k < len(b); k++ {
					if b[k] <= b[k-1] && n > 0 {
						t.Fatalf("%s n=%d parts=%d: empty or reversed range in %v", name, n, parts, b)
					}
				}
			}
		}
	}
	b := Ranges(100, 8, weights["equal"])
	if len(b) != 9 {
		t.Fatalf("100 equal items in 8 parts: bounds %v", b)
	}
	for k := 1; k < len(b); k++ {
		if l := b[k] - b[k-1]; l < 12 || l > 13 {
			t.Errorf("100 equal items in 8 parts: range %d has %d items (%v)", k-1, l, b)
		}
	}
	// One heavy item: the cut falls right after it.
	b = Ranges(7, 2, weights["one big"])
	if len(b) != 3 || b[1] != 4 {
		t.Errorf("one heavy item at 3 of 7, 2 parts: bounds %v, want [0 4 7]", b)
	}
}
