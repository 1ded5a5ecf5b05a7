package sessions_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
)

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestIndexBytesPerFile: what the index holds for each session file, as a
// walk of the mount leaves it (every project read, every file's header
// and tail), is at most 1 KiB, well within the 1,280 bytes the cache's
// budget counts it at (view's indexFileBytes): a File of 288 bytes, its
// name scan made only when asked for, its name a part of its path, the id
// and cwd of its header parts of the header's line. Measured on 10,000
// small sessions in 100 projects, as bench/memory.sh many makes them.
func TestIndexBytesPerFile(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 10,000 sessions")
	}
	const n = 10000
	store := filepath.Join(t.TempDir(), "many-100000")
	if _, err := gen.Store(store, gen.StoreSpec{Sessions: n, Projects: 100, Seed: 1, MinEntries: 6, AvgBytes: 300}); err != nil {
		t.Fatal(err)
	}
	before := heapInUse()
	x := sessions.NewIndex(store)
	files := x.All()
	for _, f := range files {
		f.Tail()
	}
	per := (heapInUse() - before) / int64(len(files))
	runtime.KeepAlive(x)
	t.Logf("%d files: %d bytes a file", len(files), per)
	if len(files) != n {
		t.Fatalf("%d files indexed, want %d", len(files), n)
	}
	if per > 1024 {
		t.Errorf("the index holds %d bytes a file, want at most 1,024 (the budget counts 1,280)", per)
	}
}
