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
// of the nodes (no kernel): the listing and a lookup of every name, for
// branches/<leaf>, entries/ and tree/ (the session parsed once).
func BenchmarkListing(b *testing.B) {
	r, proj := costStore(b, 0, 60000)
	s := sessionRef{r, proj, "big"}
	var leaf string
	s.with(func(ss *session) error { leaf = ss.tree.LeafID(); return nil })
	for _, view := range []struct {
		name string
		dir  interface {
			list() ([]child, error)
			lookup(string) (child, error)
		}
	}{
		{"branches-leaf", newBranchDir(s, leaf)},
		{"entries", newEntriesDir(s)},
		{"tree-root", newSegmentDir(s, "")},
	} {
		b.Run(view.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				// A new version each time, as after an append.
				s.with(func(ss *session) error { ss.renders = nil; return nil })
				list, err := view.dir.list()
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range list {
					if _, err := view.dir.lookup(c.name); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(list)), "names")
			}
		})
	}
}
