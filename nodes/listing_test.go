package nodes

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/view"
)

// The folders' handles without a kernel: what READDIRPLUS asks of a
// listing, and what it costs.

// testRoot is a root over a store of n small sessions in one project and
// one session, big, of entries entries; and the project's name.
func testRoot(t testing.TB, n, entries int) (*Root, string) {
	t.Helper()
	const proj = "--home-u-p--"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, proj), 0o755)
	for i := 0; i < n; i++ {
		line := fmt.Sprintf(`{"type":"session","version":3,"id":"id-%05d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p"}`+"\n", i)
		os.WriteFile(filepath.Join(dir, proj, fmt.Sprintf("s%05d.jsonl", i)), []byte(line), 0o644)
	}
	if entries > 0 {
		f, err := os.Create(filepath.Join(dir, proj, "big.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := gen.Session(f, entries, 200); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return NewRoot(view.New(view.Options{SessionsDir: dir, CacheBytes: 256 << 20, Logger: log}), log), proj
}

// folder is the folder at path below the root, as lookups find it.
func folder(t testing.TB, r *Root, path string) *dir {
	t.Helper()
	f := r.v.Root()
	for _, name := range strings.Split(path, "/") {
		c, err := r.v.Lookup(f, name)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var ok bool
		if f, ok = c.Node().(view.Folder); !ok {
			t.Fatalf("%s: %s is no folder", path, name)
		}
	}
	return &dir{r: r, f: f}
}

// leafOf is the leaf of a session folder, as its leaf file reads.
func leafOf(t testing.TB, r *Root, session string) string {
	t.Helper()
	c, err := r.v.Lookup(folder(t, r, session).f, "leaf")
	if err != nil {
		t.Fatal(err)
	}
	data, err := r.v.Content(c.Node().(view.File))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}

// readdirplus asks of d what READDIRPLUS does, through an open folder:
// the listing, then each name's lookup and attributes (and of its
// sub-folders if deep, as ls -lR). It returns the number of names and of
// folders listed.
func readdirplus(t testing.TB, d *dir, deep bool) (names, folders int) {
	folders = 1
	eachPlus(t, d, func(de *fuse.DirEntry, c view.Child, n view.Node, out *fuse.EntryOut, errno syscall.Errno) {
		names++
		if view.Costly(c.Node()) && errno == syscall.ENOENT {
			return // a costly file: the name alone
		}
		if errno != 0 {
			t.Fatalf("%s: %v", de.Name, errno)
		}
		if out.Attr.Ino != de.Ino || c.Ino != de.Ino {
			t.Fatalf("%s: READDIRPLUS gives inode %d, the listing %d", de.Name, out.Attr.Ino, de.Ino)
		}
		if sub, ok := n.(view.Folder); ok && deep {
			n, f := readdirplus(t, &dir{r: d.r, f: sub}, deep)
			names, folders = names+n, folders+f
		}
	})
	return names, folders
}

// eachPlus reads a folder as READDIRPLUS does, and gives fn each name
// but "." and ".." with what its lookup answered.
func eachPlus(t testing.TB, d *dir, fn func(de *fuse.DirEntry, c view.Child, n view.Node, out *fuse.EntryOut, errno syscall.Errno)) {
	h := &dirHandle{d: d}
	for {
		de, errno := h.Readdirent(context.Background())
		if errno != 0 {
			t.Fatal(errno)
		}
		if de == nil {
			return
		}
		if de.Name == "." || de.Name == ".." {
			continue
		}
		var out fuse.EntryOut
		c, n, errno := h.lookup(de.Name, &out)
		fn(de, c, n, &out, errno)
	}
}

// TestReaddirplusCost: READDIRPLUS of a folder answers every name from
// its listing: by-id/, entries/, branches/<leaf>/ and tree/ look up no
// name again and take the session once per folder (and once per
// sub-folder's mtime in tree/), however many names they hold.
func TestReaddirplusCost(t *testing.T) {
	const entries = 3000
	r, proj := testRoot(t, 1000, entries)
	big := proj + "/big"
	leaf := leafOf(t, r, big)
	stats := statsReader(t, r.v)
	for _, v := range []struct {
		path string
		deep bool
	}{
		{"by-id", false},
		{big + "/entries", false},
		{big + "/branches/" + leaf, false},
		{big + "/tree", true},
	} {
		d := folder(t, r, v.path)
		before := stats()
		names, folders := readdirplus(t, d, v.deep)
		after := stats()
		if names < 1000 {
			t.Errorf("%s: %d names", v.path, names)
		}
		if n := after.Lookups - before.Lookups; n != 0 {
			t.Errorf("%s: READDIRPLUS of %d names looked up %d again", v.path, names, n)
		}
		if n := after.Uses - before.Uses; n > int64(2*folders) {
			t.Errorf("%s: READDIRPLUS of %d names in %d folders took the session %d times", v.path, names, folders, n)
		}
	}
}

// TestReaddirplusKnownSizes: READDIRPLUS of a session folder gives the
// costly files by name alone until their sizes were counted, then with
// their attributes, the sizes stat gives; neither parses the session, and
// a walk answered this way keeps reading ahead.
func TestReaddirplusKnownSizes(t *testing.T) {
	dir := t.TempDir()
	const proj = "--home-u-p--"
	if err := gen.Numbered(filepath.Join(dir, proj), 6, 40, 100); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := NewRoot(view.New(view.Options{SessionsDir: dir, CacheBytes: 256 << 20, Logger: log}), log)
	// The project is listed, as a walk lists it first.
	if _, err := r.v.List(folder(t, r, proj).f); err != nil {
		t.Fatal(err)
	}
	session := func(i int) string { return fmt.Sprintf("%s/s%03d", proj, i) }
	costly := []string{"context.json", "transcript.md", "transcript.html", "info.json", "name"}
	list := func(i int) map[string]fuse.Attr {
		t.Helper()
		got := map[string]fuse.Attr{}
		eachPlus(t, folder(t, r, session(i)), func(de *fuse.DirEntry, _ view.Child, _ view.Node, out *fuse.EntryOut, errno syscall.Errno) {
			if errno == 0 {
				got[de.Name] = out.Attr
			}
		})
		return got
	}
	stat := func(i int, name string) uint64 {
		t.Helper()
		c, err := r.v.Lookup(folder(t, r, session(i)).f, name)
		if err != nil {
			t.Fatal(err)
		}
		a, err := r.v.Attr(c.Node(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return a.Size
	}
	stats := statsReader(t, r.v)
	parsed := stats().Parsed
	for _, name := range costly {
		if _, ok := list(0)[name]; ok {
			t.Errorf("%s: attributes before its size was counted", name)
		}
	}
	if n := stats().Parsed - parsed; n != 0 {
		t.Errorf("listing parsed %d sessions", n)
	}
	want := map[string]uint64{}
	for _, name := range costly {
		want[name] = stat(0, name)
	}
	parsed = stats().Parsed
	got := list(0)
	for _, name := range costly {
		if a, ok := got[name]; !ok || a.Size != want[name] || a.Ino == 0 {
			t.Errorf("%s: READDIRPLUS gives %+v (%v), stat size %d", name, a, ok, want[name])
		}
	}
	if n := stats().Parsed - parsed; n != 0 {
		t.Errorf("listing with known sizes parsed %d sessions", n)
	}
	// A walk whose next sessions were counted ahead keeps reading ahead
	// from listings answered with known sizes.
	stat(1, "context.json")
	for i := 2; i < 6; i++ {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, ok := list(i)["context.json"]; ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("s%03d: context.json not counted ahead of the walk", i)
			}
		}
	}
}

// BenchmarkListing is what `ls -l` of a 60,000-entry session's views asks
// of the nodes (no kernel): the listing, then for every name what
// READDIRPLUS asks, its child from the open folder and its attributes
// (costly files have none), for branches/<leaf>, entries/ and tree/ (a new
// version of the session each time, one entry longer).
func BenchmarkListing(b *testing.B) {
	r, proj := testRoot(b, 0, 60000)
	big := proj + "/big"
	leaf := leafOf(b, r, big)
	path := filepath.Join(r.v.Index().Dir(), proj, "big.jsonl")
	n, parent := 0, leaf
	for _, v := range []struct{ name, path string }{
		{"branches-leaf", big + "/branches/" + leaf},
		{"entries", big + "/entries"},
		{"tree", big + "/tree"},
	} {
		b.Run(v.name, func(b *testing.B) {
			d := folder(b, r, v.path)
			readdirplus(b, d, true) // the session parsed
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// A new version each time: an append.
				b.StopTimer()
				n++
				line := fmt.Sprintf(`{"type":"custom","customType":"bench","data":%d,"id":"bench%d","parentId":%q,"timestamp":"2026-01-01T00:00:00.000Z"}`+"\n", n, n, parent)
				parent = fmt.Sprintf("bench%d", n)
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					b.Fatal(err)
				}
				f.WriteString(line)
				f.Close()
				r.v.Index().Update(path)
				b.StartTimer()
				names, _ := readdirplus(b, d, true)
				b.ReportMetric(float64(names), "names")
			}
		})
	}
}
