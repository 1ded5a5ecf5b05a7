package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/persist"
)

// keepLog collects a persistent cache's log lines.
type keepLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *keepLog) log(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, msg)
}

func (l *keepLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// keptIndex is a new index of dir (a new mount) with its persistent cache
// in cacheDir.
func keptIndex(t *testing.T, dir, cacheDir string, l *keepLog) (*Index, *persist.Cache) {
	t.Helper()
	c := persist.Open(persist.Options{Dir: cacheDir, Store: dir, Build: "test", Log: l.log})
	t.Cleanup(func() { c.Close() })
	x := NewIndex(dir)
	x.Keep(c)
	return x, c
}

// keepStore writes n sessions in two projects, each named, with a leaf
// and an activity, and waits until none is racy.
func keepStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		p := fmt.Sprintf("--p%d--", i%2)
		var b strings.Builder
		b.WriteString(header(fmt.Sprintf("id-%03d", i), "/p"))
		fmt.Fprintf(&b, `{"type":"message","id":"a%d","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"hi"}}`+"\n", i)
		fmt.Fprintf(&b, `{"type":"session_info","id":"b%d","parentId":"a%d","timestamp":"2026-01-02T00:00:01.000Z","name":"name %d"}`+"\n", i, i, i)
		writeIndexed(t, filepath.Join(dir, p, fmt.Sprintf("s%03d.jsonl", i)), b.String())
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	return dir
}

// walk asks of every session what a listing shows: header, tail, name and
// a view size.
func walk(t *testing.T, x *Index) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range x.All() {
		tail, err := f.Tail()
		if err != nil {
			t.Fatal(err)
		}
		name, err := f.SessionName()
		if err != nil {
			t.Fatal(err)
		}
		// A fact of another package's, kept opaque.
		var size int64
		if b, ok := f.Fact("view.size"); ok {
			size, _ = strconv.ParseInt(string(b), 10, 64)
		} else {
			size = int64(len(name)) * 3
			f.SetFact("view.size", []byte(strconv.FormatInt(size, 10)))
		}
		out[f.Project+"/"+f.Name] = fmt.Sprintf("%s %s %v %s %v %d", f.Header.ID, f.Header.Cwd, tail.Activity, tail.Leaf, name, size)
	}
	return out
}

// TestKeepWalk: a new index of an unchanged store with a warm cache opens
// no file for what a walk asks (headers, tails, names, view sizes) and
// answers as one that read them.
func TestKeepWalk(t *testing.T) {
	dir := keepStore(t, 20)
	cacheDir := t.TempDir()
	var l keepLog
	x1, c1 := keptIndex(t, dir, cacheDir, &l)
	first := walk(t, x1)
	if headers := x1.Stats().Headers; headers != 20 {
		t.Fatalf("the first index read %d headers, want 20", headers)
	}
	c1.Close()

	x2, _ := keptIndex(t, dir, cacheDir, &l)
	second := walk(t, x2)
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Errorf("from the cache:\n%v\nread:\n%v", second, first)
	}
	if headers := x2.Stats().Headers; headers != 0 || x2.Stats().FromCache != 20 {
		t.Errorf("with a warm cache: %d headers read, %d files from the cache; want 0 and 20", headers, x2.Stats().FromCache)
	}
	for _, f := range x2.All() {
		if n := f.names.Load(); f.tailErr != nil || n == nil || n.scan.upTo == 0 {
			t.Fatalf("%s: tail or name not from the cache", f.Name)
		}
	}
	if lines := l.get(); len(lines) != 0 {
		t.Errorf("log: %q", lines)
	}
}

