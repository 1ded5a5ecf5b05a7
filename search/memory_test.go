package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A build with a small batch and cache, for TestBuildMemory.
const (
	memBatch = 64 << 10
	memCache = 256 // KiB
	memHash  = 64 << 10
)

// TestBuildMemory: building the index of a store whose largest session is
// 3 MB keeps less than 1 MB more of Go's heap live at any commit than
// before it started, and the process's peak RSS grows by less than that
// session: the build holds a batch (BatchBytes of text), SQLite's page
// cache (CacheKiB) and FTS5's pending terms (written out each hashsize,
// 1 MiB unless a test says), not a session or the store. The test makes
// all three small, so that what does not follow them shows.
func TestBuildMemory(t *testing.T) {
	store := t.TempDir()
	big := newSession(t, "77770000-0000-4000-8000-000000000001", "/home/user/m", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
	chunk := strings.Repeat("words of a long session, numbered ", 60)
	for i := 0; big.size() < 3<<20; i++ {
		big.user("", fmt.Sprintf("%s %d", chunk, i))
	}
	big.write(filepath.Join(store, "--home-user-m--", "big.jsonl"))
	for j := 0; j < 4; j++ {
		s := newSession(t, fmt.Sprintf("7777%04d-0000-4000-8000-000000000002", j), "/home/user/m", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
		for s.size() < 128<<10 {
			s.result("", "bash", chunk)
		}
		s.write(filepath.Join(store, "--home-user-m--", fmt.Sprintf("s%d.jsonl", j)))
	}
	x := openIndex(t, store, Options{BatchBytes: memBatch, CacheKiB: memCache, hashSize: memHash})
	live := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	base := live()
	debug.FreeOSMemory()
	rss0 := procStatus(t, "VmRSS")
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
	var peak int64
	commits := 0
	x.testHook = func(string, int) {
		commits++
		peak = max(peak, live()-base)
	}
	build(t, x, store)
	hw := procStatus(t, "VmHWM") - rss0
	t.Logf("%d commits; Go heap live at a commit: at most %d KiB over the start; the process's peak RSS: %d KiB over the start", commits, peak>>10, hw>>10)
	if commits < 20 {
		t.Fatalf("%d commits: the batches are not what the test measures", commits)
	}
	if peak > 1<<20 {
		t.Errorf("the build holds %d KiB more of Go's heap", peak>>10)
	}
	if hw > 3<<20 {
		t.Errorf("the process's peak RSS grew by %d KiB, more than the session", hw>>10)
	}
}

func (s *session) size() int {
	n := 0
	for _, l := range s.lines {
		n += len(l) + 1
	}
	return n
}

// procStatus is a size the kernel gives in /proc/self/status, in bytes.
func procStatus(t *testing.T, key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", key)
	return 0
}

// TestBuildLongLine: a session of one 32 MB line (a tool output) is
// indexed from pieces of it: the build allocates a fraction of the line,
// not the line and its text, and the words at its ends are found.
func TestBuildLongLine(t *testing.T) {
	store := t.TempDir()
	s := newSession(t, "77770000-0000-4000-8000-000000000003", "/home/user/m", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
	s.result("", "bash", "openingword "+strings.Repeat("a long \"line\" of output\n", 32<<20/24)+" closingword")
	s.write(filepath.Join(store, "--home-user-m--", "long.jsonl"))
	x := openIndex(t, store, Options{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	build(t, x, store)
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("indexing a 32 MiB line allocated %d KiB", alloc>>10)
	if alloc > 8<<20 {
		t.Errorf("indexing a 32 MiB line allocated %d MiB", alloc>>20)
	}
	// A hit's excerpt reads the line as the build does, in pieces.
	runtime.ReadMemStats(&before)
	for _, w := range []string{"openingword", "closingword"} {
		if got := find(t, x, w); len(got) != 1 {
			t.Errorf("%s: %v", w, got)
		}
	}
	runtime.ReadMemStats(&after)
	if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > 8<<20 {
		t.Errorf("two hits in a 32 MiB line allocated %d MiB", alloc>>20)
	}
	res, err := x.SearchString(context.Background(), "closingword", nil, Scope{}, 0)
	if err != nil || len(res.Hits) != 1 || !strings.HasSuffix(res.Hits[0].Excerpt, "closingword") {
		t.Errorf("the excerpt of a hit at the end of the line: %+v, %v", res, err)
	}
}
