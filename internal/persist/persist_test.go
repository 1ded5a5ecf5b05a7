package persist

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// logged collects a cache's log lines.
type logged struct {
	mu    sync.Mutex
	lines []string
}

func (l *logged) log(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, msg)
}

func (l *logged) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func open(t *testing.T, dir string, l *logged, edit ...func(*Options)) *Cache {
	t.Helper()
	o := Options{Dir: dir, Store: "/store", Build: "b1", Log: l.log}
	for _, e := range edit {
		e(&o)
	}
	c := Open(o)
	t.Cleanup(func() { c.Close() })
	return c
}

var v1 = Version{Dev: 1, Ino: 2, Size: 100, Mtime: 1e18, Ctime: 1e18 + 5}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	var l logged
	c := open(t, dir, &l)
	if !c.Writable() {
		t.Fatalf("a new cache is not writable: %v", l.get())
	}
	c.Put("/store/p/a.jsonl", v1, map[string][]byte{"header": []byte("h")})
	c.Put("/store/p/a.jsonl", v1, map[string][]byte{"name": []byte("n")})
	// Queued, not written yet: Get sees it.
	rec, ok := c.Get("/store/p/a.jsonl")
	if !ok || rec.Version != v1 || string(rec.Facts["header"]) != "h" || string(rec.Facts["name"]) != "n" {
		t.Fatalf("queued: %+v %v", rec, ok)
	}
	c.Flush()
	// A later fact of the same version adds to the written ones.
	c.Put("/store/p/a.jsonl", v1, map[string][]byte{"sizes": []byte("s")})
	rec, _ = c.Get("/store/p/a.jsonl")
	if len(rec.Facts) != 3 {
		t.Fatalf("written and queued facts not merged: %v", rec.Facts)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, dir, &l)
	rec, ok = c.Get("/store/p/a.jsonl")
	if !ok || rec.Version != v1 || len(rec.Facts) != 3 || string(rec.Facts["sizes"]) != "s" {
		t.Fatalf("after reopening: %+v %v", rec, ok)
	}
	// Another version replaces the facts.
	v2 := v1
	v2.Size = 200
	c.Put("/store/p/a.jsonl", v2, map[string][]byte{"name": []byte("m")})
	c.Flush()
	rec, _ = c.Get("/store/p/a.jsonl")
	if rec.Version != v2 || len(rec.Facts) != 1 {
		t.Fatalf("a new version kept the old one's facts: %+v", rec)
	}
	if _, ok := c.Get("/store/p/other.jsonl"); ok {
		t.Fatal("a path never put is found")
	}
	if lines := l.get(); len(lines) != 0 {
		t.Fatalf("log: %v", lines)
	}
}

