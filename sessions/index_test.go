package sessions

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func header(id, cwd string) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-01-01T00:00:00.000Z","cwd":%q}`+"\n", id, cwd)
}

func writeIndexed(t testing.TB, path, data string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(fs []*File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Project+"/"+f.Name)
	}
	return out
}

// TestIndexLayouts: project folders and flat files, listed together; a
// flat file in the folder pi gives its cwd; by id, the first in project and
// name order.
func TestIndexLayouts(t *testing.T) {
	dir := t.TempDir()
	writeIndexed(t, filepath.Join(dir, "--a--", "s1.jsonl"), header("one", "/a"))
	writeIndexed(t, filepath.Join(dir, "--a--", "junk.jsonl"), "not json\n")
	writeIndexed(t, filepath.Join(dir, "--a--", "notes.txt"), "x")
	writeIndexed(t, filepath.Join(dir, "flat1.jsonl"), header("two", "/a"))
	writeIndexed(t, filepath.Join(dir, "flat2.jsonl"), header("three", "/b/c"))
	writeIndexed(t, filepath.Join(dir, "--z--", "dup.jsonl"), header("one", "/z"))
	x := NewIndex(dir)
	if got, want := x.Projects(), []string{"--a--", "--b-c--", "--z--"}; !reflect.DeepEqual(got, want) {
		t.Errorf("projects %q, want %q", got, want)
	}
	fs, err := x.Sessions("--a--")
	if err != nil || !reflect.DeepEqual(names(fs), []string{"--a--/flat1", "--a--/s1"}) {
		t.Errorf("sessions of --a--: %q, %v", names(fs), err)
	}
	if f, ok := x.ByID("one"); !ok || f.Name != "s1" {
		t.Errorf("by id one: %+v", f)
	}
	if f, ok := x.ByID("three"); !ok || !f.Flat || f.Project != "--b-c--" {
		t.Errorf("by id three: %+v", f)
	}
	if _, err := x.Lookup("--a--", "junk"); err == nil {
		t.Error("a file that is not a session is found")
	}
	if got := names(x.All()); len(got) != 4 {
		t.Errorf("all: %q", got)
	}
}

