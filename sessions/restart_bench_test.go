package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/persist"
)

// BenchmarkRestart is a new mount's index of an unchanged store of 10,000
// sessions in 50 folders, with the persistent cache the last mount left:
// every project read, each file's header, leaf, name and views' sizes
// taken from the cache (what ls -l by-id and ls -l of every session
// folder ask of the index, without the kernel).
func BenchmarkRestart(b *testing.B) {
	dir := b.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range 10000 {
		p := filepath.Join(dir, fmt.Sprintf("--p%d--", i%50), fmt.Sprintf("s%05d.jsonl", i))
		var s strings.Builder
		s.WriteString(header(fmt.Sprintf("id-%05d", i), "/p"))
		fmt.Fprintf(&s, `{"type":"message","id":"a%d","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"hi"}}`+"\n", i)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	time.Sleep(racyWindow + 100*time.Millisecond) // none racy: all kept
	cacheDir := b.TempDir()
	open := func() *persist.Cache {
		return persist.Open(persist.Options{Dir: cacheDir, Store: dir, Build: "bench"})
	}
	sizes := []byte("sizes of the views, as view keeps them: a few dozen bytes")
	c := open()
	x := NewIndex(dir)
	x.Keep(c)
	for _, f := range x.All() {
		f.Tail()
		f.SetFact("view.sizes", sizes)
	}
	c.Close()
	b.ResetTimer()
	for range b.N {
		c := open()
		x := NewIndex(dir)
		x.Keep(c)
		all := x.All()
		for _, f := range all {
			f.Tail()
			if _, ok := f.Fact("view.sizes"); !ok {
				b.Fatal("sizes not kept")
			}
		}
		b.StopTimer()
		if len(all) != 10000 || x.Stats().Headers != 0 {
			b.Fatalf("%d sessions, %d headers read", len(all), x.Stats().Headers)
		}
		c.Close()
		b.StartTimer()
	}
}
