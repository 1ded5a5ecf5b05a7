package e2e

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/internal/persist"
)

// mountFS mounts o in a temporary folder, quietly, until the test ends,
// and gives the fs.FS (for its counters) and the mountpoint.
func mountFS(t *testing.T, o fs.Options) (*mounted, string) {
	t.Helper()
	mnt := t.TempDir()
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := fs.Mount(mnt, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unmount() })
	return &mounted{m, t, mnt}, mnt
}

// genProject makes a store of one project, --home-user-NAME--, of n
// generated sessions of the given number of entries and average line size.
func genProject(t *testing.T, name string, n, entries, avgBytes int) string {
	t.Helper()
	store := t.TempDir()
	if err := gen.Project(store, name, n, entries, avgBytes); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestWalkParsesNothing: find over the mount to the depth of the session
// folders (READDIRPLUS on, so the kernel looks up every name listed)
// parses no session: the listing answers from the index and the files'
// ends, and the views whose size takes a render are listed by name only.
// A stat of one of them parses its session, once.
func TestWalkParsesNothing(t *testing.T) {
	m, mnt := mountFS(t, fs.Options{SessionsDir: demoStore(t)})
	out := run(t, mnt, "find", ".", "-maxdepth", "3")
	if n := len(lines(out)); n < 100 {
		t.Fatalf("find listed %d names", n)
	}
	run(t, mnt, "ls", "-R", "./--home-user-proj--/by-name", "./usage")
	if n := m.Stats().Cache.Parsed; n != 0 {
		t.Errorf("find -maxdepth 3 parsed %d sessions; want none", n)
	}
	run(t, mnt, "stat", "./--home-user-proj--/latest/context.json", "./--home-user-proj--/latest/info.json")
	if n := m.Stats().Cache.Parsed; n != 1 {
		t.Errorf("stat of two views of one session parsed %d sessions; want 1", n)
	}
}

// TestListingKeptByKernel: a folder listed again is not listed by pifs
// again (the kernel keeps the listing, FOPEN_CACHE_DIR) until it changes:
// a session another program writes shows in the next listing, and one
// created through the mount, and the sizes of a session's views after an
// append through it, show to the very next command.
func TestListingKeptByKernel(t *testing.T) {
	store := demoStore(t)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store})
	proj := filepath.Join(mnt, "--home-user-proj--")
	list := func() []string {
		ents, err := os.ReadDir(proj)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	first := list()
	before := m.Stats().View.Listings
	for range 5 {
		list()
	}
	if n := m.Stats().View.Listings - before; n != 0 {
		t.Errorf("5 listings of an unchanged folder listed it %d times in pifs; want 0 (the kernel keeps it)", n)
	}
	// Another program adds a session.
	src, _ := filepath.Glob(filepath.Join(store, "--home-user-proj--", "*.jsonl"))
	data, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"id":"`, `"id":"x`, 1))
	if err := os.WriteFile(filepath.Join(store, "--home-user-proj--", "2030-01-01T00-00-00-000Z_copy.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a session written by another program is listed", func() (bool, string) {
		names := list()
		return len(names) == len(first)+1, fmt.Sprint(names)
	})
	// Through the mount, the next command sees what a write did.
	if err := os.WriteFile(filepath.Join(proj, "new"), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if names := list(); len(names) != len(first)+2 {
		t.Errorf("the listing right after a session was created through new: %d names, want %d", len(names), len(first)+2)
	}
	s := filepath.Join(proj, strings.TrimSuffix(filepath.Base(src[0]), ".jsonl"))
	fi, err := os.Stat(filepath.Join(s, "context.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s, "append"), []byte("one more message\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(filepath.Join(s, "context.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(filepath.Join(s, "context.json"))
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() == fi.Size() || after.Size() != int64(len(data)) {
		t.Errorf("context.json right after an append through the mount: stat says %d bytes (before: %d), it has %d", after.Size(), fi.Size(), len(data))
	}
}

// TestWalkNodesWithinBudget: the nodes the kernel holds count against the
// cache's budget. Six sessions of 3,000 short entries fit a 8 MiB cache
// when parsed, but find over them makes the kernel hold a node per entry
// file in entries/, branches/ and tree/ (about 60,000, some 30 MB): the
// cache lets sessions go, and the kernel forgets their names, until what
// is held fits again.
func TestWalkNodesWithinBudget(t *testing.T) {
	const n = 6
	store := genProject(t, "many", n, 3000, 40)
	const cache = 8 << 20
	m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheBytes: cache})
	out := run(t, mnt, "find", ".")
	if got := len(lines(out)); got < n*3000 {
		t.Fatalf("find listed %d names", got)
	}
	eventually(t, "the nodes held fit the cache", func() (bool, string) {
		held := m.Stats().Cache.Nodes
		return held*512 <= cache, fmt.Sprintf("%d nodes held (%d MB by the count) for a %d MB cache", held, held*512>>20, cache>>20)
	})
}

// TestManyNamesListedAlone: a folder of more names than the budget can
// hold nodes for (an 8 MiB cache holds about 6,000; entries/ of a session
// of 10,000) is listed by name alone, so `ls` of it leaves the kernel
// holding no node per name; `ls -l` then looks the names up and shows
// exact sizes.
func TestManyNamesListedAlone(t *testing.T) {
	const entries = 10000
	store := genProject(t, "big", 1, entries, 40)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheBytes: 8 << 20})
	dirs, err := filepath.Glob(filepath.Join(mnt, "--home-user-big--", "2025-*", "entries"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("entries/ folders: %v (%v)", dirs, err)
	}
	before := m.Stats().Cache.Nodes
	if got := len(lines(run(t, dirs[0], "ls", "-f"))); got != entries+2 {
		t.Fatalf("ls -f entries/ gave %d names, want %d", got, entries+2)
	}
	if held := m.Stats().Cache.Nodes - before; held > 10 {
		t.Errorf("ls of %d entries made the kernel hold %d more nodes, want none", entries, held)
	}
	out := run(t, dirs[0], "ls", "-l")
	if got := len(lines(out)); got != entries+1 { // and "total"
		t.Fatalf("ls -l entries/ gave %d lines, want %d", got, entries+1)
	}
	files, err := os.ReadDir(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files[:20] {
		p := filepath.Join(dirs[0], f.Name())
		if size, data := statRead(t, p); size != int64(len(data)) || size == 0 {
			t.Fatalf("%s: size %d, content %d bytes", p, size, len(data))
		}
	}
}

// TestListingsStopAddingNodes: once the nodes the kernel holds fill their
// share of the budget, listings give names alone, so `find -maxdepth 3`
// over 1,000 sessions at an 8 MiB cache (a share of about 6,000 nodes)
// makes nodes beyond that share only for the names find looks up (the
// folders it stats), not for the 25,000 names it lists; and the kernel is
// told to forget the names held in the session folders listed longest
// ago, so that the nodes held come back to about their share.
func TestListingsStopAddingNodes(t *testing.T) {
	store := genProject(t, "many", 1000, 3, 40)
	const cache = 8 << 20
	m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheBytes: cache})
	if n := len(lines(run(t, mnt, "find", ".", "-maxdepth", "3"))); n < 20000 {
		t.Fatalf("find listed %d names", n)
	}
	st := m.Stats()
	share := int64(cache/4*3/2) / 512
	if listed := st.Cache.Nodes - st.View.Lookups; listed > share+100 {
		t.Errorf("find made %d nodes, %d of them by lookups: %d from listings, want at most the share of %d", st.Cache.Nodes, st.View.Lookups, listed, share)
	}
	eventually(t, "the nodes held come back to their share", func() (bool, string) {
		held := m.Stats().Cache.Nodes
		return held <= share+2048, fmt.Sprintf("%d nodes held, share %d", held, share)
	})
}

// TestWalkListsNamesAlone: a walk over the entry folders of many sessions
// that stats none of their files (find) gets their names alone after the
// first few sessions, so the kernel makes no inode for them. Such a
// listing is not kept by the kernel: ls -l of the folder afterwards lists
// it again and shows exact sizes, and its lookups make the listings that
// follow give attributes again.
func TestWalkListsNamesAlone(t *testing.T) {
	const n, entries = 10, 40
	store := genProject(t, "walk", n, entries, 200)
	// However slow the machine, find is one walk, and the lookups below
	// turn attributes on for the rest of the test.
	m, mnt := mountFS(t, fs.Options{SessionsDir: store, WalkGap: time.Minute, WalkHold: time.Minute})
	proj := filepath.Join(mnt, "--home-user-walk--")
	if got := len(lines(run(t, proj, "find", ".", "-path", "*/entries/*"))); got < n*entries {
		t.Fatalf("find listed %d entry files, want %d", got, n*entries)
	}
	// The first 3 sessions (walkRun) with attributes, then alone.
	if alone := m.Stats().View.ListedNamesOnly; alone < (n-3)*entries {
		t.Errorf("find over %d sessions listed %d names alone, want at least %d", n, alone, (n-3)*entries)
	}
	names, err := filepath.Glob(filepath.Join(proj, "2025-*"))
	if err != nil || len(names) != n {
		t.Fatalf("%d sessions (%v)", len(names), err)
	}
	relisted := func(d string) {
		t.Helper()
		before := m.Stats().View.Listings
		eventually(t, d+" listed again by pifs", func() (bool, string) {
			if _, err := os.ReadDir(d); err != nil {
				t.Fatal(err)
			}
			return m.Stats().View.Listings > before, "kept by the kernel"
		})
	}
	last := filepath.Join(names[n-1], "entries")
	relisted(last)
	files, err := os.ReadDir(last)
	if err != nil || len(files) < entries {
		t.Fatalf("%s: %d files (%v)", last, len(files), err)
	}
	for _, f := range files {
		p := filepath.Join(last, f.Name())
		if size, data := statRead(t, p); size != int64(len(data)) || size == 0 {
			t.Fatalf("%s: size %d, content %d bytes", p, size, len(data))
		}
	}
	// Those stats were lookups of names listed alone: the next listing
	// gives attributes.
	alone := m.Stats().View.ListedNamesOnly
	relisted(filepath.Join(names[n-2], "entries"))
	if got := m.Stats().View.ListedNamesOnly - alone; got != 0 {
		t.Errorf("after ls -l, the next listing gave %d names alone, want none", got)
	}
}

// TestRestartReadsNothing: a new mount of an unchanged store, with the
// persistent cache the last mount left, answers the walks a user starts
// with (ls -l by-id, find -maxdepth 3, ls -l of every session folder, the
// usage reports and their sizes, ls -l of latest/) without opening a session file: no
// header, tail or name read, no usage scan, no parse; and as the first
// mount did. The cache is read a folder at a time.
func TestRestartReadsNothing(t *testing.T) {
	store := demoStore(t)
	time.Sleep(2100 * time.Millisecond) // out of the racy window: kept
	cacheDir := t.TempDir()
	walks := [][]string{
		{"sh", "-c", "ls -l latest/ ./*/latest/"},
		{"sh", "-c", "ls -l by-id"},
		{"find", ".", "-maxdepth", "3"},
		{"sh", "-c", "ls -l ./*/2*/"},
		// The reports' sizes, kept by the last mount: as it showed them.
		{"sh", "-c", "ls -l --time-style=+%s usage/ ./*/usage/"},
		{"sh", "-c", "cat usage/*.csv ./*/usage/*.json"},
	}
	var first []string
	for round := range 2 {
		m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheDir: cacheDir})
		for i, w := range walks {
			out := run(t, mnt, w[0], w[1:]...)
			if round == 0 {
				first = append(first, out)
			} else if out != first[i] {
				t.Errorf("%v after a remount:\n%s\nbefore:\n%s", w, out, first[i])
			}
		}
		st := m.Stats()
		xs := st.Index
		if round == 0 && (xs.Headers == 0 || xs.Reads == 0) {
			t.Fatalf("the first mount read %d headers, %d tails, names or records: the walks read nothing to keep", xs.Headers, xs.Reads)
		}
		if round == 1 {
			if parsed := st.Cache.Parsed; xs.Headers != 0 || xs.Reads != 0 || parsed != 0 {
				t.Errorf("after a remount: %d headers, %d tails, names or records read, %d sessions parsed; want none", xs.Headers, xs.Reads, parsed)
			}
			if xs.FromCache == 0 {
				t.Error("nothing taken from the persistent cache")
			}
			// A folder's records are read at once, and the small facts
			// the views ask for (sizes) come with them: not a look-up in
			// the cache per file.
			cs := st.Persist
			if cs.Gets*4 > xs.FromCache || cs.FolderRecords < xs.FromCache {
				t.Errorf("after a remount: %d look-ups in the cache and %d folder scans giving %d records for %d files taken from it; want the files' records from the scans, and few look-ups",
					cs.Gets, cs.Folders, cs.FolderRecords, xs.FromCache)
			}
		}
		if err := m.Unmount(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBadCache: whatever is wrong with the persistent cache (its file cut
// short or not a cache, its folder read-only or on a full disk), a mount
// answers as one without a cache, and says so in one log line.
func TestBadCache(t *testing.T) {
	store := demoStore(t)
	time.Sleep(2100 * time.Millisecond)
	walk := "ls -l by-id ./*/2*/ ./*/by-name; cat usage/sessions.csv"
	_, plain := mountFS(t, fs.Options{SessionsDir: store})
	want := run(t, plain, "sh", "-c", walk)
	// fill writes a cache for store into dir with a mount of its own.
	fill := func(t *testing.T, dir string) string {
		m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheDir: dir})
		run(t, mnt, "sh", "-c", walk)
		if err := m.Unmount(); err != nil {
			t.Fatal(err)
		}
		abs, err := filepath.Abs(store)
		if err != nil {
			t.Fatal(err)
		}
		return persist.FileName(dir, abs)
	}
	tmpfs := func(t *testing.T, size string) string {
		dir := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
			if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
				t.Fatalf("mount tmpfs: %v: %s", err, out)
			}
			t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
		return dir
	}
	cases := []struct {
		name, line string
		prepare    func(t *testing.T) string
	}{
		{"cut short", "discarded: truncated", func(t *testing.T) string {
			dir := t.TempDir()
			path := fill(t, dir)
			// Its two meta pages stay whole; the pages of records
			// after them are cut off.
			os.Truncate(path, 3*4096)
			return dir
		}},
		{"not a cache", "discarded: not a cache file", func(t *testing.T) string {
			dir := t.TempDir()
			path := fill(t, dir)
			os.WriteFile(path, []byte(strings.Repeat("x", 100000)), 0o600)
			return dir
		}},
		{"read-only folder", "is read only", func(t *testing.T) string {
			dir := tmpfs(t, "4m")
			fill(t, dir)
			if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
				t.Fatalf("remount ro: %v: %s", err, out)
			}
			return dir
		}},
		{"read-only folder, no cache yet", "persistent cache not used", func(t *testing.T) string {
			dir := tmpfs(t, "4m")
			exec.Command("mount", "-o", "remount,ro", dir).Run()
			return dir
		}},
		{"full disk", "no space left on device", func(t *testing.T) string {
			dir := tmpfs(t, "64k")
			f, _ := os.Create(filepath.Join(dir, "fill"))
			f.Write(make([]byte, 60<<10))
			f.Close()
			return dir
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.prepare(t)
			var log output
			o := fs.Options{SessionsDir: store, CacheDir: dir}
			mnt := t.TempDir()
			o.Logger = slog.New(slog.NewTextHandler(&log, nil))
			m, err := fs.Mount(mnt, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if got := run(t, mnt, "sh", "-c", walk); got != want {
					t.Errorf("walk %d:\n%s\nwithout a cache:\n%s", i, got, want)
				}
			}
			if err := m.Unmount(); err != nil {
				t.Fatal(err)
			}
			var lines []string
			for l := range strings.SplitSeq(log.String(), "\n") {
				if strings.Contains(l, "persistent cache") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], c.line) {
				t.Errorf("log: %q; want one line saying %q", lines, c.line)
			}
		})
	}
}

// TestLsCountsTreeViewsOnce: ls -l of every session folder counts the
// sizes of a session's six /tree views (tree*.txt, prompts.txt) once,
// together, and each size shown is the length of the view; a remount with
// the persistent cache counts none.
func TestLsCountsTreeViewsOnce(t *testing.T) {
	const n = 8
	store := genProject(t, "views", n, 120, 300)
	time.Sleep(2100 * time.Millisecond) // out of the racy window: kept
	cacheDir := t.TempDir()
	views := []string{"tree.txt", "tree-no-tools.txt", "tree-user-only.txt", "tree-labeled-only.txt", "tree-all.txt", "prompts.txt"}
	for round := range 2 {
		m, mnt := mountFS(t, fs.Options{SessionsDir: store, CacheDir: cacheDir})
		out := run(t, mnt, "sh", "-c", "ls -l ./--*/2*/")
		for _, v := range views {
			if got := strings.Count(out, " "+v+"\n"); got != n {
				t.Fatalf("ls -l shows %s %d times, want %d:\n%s", v, got, n, out)
			}
		}
		want := int64(n)
		if round == 1 {
			want = 0
		}
		if got := m.Stats().View.TreeCounts; got != want {
			t.Errorf("round %d: ls -l of %d session folders counted the six views %d times, want %d", round, n, got, want)
		}
		sessions, err := filepath.Glob(filepath.Join(mnt, "--*", "2*"))
		if err != nil || len(sessions) != n {
			t.Fatalf("%d session folders (%v)", len(sessions), err)
		}
		for _, s := range sessions {
			for _, v := range views {
				p := filepath.Join(s, v)
				if size, data := statRead(t, p); size != int64(len(data)) || (size == 0 && v != "tree-labeled-only.txt") {
					t.Errorf("%s: size %d, %d bytes", p, size, len(data))
				}
			}
		}
		if err := m.Unmount(); err != nil {
			t.Fatal(err)
		}
	}
}

// statRead is the size stat gives p, and its bytes.
func statRead(t *testing.T, p string) (int64, []byte) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size(), data
}