// TestIndexUpdate: what Update reports for an append, a new file, a
// removal, a replaced flat file that moves project, and a new folder; and
// that an append reads no header again.
func TestIndexUpdate(t *testing.T) {
	dir := t.TempDir()
	s1 := filepath.Join(dir, "--a--", "s1.jsonl")
	writeIndexed(t, s1, header("one", "/a"))
	x := NewIndex(dir)
	x.Sessions("--a--")
	headers := x.Stats().Headers

	f, _ := os.OpenFile(s1, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n")
	f.Close()
	ch := x.Update(s1)
	if len(ch) != 1 || ch[0].Old == nil || ch[0].New == nil || ch[0].New.Sig.Size <= ch[0].Old.Sig.Size {
		t.Fatalf("append: %+v", ch)
	}
	if h := x.Stats().Headers; h != headers {
		t.Errorf("an append read the header again")
	}
	if tail, err := ch[0].New.Tail(); err != nil || tail.Leaf != "m1" || !tail.LeafKnown || !tail.HasActivity {
		t.Errorf("tail after the append: %+v, %v", tail, err)
	}

	s2 := filepath.Join(dir, "--a--", "s2.jsonl")
	writeIndexed(t, s2, header("two", "/a"))
	if ch := x.Update(s2); len(ch) != 1 || ch[0].Old != nil || ch[0].New == nil {
		t.Errorf("new file: %+v", ch)
	}
	os.Remove(s1)
	if ch := x.Update(s1); len(ch) != 1 || ch[0].New != nil || ch[0].Old == nil {
		t.Errorf("removed file: %+v", ch)
	}
	if _, ok := x.ByID("one"); ok {
		t.Error("a removed session is still found by id")
	}

	flat := filepath.Join(dir, "f.jsonl")
	writeIndexed(t, flat, header("three", "/b"))
	x.Update(flat)
	writeIndexed(t, flat+".tmp", header("three", "/c"))
	os.Rename(flat+".tmp", flat)
	ch = x.Update(flat)
	sort.Slice(ch, func(i, j int) bool { return ch[i].Project < ch[j].Project })
	if len(ch) < 2 || ch[0].Project != "--b--" || ch[0].New != nil {
		t.Errorf("a flat file whose cwd changed: %+v", ch)
	}
	if got := x.Projects(); !reflect.DeepEqual(got, []string{"--a--", "--c--"}) {
		t.Errorf("projects after the move: %q", got)
	}

	writeIndexed(t, filepath.Join(dir, "--new--", "n.jsonl"), header("four", "/new"))
	if ch := x.Update(filepath.Join(dir, "--new--")); len(ch) == 0 || ch[0].Project != "--new--" || ch[0].Name != "" {
		t.Errorf("new folder: %+v", ch)
	}
	if _, err := x.Lookup("--new--", "n"); err != nil {
		t.Errorf("a session of a new folder: %v", err)
	}
}

// TestWatcherSeesChanges: with change events, an append, a new session and
// a store created after the watcher started all reach the callback.
func TestWatcherSeesChanges(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "later", "sessions")
	x := NewIndex(dir)
	got := make(chan []Change, 100)
	w := x.Watch(WatchOptions{}, func(c []Change) { got <- c })
	defer w.Stop()
	if !w.Events() {
		t.Fatal("no change events on this file system: the watcher polls")
	}
	if len(x.Projects()) != 0 || !x.rootMissing() {
		t.Fatal("a missing store is not empty")
	}
	writeIndexed(t, filepath.Join(dir, "--a--", "s.jsonl"), header("one", "/a"))
	waitChange(t, got, func() bool { _, err := x.Lookup("--a--", "s"); return err == nil }, "the store created later")
	x.Sessions("--a--")
	f, _ := os.OpenFile(filepath.Join(dir, "--a--", "s.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n")
	f.Close()
	waitChange(t, got, func() bool { f, _ := x.Lookup("--a--", "s"); return f != nil && f.Sig.Size > 200 }, "an append")
}

func waitChange(t *testing.T, got chan []Change, done func() bool, what string) {
	t.Helper()
	deadline := time.After(10 * time.Second) // a hang check
	for !done() {
		select {
		case <-got:
		case <-deadline:
			t.Fatalf("%s: no change seen", what)
		}
	}
}

// BenchmarkIndexUpdate is the watcher's work for one append to one of
// 10,000 sessions.
func BenchmarkIndexUpdate(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 10000; i++ {
		writeIndexed(b, filepath.Join(dir, fmt.Sprintf("--p%d--", i%20), fmt.Sprintf("s%05d.jsonl", i)), header(fmt.Sprint(i), "/p"))
	}
	x := NewIndex(dir)
	x.All()
	path := filepath.Join(dir, "--p0--", "s00000.jsonl")
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	defer f.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.WriteString("{}\n")
		if len(x.Update(path)) != 1 {
			b.Fatal("no change")
		}
	}
}

// TestIndexUnreadable: a session file that is there but cannot be read
// gives its error on lookup, not "no such file". As root, the lookup runs
// in a child process of another user.
func TestIndexUnreadable(t *testing.T) {
	if dir := os.Getenv("PIFS_INDEX_UNREADABLE"); dir != "" {
		x := NewIndex(dir)
		if _, err := x.Lookup("--a--", "s"); !errors.Is(err, os.ErrPermission) {
			t.Fatalf("lookup of an unreadable session: %v, want EACCES", err)
		}
		return
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	path := filepath.Join(dir, "--a--", "s.jsonl")
	writeIndexed(t, path, header("one", "/a"))
	os.Chmod(path, 0o600)
	if os.Getuid() != 0 {
		os.Chmod(path, 0)
		x := NewIndex(dir)
		if _, err := x.Lookup("--a--", "s"); !errors.Is(err, os.ErrPermission) {
			t.Errorf("lookup of an unreadable session: %v, want EACCES", err)
		}
		return
	}
	const name = "pifs-test-other"
	u, err := user.Lookup(name)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd: %v: %s", err, out)
		}
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	self, _ := os.Executable()
	os.Chmod(filepath.Dir(self), 0o755)
	cmd := exec.Command("setpriv", "--reuid", u.Uid, "--regid", u.Gid, "--clear-groups", "--", self, "-test.run=^TestIndexUnreadable$")
	cmd.Env = append(os.Environ(), "PIFS_INDEX_UNREADABLE="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("as %s: %v\n%s", name, err, out)
	}
}

