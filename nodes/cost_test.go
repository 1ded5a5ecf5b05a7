package nodes

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/bench/gen"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/usage"
)

// costStore makes a store of n small sessions in one project and one
// session of entries entries, and a root over it.
func costStore(t testing.TB, n, entries int) (*Root, string) {
	t.Helper()
	dir := t.TempDir()
	proj := filepath.Join(dir, "--home-u-p--")
	os.MkdirAll(proj, 0o755)
	for i := 0; i < n; i++ {
		line := fmt.Sprintf(`{"type":"session","version":3,"id":"id-%05d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p"}`+"\n", i)
		os.WriteFile(filepath.Join(proj, fmt.Sprintf("s%05d.jsonl", i)), []byte(line), 0o644)
	}
	f, err := os.Create(filepath.Join(proj, "big.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.Session(f, entries, 200); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return NewRoot(Options{SessionsDir: dir, CacheBytes: 256 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}), "--home-u-p--"
}

// TestByIDLookupCost: once by-id is listed, looking up and reading a link
// stats no file, reads no header and parses no session, however many
// sessions the store holds.
func TestByIDLookupCost(t *testing.T) {
	r, _ := costStore(t, 2000, 10)
	d := newByIDDir(r)
	names, err := d.list()
	if err != nil || len(names) != 2001 {
		t.Fatalf("list: %v, %d names", err, len(names))
	}
	stats, headers := r.st.x.Counts()
	opened := r.st.opened.Load()
	for _, c := range names {
		got, err := d.lookup(c.name)
		if err != nil || got.ino != c.ino {
			t.Fatalf("lookup %s: %v", c.name, err)
		}
		if _, _, err := newByIDLink(r, mustDecode(t, c.name)).target(); err != nil {
			t.Fatal(err)
		}
	}
	s2, h2 := r.st.x.Counts()
	if s2 != stats || h2 != headers || r.st.opened.Load() != opened {
		t.Errorf("2001 by-id lookups and readlinks cost %d stats, %d header reads, %d parses; want none",
			s2-stats, h2-headers, r.st.opened.Load()-opened)
	}
}

func mustDecode(t testing.TB, name string) string {
	id, ok := names.Decode(name)
	if !ok {
		t.Fatalf("%q does not decode", name)
	}
	return id
}

// TestBranchLookupCost: looking up every name of branches/<leaf> and of
// every tree/ folder walks the tree a bounded number of times per
// listing, not once per name (which made `ls -l` quadratic in depth).
func TestBranchLookupCost(t *testing.T) {
	const entries = 5000
	r, proj := costStore(t, 0, entries)
	s := sessionRef{r, proj, "big"}
	var leaf string
	var steps func() int64
	s.with(func(ss *session) error {
		leaf = ss.tree.LeafID()
		steps = ss.tree.Steps
		return nil
	})
	d := newBranchDir(s, leaf)
	list, err := d.list()
	if err != nil {
		t.Fatal(err)
	}
	before := steps()
	for _, c := range list {
		if _, err := d.lookup(c.name); err != nil {
			t.Fatalf("lookup %s: %v", c.name, err)
		}
	}
	if n := steps() - before; n > entries {
		t.Errorf("looking up %d names of branches/<leaf> walked %d nodes; want at most one walk (%d)", len(list), n, entries)
	}

	// tree/: every folder, every name.
	before = steps()
	looked := 0
	queue := []*segmentDir{newSegmentDir(s, "")}
	for len(queue) > 0 {
		sd := queue[0]
		queue = queue[1:]
		kids, err := sd.list()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range kids {
			looked++
			if _, err := sd.lookup(c.name); err != nil {
				t.Fatalf("tree lookup %s: %v", c.name, err)
			}
			if c.mode == 0o040000 {
				queue = append(queue, newSegmentDir(s, mustDecode(t, c.name)))
			}
		}
	}
	if looked < entries {
		t.Errorf("tree/ showed %d names for %d entries", looked, entries)
	}
	if n := steps() - before; n > 2*entries {
		t.Errorf("looking up %d names in tree/ walked %d nodes; want O(entries)", looked, n)
	}
}

// TestUsageReportCost: a parse leaves the usage records to the reports; the
// reports read each session once, without parsing it into the cache, take
// the records of a session parsed in the cache from its entries, and after
// an append read only the session that changed.
func TestUsageReportCost(t *testing.T) {
	r, proj := costStore(t, 300, 200)
	if err := (sessionRef{r, proj, "s00007"}).with(func(*session) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if held := r.st.usage.held.Load(); held != 0 {
		t.Errorf("a parse took the session's usage records (%d bytes): only a report needs them", held)
	}
	opened := r.st.opened.Load()
	reps, _, err := r.st.reports(time.UTC, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := reps.Projects[proj].Total.Total; got == 0 {
		t.Fatalf("the report counts no tokens: the big session's usage is missing")
	}
	if n, p := r.st.usage.scanned.Load(), r.st.opened.Load()-opened; n != 300 || p != 0 {
		t.Errorf("first reports: %d sessions read, %d parsed; want 300 read (301 less the one parsed), 0 parsed", n, p)
	}
	big := filepath.Join(r.opts.SessionsDir, proj, "big.jsonl")
	f, err := os.OpenFile(big, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"usage","id":"u-new","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","usage":{"input":1000000}}` + "\n")
	f.Close()
	if len(r.st.x.Update(big)) == 0 {
		t.Fatal("the index saw no change")
	}
	before := reps.Projects[proj].Total.Input
	if reps, _, err = r.st.reports(time.UTC, nil); err != nil {
		t.Fatal(err)
	}
	if n := r.st.usage.scanned.Load(); n != 301 {
		t.Errorf("after one append: %d sessions read in all; want 301 (only the one that changed again)", n)
	}
	if got := reps.Projects[proj].Total.Input; got != before+1e6 {
		t.Errorf("after the append: input %v, want %v", got, before+1e6)
	}
	// What the records hold is counted, for the cache's budget.
	var sum int64
	r.st.usage.recMu.Lock()
	for _, u := range r.st.usage.byPath {
		sum += u.bytes()
	}
	r.st.usage.recMu.Unlock()
	if held := r.st.usage.held.Load(); held != sum || held < 200*int64(unsafe.Sizeof(usage.Record{})) {
		t.Errorf("the records hold %d bytes by the count, %d by the sum", held, sum)
	}
}

// readdirplus asks of d what READDIRPLUS does, through an open folder:
// the listing, then each name's lookup and attributes (and of its
// sub-folders if deep, as ls -lR). It returns the number of names and of
// folders listed.
func readdirplus(t testing.TB, d *dir, deep bool) (names, folders int) {
	folders = 1
	eachPlus(t, d, func(de *fuse.DirEntry, c child, node fs.InodeEmbedder, out *fuse.EntryOut, errno syscall.Errno) {
		names++
		if _, ok := c.make().(costly); ok && errno == syscall.ENOENT {
			return // a costly file: the name alone
		}
		if errno != 0 {
			t.Fatalf("%s: %v", de.Name, errno)
		}
		if out.Attr.Ino != de.Ino || c.ino != de.Ino {
			t.Fatalf("%s: READDIRPLUS gives inode %d, the listing %d", de.Name, out.Attr.Ino, de.Ino)
		}
		if sub, ok := node.(*segmentDir); ok && deep {
			n, f := readdirplus(t, &sub.dir, deep)
			names, folders = names+n, folders+f
		}
	})
	return names, folders
}

// eachPlus reads a folder as READDIRPLUS does, and gives fn each name
// but "." and ".." with what its lookup answered.
func eachPlus(t testing.TB, d *dir, fn func(de *fuse.DirEntry, c child, node fs.InodeEmbedder, out *fuse.EntryOut, errno syscall.Errno)) {
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
		c, node, errno := h.lookup(de.Name, &out)
		fn(de, c, node, &out, errno)
	}
}

// TestReaddirplusCost: READDIRPLUS of a folder answers every name from
// its listing: by-id/, entries/, branches/<leaf>/ and tree/ look up no
// name again and take the session once per folder (and once per
// sub-folder's mtime in tree/), however many names they hold; and the
// entries' sizes are kept with the session's version, for every view.
func TestReaddirplusCost(t *testing.T) {
	const entries = 3000
	r, proj := costStore(t, 1000, entries)
	s := sessionRef{r, proj, "big"}
	var leaf string
	s.with(func(ss *session) error { leaf = ss.tree.LeafID(); return nil })
	for _, view := range []struct {
		name string
		dir  *dir
		deep bool
	}{
		{"by-id", &newByIDDir(r).dir, false},
		{"entries", &newEntriesDir(s).dir, false},
		{"branches/<leaf>", &newBranchDir(s, leaf).dir, false},
		{"tree", &newSegmentDir(s, "").dir, true},
	} {
		lookups, uses := r.lookups.Load(), r.st.uses.Load()
		names, folders := readdirplus(t, view.dir, view.deep)
		if names < 1000 {
			t.Errorf("%s: %d names", view.name, names)
		}
		if n := r.lookups.Load() - lookups; n != 0 {
			t.Errorf("%s: READDIRPLUS of %d names looked up %d again", view.name, names, n)
		}
		if n := r.st.uses.Load() - uses; n > int64(2*folders) {
			t.Errorf("%s: READDIRPLUS of %d names in %d folders took the session %d times", view.name, names, folders, n)
		}
	}
	var counted int
	s.with(func(ss *session) error {
		stats := entryStatsOf(r.st, ss)
		for i := range stats {
			if stats[i].sizeN.Load() != 0 {
				counted++
			}
		}
		return nil
	})
	if counted != entries {
		t.Errorf("%d entries have their size counted, want %d", counted, entries)
	}
}
