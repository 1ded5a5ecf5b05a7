package nodes

import (
	"testing"
)

// BenchmarkByIDLookup is one by-id lookup and readlink in a store of
// 10,000 sessions, the index loaded.
func BenchmarkByIDLookup(b *testing.B) {
	r, _ := costStore(b, 10000, 10)
	d := newByIDDir(r)
	names, _ := d.list()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := d.lookup(names[i%len(names)].name)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := newByIDLink(r, mustDecode(b, c.name)).target(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListing is what `ls -l` of a 60,000-entry session's views asks
// of the nodes (no kernel): the listing, then for every name what
// READDIRPLUS asks, its child from the open folder and its attributes
// (costly files have none), for branches/<leaf>, entries/ and tree/ (the
// session parsed once, a new version each time).
func BenchmarkListing(b *testing.B) {
	r, proj := costStore(b, 0, 60000)
	s := sessionRef{r, proj, "big"}
	var leaf string
	s.with(func(ss *session) error { leaf = ss.tree.LeafID(); return nil })
	for _, view := range []struct {
		name string
		dir  *dir
	}{
		{"branches-leaf", &newBranchDir(s, leaf).dir},
		{"entries", &newEntriesDir(s).dir},
		{"tree", &newSegmentDir(s, "").dir},
	} {
		b.Run(view.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				// A new version each time, as after an append.
				s.with(func(ss *session) error { ss.renders = nil; return nil })
				names, _ := readdirplus(b, view.dir, true)
				b.ReportMetric(float64(names), "names")
			}
		})
	}
}
