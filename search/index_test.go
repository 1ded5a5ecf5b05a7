package search

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
)

// find runs a query on the whole store and returns the hits' entry ids.
func find(t testing.TB, x *Index, q string) []string {
	t.Helper()
	res, err := x.SearchString(context.Background(), q, time.UTC, Scope{}, 0)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.Entry)
	}
	return ids
}

// follow tells the index what the store's index finds changed at path,
// as the mount's watcher does, and waits for the builder.
func follow(t testing.TB, x *Index, idx *sessions.Index, path string) {
	t.Helper()
	x.Changed(idx.Update(path))
	<-x.Idle()
}

func appendLines(t testing.TB, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestIncremental: an append indexes the appended entries alone; a
// rewrite of the same size, a shorter file and a replaced one are indexed
// again whole; a removed session leaves the index and comes back when
// restored; a session told of while unchanged is not indexed again.
func TestIncremental(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	x := openIndex(t, store, Options{})
	idx := build(t, x, store)
	beta := filepath.Join(store, "--home-user-beta--", "2025-05-02T00-00-00-000Z_bbbb2222-0000-4000-8000-000000000002.jsonl")
	s0 := x.Stats()
	if s0.Full != 4 || s0.Appended != 0 {
		t.Fatalf("first build: %+v", s0)
	}

	// Told of an unchanged file: nothing is read again.
	x.Changed([]sessions.Change{{Project: "--home-user-beta--", Name: "b", Old: mustLookup(t, idx, beta), New: mustLookup(t, idx, beta)}})
	<-x.Idle()
	if s := x.Stats(); s.Full != s0.Full || s.Entries != s0.Entries || s.BytesRead != s0.BytesRead {
		t.Fatalf("an unchanged file was indexed again: %+v, before %+v", s, s0)
	}

	// An append: the new entries alone.
	gen := x.Gen()
	fi, _ := os.Stat(beta)
	line := `{"type":"message","id":"bbbb0100","parentId":"bbbb0008","timestamp":"2025-05-02T01:00:00.000Z","message":{"role":"user","content":"appended pangolin text","timestamp":1}}`
	appendLines(t, beta, line)
	follow(t, x, idx, beta)
	s1 := x.Stats()
	if s1.Appended != s0.Appended+1 || s1.Full != s0.Full || s1.Entries != s0.Entries+1 || s1.BytesRead != s0.BytesRead+int64(len(line)+1) {
		t.Fatalf("append: %+v, before %+v (file was %d bytes)", s1, s0, fi.Size())
	}
	if got := find(t, x, "pangolin"); len(got) != 1 || got[0] != "bbbb0100" {
		t.Fatalf("appended entry: %q", got)
	}
	if x.Gen() == gen {
		t.Fatal("the index changed, its generation did not")
	}

	// A rewrite of the same size: the old text goes, the new comes.
	b, _ := os.ReadFile(beta)
	rewritten := strings.Replace(string(b), "pangolin", "aardvark", 1)
	if err := os.WriteFile(beta, []byte(rewritten), 0o644); err != nil {
		t.Fatal(err)
	}
	follow(t, x, idx, beta)
	s2 := x.Stats()
	if s2.Full != s1.Full+1 {
		t.Fatalf("same-size rewrite not indexed again: %+v", s2)
	}
	if got := find(t, x, "pangolin"); len(got) != 0 {
		t.Fatalf("rewritten text still found: %q", got)
	}
	if got := find(t, x, "aardvark"); len(got) != 1 {
		t.Fatalf("new text: %q", got)
	}
	if got := find(t, x, `"manager keeps" name:beta`); len(got) != 1 {
		t.Fatalf("rest of the rewritten file: %q", got)
	}

	// A shorter file (its last entries cut).
	lines := strings.Split(strings.TrimSuffix(rewritten, "\n"), "\n")
	if err := os.WriteFile(beta, []byte(strings.Join(lines[:3], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	follow(t, x, idx, beta)
	if s := x.Stats(); s.Full != s2.Full+1 {
		t.Fatalf("shrunk file not indexed again: %+v", s)
	}
	if got := find(t, x, "aardvark"); len(got) != 0 {
		t.Fatalf("cut text still found: %q", got)
	}
	if got := find(t, x, "name:beta"); len(got) != 0 {
		t.Fatalf("cut name still found: %q", got)
	}

	// Removed, then restored.
	tmp := filepath.Join(t.TempDir(), "b.jsonl")
	if err := os.Rename(beta, tmp); err != nil {
		t.Fatal(err)
	}
	follow(t, x, idx, beta)
	if got := find(t, x, "session manager keeps"); len(got) != 0 {
		t.Fatalf("removed session still found: %q", got)
	}
	if s := x.Stats(); s.Removed != 1 {
		t.Fatalf("removal: %+v", s)
	}
	if err := os.Rename(tmp, beta); err != nil {
		t.Fatal(err)
	}
	follow(t, x, idx, beta)
	if got := find(t, x, "session manager keeps"); len(got) != 1 {
		t.Fatalf("restored session: %q", got)
	}

	// Replaced by another file of the same name (written beside it,
	// renamed over it), longer: indexed whole, not as an append.
	s3 := x.Stats()
	b, _ = os.ReadFile(beta)
	tmp = filepath.Join(filepath.Dir(beta), ".tmp")
	if err := os.WriteFile(tmp, []byte(strings.Replace(string(b), "session manager keeps", "session manager holds", 1)+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, beta); err != nil {
		t.Fatal(err)
	}
	follow(t, x, idx, beta)
	if s := x.Stats(); s.Full != s3.Full+1 || s.Appended != s3.Appended {
		t.Fatalf("replaced file: %+v, before %+v", s, s3)
	}
	if got := find(t, x, "session manager keeps"); len(got) != 0 {
		t.Fatalf("replaced text still found: %q", got)
	}
	if got := find(t, x, "manager holds pangolin"); len(got) != 0 {
		t.Fatalf("%q", got)
	}
	if got := find(t, x, "pangolin"); len(got) != 1 {
		t.Fatalf("replacing file's text: %q", got)
	}
}

func mustLookup(t testing.TB, idx *sessions.Index, path string) *sessions.File {
	t.Helper()
	for _, f := range idx.All() {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("%s not in the store", path)
	return nil
}

// TestFinalLineWithoutNewline: a final line without a newline is indexed
// (pi reads it), and again when it grows.
func TestFinalLineWithoutNewline(t *testing.T) {
	store := t.TempDir()
	s := newSession(t, "eeee5555-0000-4000-8000-000000000005", "/home/user/e", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
	s.user("", "first line lemur")
	path := filepath.Join(store, "--home-user-e--", "e.jsonl")
	s.write(path)
	last := `{"type":"message","id":"eeee0009","parentId":"eeee0001","timestamp":"2025-05-01T00:00:09.000Z","message":{"role":"user","content":"last line meerkat"}}`
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(last)
	f.Close()
	x := openIndex(t, store, Options{})
	idx := build(t, x, store)
	if got := find(t, x, "meerkat"); len(got) != 1 {
		t.Fatalf("final line: %q", got)
	}
	// It grows into another entry (a writer was half way through it).
	f, _ = os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	f.WriteString(strings.Join(s.lines, "\n") + "\n" + strings.Replace(last, "meerkat", "mongoose", 1) + "\n")
	f.Close()
	follow(t, x, idx, path)
	if got := find(t, x, "meerkat"); len(got) != 0 {
		t.Fatalf("replaced final line: %q", got)
	}
	if got := find(t, x, "mongoose"); len(got) != 1 {
		t.Fatalf("completed final line: %q", got)
	}
	if got := find(t, x, "lemur"); len(got) != 1 {
		t.Fatalf("first line: %q", got)
	}
}

// TestRestartUnchanged: a new index on the file of an unchanged store
// reads no session again; one changed while it was closed is brought up
// to date, and one removed meanwhile leaves.
func TestRestartUnchanged(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	dir := t.TempDir()
	x := openIndex(t, store, Options{Dir: dir})
	build(t, x, store)
	before := find(t, x, "manager")
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	x = openIndex(t, store, Options{Dir: dir})
	x.racyWindow = 0 // the files were written a moment ago
	build(t, x, store)
	if s := x.Stats(); s.Full != 0 || s.Appended != 0 || s.Entries != 0 || s.BytesRead != 0 || s.Unchanged != 4 {
		t.Fatalf("remount of an unchanged store: %+v", s)
	}
	if got := find(t, x, "manager"); strings.Join(got, " ") != strings.Join(before, " ") {
		t.Fatalf("after reopening: %q, before %q", got, before)
	}
	x.Close()

	// Changed and removed while closed.
	alpha := filepath.Join(store, "--home-user-alpha--", "2025-04-30T22-00-00-000Z_aaaa1111-0000-4000-8000-000000000001.jsonl")
	appendLines(t, alpha, `{"type":"message","id":"aaaa0100","parentId":"aaaa0016","timestamp":"2025-05-01T01:00:00.000Z","message":{"role":"user","content":"while closed: tapir"}}`)
	if err := os.Remove(filepath.Join(store, "--home-user-gamma--", "2025-05-01T01-00-00-000Z_dddd4444-0000-4000-8000-000000000004.jsonl")); err != nil {
		t.Fatal(err)
	}
	x = openIndex(t, store, Options{Dir: dir})
	build(t, x, store)
	if s := x.Stats(); s.Full != 0 || s.Appended != 1 || s.Removed != 1 || s.Entries != 1 {
		t.Fatalf("remount after a change: %+v", s)
	}
	if got := find(t, x, "tapir"); len(got) != 1 {
		t.Fatalf("appended while closed: %q", got)
	}
	if got := find(t, x, "legacy"); len(got) != 0 {
		t.Fatalf("removed while closed: %q", got)
	}
}

// TestOtherStoreOrFormat: an index file that is not an index, or is one
// of another format, is made again.
func TestOtherStoreOrFormat(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	dir := t.TempDir()
	if err := os.WriteFile(FileName(dir, store), []byte("not a database, not at all, really not"), 0o600); err != nil {
		t.Fatal(err)
	}
	x := openIndex(t, store, Options{Dir: dir})
	build(t, x, store)
	if got := find(t, x, "quokka"); len(got) != 2 {
		t.Fatalf("%q", got)
	}
	x.Close()
	// Made by another format of the index: made again, whole.
	db, err := sql.Open("sqlite", x.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE meta SET value = 'pifs-search 0' WHERE key = 'format'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	x = openIndex(t, store, Options{Dir: dir})
	build(t, x, store)
	if s := x.Stats(); s.Full != 4 {
		t.Fatalf("an index of another format was used: %+v", s)
	}
	if got := find(t, x, "quokka"); len(got) != 2 {
		t.Fatalf("%q", got)
	}
}

// TestChangesDuringBuild: a change told while the builder works through a
// large session is taken between its batches, not after it.
func TestChangesDuringBuild(t *testing.T) {
	store := t.TempDir()
	big := newSession(t, "ffff6666-0000-4000-8000-000000000006", "/home/user/f", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
	for i := 0; i < 400; i++ {
		big.user("", strings.Repeat("bulk text of a large session ", 40))
	}
	bigPath := filepath.Join(store, "--home-user-f--", "big.jsonl")
	big.write(bigPath)
	small := newSession(t, "9999aaaa-0000-4000-8000-000000000007", "/home/user/f", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
	small.user("", "small one")
	smallPath := filepath.Join(store, "--home-user-f--", "small.jsonl")
	small.write(smallPath)

	x := openIndex(t, store, Options{BatchBytes: 16 << 10})
	idx := sessions.NewIndex(store)
	var order []string
	told := false
	x.testHook = func(path string, batch int) {
		order = append(order, filepath.Base(path))
		if path == bigPath && batch == 2 && !told {
			told = true
			appendLines(t, smallPath, `{"type":"message","id":"99990100","parentId":"99990001","timestamp":"2025-05-01T01:00:00.000Z","message":{"role":"user","content":"told mid-build: okapi"}}`)
			x.Changed(idx.Update(smallPath))
		}
	}
	x.Start(idx)
	<-x.Idle()
	if got := find(t, x, "okapi"); len(got) != 1 {
		t.Fatalf("change told during the build: %q", got)
	}
	// The change was taken inside the big session's indexing.
	i := strings.Index(strings.Join(order, " "), "big.jsonl small.jsonl big.jsonl")
	if i < 0 {
		t.Fatalf("batches: %q", order)
	}
}

// TestInUse: a second open of the same index (another mount of the store
// with the same cache folder) is refused while the first holds it; the
// file is its owner's alone.
func TestInUse(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	dir := t.TempDir()
	x := openIndex(t, store, Options{Dir: dir})
	if _, err := Open(Options{Dir: dir, Store: store}); err != ErrInUse {
		t.Fatalf("second open: %v", err)
	}
	build(t, x, store)
	for _, suffix := range []string{"", "-wal"} {
		fi, err := os.Stat(x.Path() + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", fi.Name(), fi.Mode())
		}
	}
	x.Close()
	y, err := Open(Options{Dir: dir, Store: store})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	y.Close()
}
