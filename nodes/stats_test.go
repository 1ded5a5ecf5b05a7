package nodes

import (
	"encoding/json"
	"testing"

	"github.com/pifs/pifs/view"
)

// counts are what these tests read of .pifs/stats.
type counts struct {
	Lookups, Uses, Parsed int64
}

// statsReader looks up .pifs/stats once and returns a function that reads
// it, so that reading the counts adds no lookup to them.
func statsReader(t *testing.T, v *view.View) func() counts {
	t.Helper()
	d, err := v.Lookup(v.Root(), ".pifs")
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Lookup(d.Node().(view.Folder), "stats")
	if err != nil {
		t.Fatal(err)
	}
	f := c.Node().(view.File)
	return func() counts {
		t.Helper()
		data, err := v.Content(f)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			View  struct{ Lookups int64 }
			Cache struct{ Uses, Parsed int64 }
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		return counts{s.View.Lookups, s.Cache.Uses, s.Cache.Parsed}
	}
}