// A cache file that cannot be trusted is discarded with one log line, and
// a new one made in its place works.
func TestUntrusted(t *testing.T) {
	write := func(t *testing.T, dir string) string {
		var l logged
		c := open(t, dir, &l)
		for i := range 200 {
			c.Put(fmt.Sprintf("/store/p/%03d.jsonl", i), v1, map[string][]byte{"header": []byte(strings.Repeat("x", 500))})
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		return c.Path()
	}
	cases := []struct {
		name, want string
		spoil      func(t *testing.T, path string)
		edit       func(*Options)
	}{
		{"truncated", "truncated", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"cut to nothing", "truncated", func(t *testing.T, path string) {
			os.Truncate(path, 100)
		}, nil},
		{"not a cache", "not a cache file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("not bbolt\n", 2000)), 0o600)
		}, nil},
		{"another build", `made for build "b1", not "b2"`, nil, func(o *Options) { o.Build = "b2" }},
		{"another store", `made for store "/store"`, nil, func(o *Options) { o.Store = "/other" }},
		{"another format", `made for format "pifs-cache 0"`, func(t *testing.T, path string) {
			setMeta(t, path, "format", "pifs-cache 0")
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := write(t, dir)
			if tc.spoil != nil {
				tc.spoil(t, path)
			}
			var l logged
			edit := []func(*Options){}
			if tc.edit != nil {
				edit = append(edit, tc.edit)
				// Another store names another file: put this one there.
				o := Options{Dir: dir, Store: "/store"}
				tc.edit(&o)
				if other := FileName(dir, o.Store); other != path {
					if err := os.Rename(path, other); err != nil {
						t.Fatal(err)
					}
				}
			}
			c := open(t, dir, &l, edit...)
			lines := l.get()
			if len(lines) != 1 || !strings.Contains(lines[0], "discarded") || !strings.Contains(lines[0], tc.want) {
				t.Fatalf("log: %q, want one line saying discarded: %s", lines, tc.want)
			}
			if _, ok := c.Get("/store/p/000.jsonl"); ok {
				t.Fatal("a record of the discarded file is given")
			}
			if !c.Writable() {
				t.Fatal("the new cache is not writable")
			}
			c.Put("/store/p/x.jsonl", v1, map[string][]byte{"a": []byte("b")})
			c.Flush()
			if rec, ok := c.Get("/store/p/x.jsonl"); !ok || string(rec.Facts["a"]) != "b" {
				t.Fatal("the new cache does not keep what is put")
			}
			if lines := l.get(); len(lines) != 1 {
				t.Fatalf("log: %q", lines)
			}
		})
	}
}

// setMeta changes a record of the format bucket, as another version of
// pifs would have written it.
func setMeta(t *testing.T, path, key, value string) {
	t.Helper()
	c := &Cache{o: Options{Store: "/store", Build: "b1"}, path: path, logged: map[string]bool{}}
	db, err := c.openFile(false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put([]byte(key), []byte(value)) }); err != nil {
		t.Fatal(err)
	}
}

// Prune keeps the file within its bound, dropping the records used least
// recently.
func TestBound(t *testing.T) {
	dir := t.TempDir()
	var l logged
	const bound = 1 << 20
	c := open(t, dir, &l, func(o *Options) { o.MaxBytes = bound })
	blob := []byte(strings.Repeat("y", 2000))
	for round := range 10 {
		for i := range 200 {
			c.Put(fmt.Sprintf("/store/p/%d-%03d.jsonl", round, i), v1, map[string][]byte{"b": blob})
		}
		c.Flush()
	}
	if c.Stats().Pruned.Load() == 0 {
		t.Fatal("nothing pruned from 4 MB of records under a 1 MiB bound")
	}
	if size := c.Size(); size > 2*bound {
		t.Fatalf("cache file %d bytes, bound %d", size, bound)
	}
	// The newest records are kept.
	if _, ok := c.Get("/store/p/9-199.jsonl"); !ok {
		t.Fatal("the newest record was pruned")
	}
	if _, ok := c.Get("/store/p/0-000.jsonl"); ok {
		t.Fatal("the oldest record was kept")
	}
	if lines := l.get(); len(lines) != 0 {
		t.Fatalf("log: %v", lines)
	}
}

// mountTmpfs mounts a small tmpfs (we are root in the test machine).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatal("not root: cannot mount a tmpfs")
		}
		t.Skip("not root: cannot mount a tmpfs")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// A full disk: what cannot be written is dropped with one log line; what
