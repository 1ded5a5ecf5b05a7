package view

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/usage"
)

// costStore makes a store of n small sessions in one project and one
// session of entries entries, and a root over it.
func costStore(t testing.TB, n, entries int) (*View, string) {
	t.Helper()
	return costStoreIn(t, n, entries, 256<<20)
}

// costStoreIn is costStore with a cache of cacheBytes.
func costStoreIn(t testing.TB, n, entries int, cacheBytes int64) (*View, string) {
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
	return New(Options{SessionsDir: dir, CacheBytes: cacheBytes, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}), "--home-u-p--"
}

// TestByIDLookupCost: once by-id is listed, looking up and reading a link
// stats no file, reads no header and parses no session, however many
// sessions the store holds.
func TestByIDLookupCost(t *testing.T) {
	v, _ := costStore(t, 2000, 10)
	d := newByIDDir(v)
	names, err := d.list()
	if err != nil || len(names) != 2001 {
		t.Fatalf("list: %v, %d names", err, len(names))
	}
	before := v.x.Stats()
	opened := v.cache.Stats().Parsed
	for _, c := range names {
		got, err := d.lookup(c.Name)
		if err != nil || got.Ino != c.Ino {
			t.Fatalf("lookup %s: %v", c.Name, err)
		}
		if _, _, err := newByIDLink(v, mustDecode(t, c.Name)).target(); err != nil {
			t.Fatal(err)
		}
	}
	after := v.x.Stats()
	if after.Stats != before.Stats || after.Headers != before.Headers || v.cache.Stats().Parsed != opened {
		t.Errorf("2001 by-id lookups and readlinks cost %d stats, %d header reads, %d parses; want none",
			after.Stats-before.Stats, after.Headers-before.Headers, v.cache.Stats().Parsed-opened)
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
// listing, not once per name (which would make `ls -l` quadratic in
// depth).
func TestBranchLookupCost(t *testing.T) {
	const entries = 5000
	v, proj := costStore(t, 0, entries)
	s := newSessionRef(v, proj, "big")
	var leaf string
	steps := func() int64 { return statsOf(t, v).Cache.ParentSteps }
	s.with(func(ss *session) error {
		leaf = ss.Tree.LeafID()
		return nil
	})
	d := newBranchDir(s, leaf)
	list, err := d.list()
	if err != nil {
		t.Fatal(err)
	}
	before := steps()
	for _, c := range list {
		if _, err := d.lookup(c.Name); err != nil {
			t.Fatalf("lookup %s: %v", c.Name, err)
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
			if _, err := sd.lookup(c.Name); err != nil {
				t.Fatalf("tree lookup %s: %v", c.Name, err)
			}
			if c.Mode == 0o040000 {
				queue = append(queue, newSegmentDir(s, mustDecode(t, c.Name)))
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
	v, proj := costStore(t, 300, 200)
	if err := (newSessionRef(v, proj, "s00007")).with(func(*session) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if held := v.usage.Held.Load(); held != 0 {
		t.Errorf("a parse took the session's usage records (%d bytes): only a report needs them", held)
	}
	opened := v.cache.Stats().Parsed
	reps, _, err := v.reports(time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if got := reps.Projects[proj].Total.Total; got == 0 {
		t.Fatalf("the report counts no tokens: the big session's usage is missing")
	}
	if n, p := v.usage.Scanned.Load(), v.cache.Stats().Parsed-opened; n != 300 || p != 0 {
		t.Errorf("first reports: %d sessions read, %d parsed; want 300 read (301 less the one parsed), 0 parsed", n, p)
	}
	big := filepath.Join(v.opts.SessionsDir, proj, "big.jsonl")
	f, err := os.OpenFile(big, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"usage","id":"u-new","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","usage":{"input":1000000}}` + "\n")
	f.Close()
	if len(v.x.Update(big)) == 0 {
		t.Fatal("the index saw no change")
	}
	before := reps.Projects[proj].Total.Input
	if reps, _, err = v.reports(time.UTC); err != nil {
		t.Fatal(err)
	}
	if n := v.usage.Scanned.Load(); n != 301 {
		t.Errorf("after one append: %d sessions read in all; want 301 (only the one that changed again)", n)
	}
	if got := reps.Projects[proj].Total.Input; got != before+1e6 {
		t.Errorf("after the append: input %v, want %v", got, before+1e6)
	}
	// What the records hold is counted, for the cache's budget (that the
	// count is their sum is usage.FactsCache's test).
	if held := v.usage.Held.Load(); held < 200*int64(unsafe.Sizeof(usage.Record{})) {
		t.Errorf("the records hold %d bytes by the count, less than the big session's 200 records", held)
	}
}

// TestUsageRecordsLetGo: records that would hold more than a quarter of
// the cache's budget are let go once the reports are built, and the
// reports are the same as a large cache makes; after a change every
// session is read again, and a caller's reports under --allow-other read
// the sessions they see.
func TestUsageRecordsLetGo(t *testing.T) {
	small, proj := costStoreIn(t, 50, 6000, 1<<20)
	reps, _, err := small.reports(time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if h := small.usage.Held.Load(); h != 0 {
		t.Errorf("the reports built, the records hold %d bytes of a %d budget", h, small.cache.Budget())
	}
	large := New(Options{SessionsDir: small.opts.SessionsDir, CacheBytes: 256 << 20, Logger: small.log})
	want, _, err := large.reports(time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if held := large.usage.Held.Load(); held <= small.cache.Budget()/4 {
		t.Fatalf("the records hold %d bytes: too few to tell (a quarter of the small budget is %d)", held, small.cache.Budget()/4)
	}
	for _, name := range []string{"daily.csv", "sessions.csv", "models.json", "tools.csv"} {
		got, _ := reps.Projects[proj].File(name, time.Unix(0, 0))
		exp, _ := want.Projects[proj].File(name, time.Unix(0, 0))
		if string(got) != string(exp) {
			t.Errorf("%s with the records let go differs:\n%s\nwant\n%s", name, got, exp)
		}
	}
	scanned := small.usage.Scanned.Load()
	f, err := os.OpenFile(filepath.Join(small.opts.SessionsDir, proj, "s00003.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"usage","id":"u-new","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","usage":{"input":1000000}}` + "\n")
	f.Close()
	small.x.Update(f.Name())
	if reps, _, err = small.reports(time.UTC); err != nil {
		t.Fatal(err)
	}
	if n := small.usage.Scanned.Load() - scanned; n != 51 {
		t.Errorf("after a change, %d sessions read; want all 51 (their records were let go)", n)
	}
	if got, exp := reps.Projects[proj].Total.Input, want.Projects[proj].Total.Input+1e6; got != exp {
		t.Errorf("after the append: input %v, want %v", got, exp)
	}
	mine := &sight{key: 1, hidden: map[string]bool{filepath.Join(small.opts.SessionsDir, proj, "big.jsonl"): true}}
	theirs, _, err := small.reportsFor(mine, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if got := theirs.Projects[proj].Total.Input; got != 1e6 {
		t.Errorf("a caller who cannot read the big session: input %v, want 1e6 (the append alone)", got)
	}
	if h := small.usage.Held.Load(); h > small.cache.Budget()/4 {
		t.Errorf("after a caller's reports, the records hold %d bytes, more than a quarter of the budget", h)
	}
}

// TestEntryStatsKept: the entries' sizes are kept with the session, for
// every view that shows them, and from a version to the next while the
// file only grows: after entries/, branches/<leaf>/ and tree/ are listed
// and stat'ed, every entry had its size counted once; after an append,
// listing them again counts the new entry's alone.
func TestEntryStatsKept(t *testing.T) {
	const entries = 3000
	v, proj := costStore(t, 0, entries)
	s := newSessionRef(v, proj, "big")
	var leaf string
	s.with(func(ss *session) error { leaf = ss.Tree.LeafID(); return nil })
	var stat func(f Folder)
	stat = func(f Folder) {
		kids, err := v.List(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range kids {
			n := c.Node()
			if Costly(n) {
				continue
			}
			if _, err := v.Attr(n, nil); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if sub, ok := n.(*segmentDir); ok {
				stat(sub)
			}
		}
	}
	for _, f := range []Folder{newEntriesDir(s), newBranchDir(s, leaf), newSegmentDir(s, "")} {
		stat(f)
	}
	if counted := v.cache.Stats().EntrySizes; counted != entries {
		t.Errorf("%d entry sizes counted for %d entries, want one each", counted, entries)
	}
	path := filepath.Join(v.Index().Dir(), proj, "big.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"type":"custom","customType":"x","data":1,"id":"added","parentId":%q,"timestamp":"2026-01-01T00:00:00.000Z"}`+"\n", leaf)
	f.Close()
	v.update(path)
	stat(newEntriesDir(s))
	if counted := v.cache.Stats().EntrySizes; counted != entries+1 {
		t.Errorf("after an append, %d entry sizes counted in all, want %d", counted, entries+1)
	}
}
