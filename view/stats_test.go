package view

import (
	"encoding/json"
	"testing"
)

// testCounts are what view's tests read of .pifs/stats.
type testCounts struct {
	View struct {
		Scanned, Sights, TreeCounts int64
	}
	Cache struct {
		Parsed, ParentSteps int64
	}
}

// statsOf reads .pifs/stats as the view makes it.
func statsOf(t *testing.T, v *View) testCounts {
	t.Helper()
	var s testCounts
	if err := json.Unmarshal(v.stats(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}
