package nodes

import (
	"io"
	"log/slog"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/view"
)

// BenchmarkFindDepth3 is what `find MNT -maxdepth 3` asks of the nodes (no
// kernel): READDIRPLUS of the root, of every project and of every folder
// in a project (the session folders among them), each name looked up with
// its attributes. "fresh" is a new mount each time (the files' headers,
// tails and names read again), "again" the same mount walked again (what
// pifs itself costs a name once the index holds the store).
func BenchmarkFindDepth3(b *testing.B) {
	store := b.TempDir()
	if _, err := gen.Store(store, gen.StoreSpec{Sessions: 200, Projects: 4, Seed: 1, MinEntries: 10, MaxExtra: 40, AvgBytes: 400}); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mount := func() *Root {
		return NewRoot(view.New(view.Options{SessionsDir: store, CacheBytes: 256 << 20, Logger: log}), log)
	}
	walk := func(r *Root) int {
		names, _ := readdirplus(b, &r.dir, false)
		for _, p := range r.v.Index().Projects() {
			d := folder(b, r, p)
			n, _ := readdirplus(b, d, false)
			names += n
			kids, err := r.v.List(d.f)
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range kids {
				if sub, ok := c.Node().(view.Folder); ok {
					n, _ := readdirplus(b, &dir{r: r, f: sub}, false)
					names += n
				}
			}
		}
		return names
	}
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			r := mount()
			b.StartTimer()
			b.ReportMetric(float64(walk(r)), "names")
		}
	})
	b.Run("again", func(b *testing.B) {
		r := mount()
		walk(r)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.ReportMetric(float64(walk(r)), "names")
		}
	})
}