// TestSessionName: the name is the last session_info entry's, trimmed;
// after an append only the new bytes are scanned; a last line without
// newline counts, and is read again once it grows.
func TestSessionName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "--a--", "s.jsonl")
	info := func(id, name string) string {
		return `{"type":"session_info","id":"` + id + `","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name":"` + name + `"}`
	}
	writeIndexed(t, path, header("one", "/a")+info("i1", "  first  ")+"\n"+`{"type":"message","id":"m","parentId":"i1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"session_info is a word here"}}`+"\n")
	x := NewIndex(dir)
	f, err := x.Lookup("--a--", "s")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := f.SessionName(); n != "first" {
		t.Fatalf("name %q", n)
	}
	add := func(s string) *File {
		fd, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		fd.WriteString(s)
		fd.Close()
		x.Update(path)
		f, _ := x.Lookup("--a--", "s")
		return f
	}
	f = add(info("i2", "sec"))
	if n := f.names.Load(); n == nil || n.from.upTo == 0 {
		t.Error("the grown file is scanned from the start")
	}
	if n, _ := f.SessionName(); n != "sec" {
		t.Errorf("with a last line without newline: %q", n)
	}
	f = add("ond\"}\n")
	if n, _ := f.SessionName(); n != "first" {
		// The cut line grew into one that no longer parses: pi skips it.
		t.Errorf("name after the last line grew into garbage: %q", n)
	}
	big := strings.Repeat("x", 5<<20)
	f = add(`{"type":"custom","id":"c","parentId":null,"timestamp":"2026-01-01T00:00:03.000Z","data":"` + big + `"}` + "\n" + info("i3", "third") + "\n")
	if n, _ := f.SessionName(); n != "third" {
		t.Errorf("after a 5 MiB line: %q", n)
	}
	if n, _ := scanName(path, nameScan{}); n.name != "third" {
		t.Errorf("a scan from the start: %q", n.name)
	}
}

// TestIndexRelooksRacyFiles: a change event (or a poll) for a file whose
// signature is unchanged gives a new version while the file changed within
// racyWindow of the last look (a same-size rewrite in the same clock tick
// leaves the same signature); Look, for pifs's own writes, does not; once
// the window has passed, nothing does.
func TestIndexRelooksRacyFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "--p--", "s.jsonl")
	writeIndexed(t, path, header("a", "/p"))
	x := NewIndex(dir)
	f, err := x.Lookup("--p--", "s")
	if err != nil {
		t.Fatal(err)
	}
	if ch := x.Look(path); len(ch) != 0 {
		t.Errorf("Look of an unchanged file: %d changes, want none", len(ch))
	}
	ch := x.Update(path)
	if len(ch) != 1 || ch[0].Old != f || ch[0].New == f || ch[0].New.Sig != f.Sig {
		t.Fatalf("Update of a file changed just now: %+v; want one change to a new version with the same signature", ch)
	}
	if ch[0].New.Header == nil || ch[0].New.Header.ID != "a" {
		t.Errorf("the new version's header: %+v", ch[0].New.Header)
	}
	if n := len(x.Poll()); n != 1 {
		t.Errorf("Poll of the same racy file: %d changes, want 1", n)
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	x.Update(path) // taken now, after the window: not racy
	if ch := x.Update(path); len(ch) != 0 {
		t.Errorf("Update of a file unchanged for longer than the racy window: %d changes, want none", len(ch))
	}
	if ch := x.Poll(); len(ch) != 0 {
		t.Errorf("Poll of a file unchanged for longer than the racy window: %d changes, want none", len(ch))
	}
}