// was written is still read.
func TestFullDisk(t *testing.T) {
	dir := mountTmpfs(t, "256k")
	var l logged
	c := open(t, dir, &l)
	if !c.Writable() {
		t.Fatalf("not writable: %v", l.get())
	}
	c.Put("/store/p/first.jsonl", v1, map[string][]byte{"a": []byte("b")})
	c.Flush()
	blob := []byte(strings.Repeat("z", 4000))
	for round := range 5 {
		for i := range 50 {
			c.Put(fmt.Sprintf("/store/p/%d-%d.jsonl", round, i), v1, map[string][]byte{"b": blob})
		}
		c.Flush()
	}
	lines := l.get()
	if len(lines) != 1 || !strings.Contains(lines[0], "not updated any more") || !strings.Contains(lines[0], "no space left") {
		t.Fatalf("log: %q", lines)
	}
	if c.Writable() {
		t.Fatal("still writing to a full disk")
	}
	if rec, ok := c.Get("/store/p/first.jsonl"); !ok || string(rec.Facts["a"]) != "b" {
		t.Fatal("what was written before the disk filled is lost")
	}
	c.Put("/store/p/more.jsonl", v1, map[string][]byte{"a": []byte("b")})
	c.Flush()
	if len(l.get()) != 1 {
		t.Fatalf("log: %q", l.get())
	}
	// A new cache on the full disk: not used, one line.
	c.Close()
	os.Remove(c.Path())
	fill, _ := os.Create(filepath.Join(dir, "fill"))
	fill.Write(make([]byte, 256<<10))
	fill.Close()
	var l2 logged
	c2 := open(t, dir, &l2)
	if c2.Enabled() {
		if _, ok := c2.Get("/store/p/first.jsonl"); ok {
			t.Fatal("a record from nowhere")
		}
	}
	if lines := l2.get(); len(lines) != 1 {
		t.Fatalf("log: %q", lines)
	}
}

// A cache folder that cannot be written: an existing cache is read and
// not written, none is made where there is none; one log line each.
func TestReadOnlyFolder(t *testing.T) {
	dir := mountTmpfs(t, "4m")
	var l logged
	c := open(t, dir, &l)
	c.Put("/store/p/a.jsonl", v1, map[string][]byte{"a": []byte("b")})
	c.Close()
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v: %s", err, out)
	}
	var l2 logged
	c = open(t, dir, &l2)
	if rec, ok := c.Get("/store/p/a.jsonl"); !ok || string(rec.Facts["a"]) != "b" {
		t.Fatalf("a read-only cache is not read: %v", l2.get())
	}
	c.Put("/store/p/b.jsonl", v1, map[string][]byte{"a": []byte("b")})
	c.Flush()
	if lines := l2.get(); len(lines) != 1 || !strings.Contains(lines[0], "read only") {
		t.Fatalf("log: %q", lines)
	}
	var l3 logged
	c3 := open(t, dir, &l3, func(o *Options) { o.Store = "/elsewhere" })
	if c3.Enabled() {
		t.Fatal("a cache where none can be made")
	}
	if lines := l3.get(); len(lines) != 1 || !strings.Contains(lines[0], "not used") {
		t.Fatalf("log: %q", lines)
	}
}

// A second mount of the same store does not wait for the first's cache.
func TestInUse(t *testing.T) {
	dir := t.TempDir()
	var l, l2 logged
	c := open(t, dir, &l)
	c2 := open(t, dir, &l2)
	if !c.Writable() || c2.Enabled() {
		t.Fatalf("first %v, second %v", c.Writable(), c2.Enabled())
	}
	if lines := l2.get(); len(lines) != 1 || !strings.Contains(lines[0], "in use by another pifs mount") {
		t.Fatalf("log: %q", lines)
	}
}

func TestCodec(t *testing.T) {
	var e Encoder
	e.Uvarint(7)
	e.Varint(-3)
	e.Bool(true)
	e.Float64(12345)
	e.Float64(0.125)
	e.String("héllo")
	e.Bytes(nil)
	d := NewDecoder(e.Data())
	if d.Uvarint() != 7 || d.Varint() != -3 || !d.Bool() || d.Float64() != 12345 || d.Float64() != 0.125 || d.Text() != "héllo" || len(d.Bytes()) != 0 || d.Err() != nil || d.Len() != 0 {
		t.Fatal("codec round trip")
	}
	d = NewDecoder(e.Data()[:5])
	d.Uvarint()
	d.Varint()
	d.Bool()
	d.Float64()
	d.Text()
	if d.Err() == nil {
		t.Fatal("a short buffer decodes")
	}
}

