package view

import (
	"testing"
)

// BenchmarkByIDLookup is one by-id lookup and readlink in a store of
// 10,000 sessions, the index loaded.
func BenchmarkByIDLookup(b *testing.B) {
	v, _ := costStore(b, 10000, 10)
	d := newByIDDir(v)
	names, _ := d.list()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := d.lookup(names[i%len(names)].Name)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := newByIDLink(v, mustDecode(b, c.Name)).target(); err != nil {
			b.Fatal(err)
		}
	}
}