// TestPollReadsChangedFolders: a poll reads only the project folders whose
// times changed since a read it can trust, stats each known file without
// taking a new version of an unchanged one (and without the index's lock
// for a folder where nothing changed), and finds a file added since.
func TestPollReadsChangedFolders(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"--a--", "--b--", "--c--"} {
		for _, s := range []string{"s1", "s2"} {
			writeIndexed(t, filepath.Join(dir, p, s+".jsonl"), header(p+s, "/"+p))
		}
	}
	x := NewIndex(dir)
	if got := len(x.All()); got != 6 {
		t.Fatalf("%d sessions, want 6", got)
	}
	// The reads made within the racy window of the folders' changes are
	// not trusted: the first poll after it reads each folder again (and
	// takes each file, read while racy, as a new version: see
	// TestIndexRelooksRacyFiles).
	time.Sleep(racyWindow + 100*time.Millisecond)
	x.Poll()
	if n := x.Stats().FoldersRead; n != 6 {
		t.Errorf("%d folder reads after loading and one poll, want 6 (each folder twice)", n)
	}
	before := x.Stats().FoldersRead
	// A folder looked at again under the index's lock is told to onDir:
	// the quiet ones are looked at without the lock.
	var locked []string
	x.OnDir(func(dir string) {
		if dir != x.Dir() { // the store's own folder is read at every poll
			locked = append(locked, filepath.Base(dir))
		}
	})
	for i := 0; i < 3; i++ {
		if ch := x.Poll(); len(ch) != 0 {
			t.Fatalf("a poll of an unchanged store: %d changes", len(ch))
		}
	}
	if n := x.Stats().FoldersRead - before; n != 0 {
		t.Errorf("3 polls of an unchanged store read %d folders, want 0", n)
	}
	if len(locked) != 0 {
		t.Errorf("3 polls of an unchanged store looked at %v under the lock, want none", locked)
	}
	writeIndexed(t, filepath.Join(dir, "--b--", "s3.jsonl"), header("new", "/b"))
	ch := x.Poll()
	if len(ch) != 1 || ch[0].New == nil || ch[0].New.Name != "s3" {
		t.Fatalf("a poll after adding --b--/s3: %+v, want s3 added", ch)
	}
	if n := x.Stats().FoldersRead - before; n != 1 {
		t.Errorf("that poll read %d folders, want 1 (--b--)", n)
	}
	if len(locked) != 1 || locked[0] != "--b--" {
		t.Errorf("that poll looked at %v under the lock, want [--b--]", locked)
	}
}

// TestListed: Listed gives a project's sessions only once its folder was
// read, and never reads the store itself.
func TestListed(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"s2", "s1", "s3"} {
		writeIndexed(t, filepath.Join(dir, "--a--", s+".jsonl"), header("a"+s, "/a"))
	}
	x := NewIndex(dir)
	if _, ok := x.Listed("--a--"); ok {
		t.Error("listed before the store was read")
	}
	if _, err := x.Lookup("--a--", "s1"); err != nil {
		t.Fatal(err)
	}
	read := x.Stats().FoldersRead
	if _, ok := x.Listed("--a--"); ok || x.Stats().FoldersRead != read {
		t.Errorf("listed %v after one lookup, %d folders read by Listed; want not, none", ok, x.Stats().FoldersRead-read)
	}
	if _, err := x.Sessions("--a--"); err != nil {
		t.Fatal(err)
	}
	files, ok := x.Listed("--a--")
	if got := strings.Join(names(files), " "); !ok || got != "--a--/s1 --a--/s2 --a--/s3" {
		t.Errorf("listed %v %s, want s1 s2 s3", ok, got)
	}
	if _, ok := x.Listed("--b--"); ok {
		t.Error("a project that is not there is listed")
	}
}