// Folder gives the records of a folder's own files, written and queued, in
// one pass: not those of a folder whose name it begins, nor of one below.
func TestFolder(t *testing.T) {
	dir := t.TempDir()
	var l logged
	c := open(t, dir, &l)
	v2 := v1
	v2.Size = 200
	c.Put("/store/p/a.jsonl", v1, map[string][]byte{"header": []byte("a")})
	c.Put("/store/p/b.jsonl", v1, map[string][]byte{"header": []byte("b")})
	c.Put("/store/p2/c.jsonl", v1, map[string][]byte{"header": []byte("c")})
	c.Put("/store/p/sub/d.jsonl", v1, map[string][]byte{"header": []byte("d")})
	c.Put("/store/top.jsonl", v1, map[string][]byte{"header": []byte("t")})
	c.Flush()
	// Queued: a fact of the same version adds, another version replaces.
	c.Put("/store/p/a.jsonl", v1, map[string][]byte{"name": []byte("n")})
	c.Put("/store/p/b.jsonl", v2, map[string][]byte{"header": []byte("B")})
	c.Put("/store/p/e.jsonl", v1, map[string][]byte{"header": []byte("e")})
	got := c.Folder("/store/p")
	want := map[string]string{"/store/p/a.jsonl": "a n", "/store/p/b.jsonl": "B ", "/store/p/e.jsonl": "e "}
	if len(got) != len(want) {
		t.Fatalf("Folder(/store/p) = %v, want %v", keys(got), want)
	}
	for p, w := range want {
		r := got[p]
		if r == nil || string(r.Facts["header"])+" "+string(r.Facts["name"]) != w {
			t.Errorf("%s: %+v, want %q", p, r, w)
		}
		if g, _ := c.Get(p); g == nil || g.Version != r.Version {
			t.Errorf("%s: Folder gives version %+v, Get %+v", p, r.Version, g)
		}
	}
	if top := c.Folder("/store"); len(top) != 1 || top["/store/top.jsonl"] == nil {
		t.Errorf("Folder(/store) = %v, want only /store/top.jsonl", keys(top))
	}
	if n := c.Stats().Folders.Load(); n != 2 {
		t.Errorf("%d folder scans counted, want 2", n)
	}
	var none *Cache
	if none.Folder("/store/p") != nil {
		t.Error("a nil cache gives records")
	}
}

func keys(m map[string]*Record) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The count of the records' bytes the bound is checked against (kept in
// the file, so that no flush reads every page to find it) stays the sum
// of what each record takes, through writes, replacements and prunes.
func TestHeldCounted(t *testing.T) {
	dir := t.TempDir()
	var l logged
	const bound = 256 << 10
	c := open(t, dir, &l, func(o *Options) { o.MaxBytes = bound })
	recount := func() (counted, sum int64) {
		t.Helper()
		c.db.View(func(tx *bolt.Tx) error {
			counted = held(tx)
			return tx.Bucket(filesBucket).ForEach(func(k, v []byte) error {
				sum += recordBytes(k, v)
				return nil
			})
		})
		return counted, sum
	}
	v2 := v1
	v2.Size = 200
	for round := range 6 {
		for i := range 100 {
			p := fmt.Sprintf("/store/p/%03d.jsonl", i+50*round)
			c.Put(p, v1, map[string][]byte{"b": []byte(strings.Repeat("x", 1000+i*10))})
			c.Put(p, v1, map[string][]byte{"n": []byte("name")})
			if i%3 == 0 {
				c.Put(p, v2, map[string][]byte{"b": []byte("other version")})
			}
		}
		c.Flush()
		if counted, sum := recount(); counted != sum || sum > bound {
			t.Fatalf("round %d: %d bytes counted, %d held, bound %d", round, counted, sum, bound)
		}
	}
	if c.Stats().Pruned.Load() == 0 {
		t.Fatal("nothing pruned")
	}
}
