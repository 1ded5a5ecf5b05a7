package txn

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRefusals: each key keeps its last KeepRefusals refusals, oldest
// first, one line each after its time, and when the last came; another
// key keeps its own.
func TestRefusals(t *testing.T) {
	var rs Refusals
	if data, last := rs.Get("p/s"); len(data) != 0 || !last.IsZero() {
		t.Errorf("nothing recorded: %q, %v", data, last)
	}
	before := time.Now()
	for i := range KeepRefusals + 5 {
		rs.Add("p/s", fmt.Sprintf("refusal %d\nsecond line", i))
	}
	rs.Add("p/", "an import")
	data, last := rs.Get("p/s")
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != KeepRefusals {
		t.Fatalf("%d lines kept, want %d", len(lines), KeepRefusals)
	}
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z refusal (\d+) second line$`)
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil || m[1] != fmt.Sprint(i+5) {
			t.Errorf("line %d: %q, want refusal %d after its time", i, l, i+5)
		}
	}
	if last.Before(before) {
		t.Errorf("last refusal at %v, before the first was added", last)
	}
	if data, _ := rs.Get("p/"); !strings.HasSuffix(string(data), " an import\n") {
		t.Errorf("the other key: %q", data)
	}
}

// TestAddOnce: the same refusal again within the window is told once; a
// different one, or the same after the window, is added; Add always adds.
func TestAddOnce(t *testing.T) {
	var rs Refusals
	count := func() int { d, _ := rs.Get("k"); return strings.Count(string(d), "\n") }
	if !rs.AddOnce("k", "bad query", time.Hour) || rs.AddOnce("k", "bad query", time.Hour) || count() != 1 {
		t.Fatalf("the same twice: %d lines", count())
	}
	if !rs.AddOnce("k", "another", time.Hour) || !rs.AddOnce("k", "bad query", time.Hour) || count() != 3 {
		t.Fatalf("another between: %d lines", count())
	}
	time.Sleep(2 * time.Millisecond)
	if !rs.AddOnce("k", "bad query", time.Millisecond) {
		t.Error("after the window: not added")
	}
	rs.Add("k", "bad query")
	if count() != 5 {
		t.Errorf("Add after AddOnce: %d lines, want 5", count())
	}
	if !rs.AddOnce("other", "bad query", time.Hour) {
		t.Error("another key: not added")
	}
}