// TestPollTickSpreads: with more files than a poll's budget pays for per
// interval, each tick stats every folder, the files written in the last
// hotWindow, and a share of the others, so that every file is looked at
// once per sweep; a change to a quiet file is found within the sweep, a
// new file at the next tick, and a file written since is looked at on
// every tick. The sweep follows what a stat costs.
func TestPollTickSpreads(t *testing.T) {
	dir := t.TempDir()
	const n = 80
	old := time.Now().Add(-time.Hour)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("--p%d--", i%4), fmt.Sprintf("s%02d.jsonl", i))
		writeIndexed(t, p, header(fmt.Sprintf("id%02d", i), "/p"))
		os.Chtimes(p, old, old)
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	x := NewIndex(dir)
	if len(x.All()) != n {
		t.Fatal("sessions missing")
	}
	x.Poll() // the folders read within the racy window are read again
	if x.statCost.Load() <= 0 {
		t.Error("a poll of every file did not measure what a stat costs")
	}
	const interval = 10 * time.Millisecond
	// What a stat costs is measured as the polls go; here it is set, so
	// that the sweep is known.
	const cost = 15 * time.Microsecond
	x.statCost.Store(int64(cost))
	sweep := x.Sweep(interval)
	parts := int(sweep / interval)
	if want := time.Duration(float64(n) * float64(cost) / pollBudget).Round(interval); sweep != want || parts < 10 {
		t.Fatalf("sweep of %d files every %v at %v a stat: %v (%d ticks), want %v", n, interval, cost, sweep, parts, want)
	}
	if x.statCost.Store(int64(cost) / 1000); x.Sweep(interval) != interval {
		t.Errorf("sweep of %d files at %v a stat: %v, want one interval", n, cost/1000, x.Sweep(interval))
	}
	tick := func() []Change {
		x.statCost.Store(int64(cost))
		return x.PollTick(interval)
	}
	stats := func() int64 { return x.Stats().Stats }
	before := stats()
	for i := range parts {
		if ch := tick(); len(ch) != 0 {
			t.Fatalf("tick %d of an unchanged store: %d changes", i, len(ch))
		}
	}
	if got := stats() - before; got != n {
		t.Errorf("a sweep stat'ed %d files, want each of the %d once", got, n)
	}
	if x.Stats().FoldersRead != 4 {
		t.Errorf("%d folder reads, want 4 (each folder once)", x.Stats().FoldersRead)
	}

	// An append to a quiet file: found within a sweep, then looked at on
	// every tick.
	quiet := filepath.Join(dir, "--p1--", "s05.jsonl")
	f, _ := os.OpenFile(quiet, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"hi"}}` + "\n")
	f.Close()
	found := false
	for range parts {
		if ch := tick(); len(ch) == 1 && ch[0].Name == "s05" {
			found = true
			break
		} else if len(ch) != 0 {
			t.Fatalf("changes %+v", ch)
		}
	}
	if !found {
		t.Fatalf("an append to a quiet file not found in a sweep (%d ticks)", parts)
	}
	// The next tick: the files of its share, and the one written now
	// (looked at again too while racy: see TestIndexRelooksRacyFiles).
	x.mu.Lock()
	part, of := uint32(x.sweepPart), uint32(x.sweepParts)
	x.mu.Unlock()
	if part == 0 {
		of = uint32(parts) // a new sweep, at the same cost
	}
	want := int64(0)
	for _, f := range x.All() {
		if f.slot%of == part || f.Name == "s05" {
			want++
		}
		if f.Name == "s05" && f.Racy() {
			want++
		}
	}
	before = stats()
	tick()
	if got := stats() - before; got != want {
		t.Errorf("a tick stat'ed %d files, want %d (its share and the file written now)", got, want)
	}
	for i := range 2 {
		f, _ := os.OpenFile(quiet, os.O_WRONLY|os.O_APPEND, 0)
		fmt.Fprintf(f, `{"type":"message","id":"b%d","parentId":"a","timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"hi"}}`+"\n", i)
		f.Close()
		if ch := tick(); len(ch) != 1 || ch[0].Name != "s05" {
			t.Fatalf("an append to a file written a moment ago, next tick: %+v", ch)
		}
	}
	// A new session: the next tick (which also takes a new version of
	// s05, written within the racy window: see TestIndexRelooksRacyFiles).
	writeIndexed(t, filepath.Join(dir, "--p2--", "new.jsonl"), header("new", "/p"))
	ch := tick()
	if !slices.ContainsFunc(ch, func(c Change) bool { return c.Name == "new" && c.Old == nil }) {
		t.Fatalf("a new session, next tick: %+v", ch)
	}
}

// TestWatchPollTakesEvents: a watcher polling every hour still takes the
// kernel's change events for changes made on this machine, unless told
// not to.
func TestWatchPollTakesEvents(t *testing.T) {
	for _, noEvents := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "--p--", "s.jsonl")
		writeIndexed(t, path, header("a", "/p"))
		x := NewIndex(dir)
		got := make(chan []Change, 10)
		w := x.Watch(WatchOptions{Poll: time.Hour, NoEvents: noEvents}, func(ch []Change) { got <- ch })
		x.All()
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"hi"}}` + "\n")
		f.Close()
		var ch []Change
		select {
		case ch = <-got:
		case <-time.After(2 * time.Second):
		}
		w.Stop()
		if noEvents && ch != nil {
			t.Errorf("NoEvents: a change event was taken: %+v", ch)
		}
		if !noEvents && (len(ch) != 1 || ch[0].Name != "s") {
			t.Errorf("polling every hour: the append was not taken from the change events: %+v (%s)", ch, w.Mode())
		}
	}
}