// TestKeepChanged: files changed between mounts are read again: one grown
// (its name scan goes on from the cache's end), one rewritten with the
// same size and mtime, one replaced by another file, one removed; the
// others come from the cache.
func TestKeepChanged(t *testing.T) {
	dir := keepStore(t, 10)
	cacheDir := t.TempDir()
	var l keepLog
	x1, c1 := keptIndex(t, dir, cacheDir, &l)
	walk(t, x1)
	c1.Close()

	path := func(i int) string {
		return filepath.Join(dir, fmt.Sprintf("--p%d--", i%2), fmt.Sprintf("s%03d.jsonl", i))
	}
	// Grown: a new name appended.
	f, _ := os.OpenFile(path(0), os.O_WRONLY|os.O_APPEND, 0)
	fmt.Fprintf(f, `{"type":"session_info","id":"c0","parentId":"b0","timestamp":"2026-01-03T00:00:00.000Z","name":"renamed"}`+"\n")
	f.Close()
	// Rewritten in place, same size, mtime put back: another id, another
	// name of the same length.
	fi, _ := os.Stat(path(2))
	data, _ := os.ReadFile(path(2))
	os.WriteFile(path(2), []byte(strings.ReplaceAll(strings.ReplaceAll(string(data), "id-002", "id-XYZ"), "name 2", "NAME 2")), 0o644)
	os.Chtimes(path(2), fi.ModTime(), fi.ModTime())
	// Replaced by another file of the same size and mtime.
	fi, _ = os.Stat(path(4))
	data, _ = os.ReadFile(path(4))
	os.WriteFile(path(4)+".new", []byte(strings.ReplaceAll(string(data), "name 4", "eman 4")), 0o644)
	os.Chtimes(path(4)+".new", fi.ModTime(), fi.ModTime())
	os.Rename(path(4)+".new", path(4))
	os.Remove(path(6))
	time.Sleep(racyWindow + 100*time.Millisecond)

	x2, _ := keptIndex(t, dir, cacheDir, &l)
	got := walk(t, x2)
	x3 := NewIndex(dir) // no cache: what is in the files
	want := walk(t, x3)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("with the cache:\n%v\nwithout:\n%v", got, want)
	}
	if !strings.Contains(got["--p0--/s000"], "renamed") || !strings.Contains(got["--p0--/s002"], "id-XYZ") || !strings.Contains(got["--p0--/s004"], "eman 4") {
		t.Errorf("changed files answered from the cache: %v", got)
	}
	if headers := x2.Stats().Headers; headers != 3 || x2.Stats().FromCache != 6 {
		t.Errorf("%d headers read, %d files from the cache; want 3 (the changed files) and 6", headers, x2.Stats().FromCache)
	}
	for _, f := range x2.All() {
		if f.Name == "s000" && f.grewFrom == nil {
			t.Error("the grown file's earlier version was not taken up")
		}
		if f.Name != "s000" && f.grewFrom != nil {
			t.Errorf("%s: taken as grown", f.Name)
		}
	}
}

// TestKeepRacy: a version changed within racyWindow is neither kept nor
// taken from the cache.
func TestKeepRacy(t *testing.T) {
	dir := t.TempDir()
	cacheDir := t.TempDir()
	writeIndexed(t, filepath.Join(dir, "--p--", "s.jsonl"), header("one", "/p"))
	var l keepLog
	x1, c1 := keptIndex(t, dir, cacheDir, &l)
	walk(t, x1)
	c1.Close()
	x2, _ := keptIndex(t, dir, cacheDir, &l)
	walk(t, x2)
	if x2.Stats().FromCache != 0 {
		t.Error("a racy version was kept")
	}
}

// TestKeepBadCache: whatever is wrong with the cache file, the index
// answers as one without a cache, with one log line.
func TestKeepBadCache(t *testing.T) {
	dir := keepStore(t, 6)
	want := walk(t, NewIndex(dir))
	for _, spoil := range []struct {
		name string
		fn   func(path string)
	}{
		{"truncated", func(path string) {
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()/2)
		}},
		{"garbage", func(path string) { os.WriteFile(path, []byte(strings.Repeat("garbage", 5000)), 0o600) }},
	} {
		t.Run(spoil.name, func(t *testing.T) {
			cacheDir := t.TempDir()
			var l keepLog
			x1, c1 := keptIndex(t, dir, cacheDir, &l)
			walk(t, x1)
			c1.Close()
			spoil.fn(c1.Path())
			x2, _ := keptIndex(t, dir, cacheDir, &l)
			if got := walk(t, x2); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if lines := l.get(); len(lines) != 1 || !strings.Contains(lines[0], "discarded") {
				t.Errorf("log: %q", lines)
			}
		})
	}
}

// TestKeepMissingFact: a new index of an unchanged store asks the
// persistent cache nothing for a fact the cache's records of the files do
// not hold (a walk that never counted a view's size leaves none, and the
// walk after a remount asks for it of every file): the record read with
// the folder tells what the version has. A large fact is still looked up.
func TestKeepMissingFact(t *testing.T) {
	dir := keepStore(t, 20)
	cacheDir := t.TempDir()
	var l keepLog
	x1, c1 := keptIndex(t, dir, cacheDir, &l)
	big := strings.Repeat("x", heldFactBytes+1)
	for i, f := range x1.All() {
		if _, err := f.Tail(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			f.SetFact("other.big", []byte(big))
		}
	}
	c1.Close()

	x2, c2 := keptIndex(t, dir, cacheDir, &l)
	all := x2.All()
	gets := c2.Stats().Gets.Load()
	for _, f := range all {
		if _, ok := f.Fact("view.size"); ok {
			t.Fatalf("%s: a fact never kept", f.Name)
		}
	}
	if n := c2.Stats().Gets.Load() - gets; n != 0 {
		t.Errorf("%d look-ups of the cache for a fact its records lack, want 0", n)
	}
	if b, ok := all[0].Fact("other.big"); !ok || string(b) != big {
		t.Errorf("the large fact: %v", ok)
	}
	if n := c2.Stats().Gets.Load() - gets; n != 1 {
		t.Errorf("%d look-ups for the large fact, want 1", n)
	}
}
