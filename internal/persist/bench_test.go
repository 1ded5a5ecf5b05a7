package persist

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkFolders is what a new mount of a store of 10,000 sessions in 50
// folders asks of the cache the last mount left: the file opened, and
// every folder's records read.
func BenchmarkFolders(b *testing.B) {
	dir := b.TempDir()
	var l logged
	o := Options{Dir: dir, Store: "/store", Build: "bench", Log: l.log}
	c := Open(o)
	header := []byte(`{"type":"session","version":3,"id":"0196c3ef-e100-70f4-96f8-000000000000","timestamp":"2025-05-12T10:00:00.000Z","cwd":"/home/user/project"}`)
	for i := range 10000 {
		c.Put(fmt.Sprintf("/store/--home-user-p%02d--/2025-05-12T10-00-00-000Z_%05d.jsonl", i%50, i), v1,
			map[string][]byte{"sessions.header": header, "sessions.end": []byte(strings.Repeat("e", 64)), "view.sizes": []byte("a few dozen bytes of sizes")})
	}
	c.Close()
	b.ResetTimer()
	for range b.N {
		c := Open(o)
		n := 0
		for f := range 50 {
			n += len(c.Folder(fmt.Sprintf("/store/--home-user-p%02d--", f)))
		}
		if n != 10000 {
			b.Fatalf("%d records", n)
		}
		b.StopTimer()
		c.Close()
		b.StartTimer()
	}
	if lines := l.get(); len(lines) != 0 {
		b.Fatalf("log: %v", lines)
	}
}
