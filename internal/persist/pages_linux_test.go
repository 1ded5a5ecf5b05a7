package persist

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// mappedRss is how many bytes of the file at path the process holds
// mapped in memory, from /proc/self/smaps.
func mappedRss(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rss int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") {
			// A mapping's first line: range, perms, offset, dev, inode, path.
			in = len(fields) >= 6 && fields[5] == path
			continue
		}
		if in && fields[0] == "Rss:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			rss += kb << 10
		}
	}
	return rss
}

// The pages a walk over the cache reads (every folder's records, every
// file's look-up, a flush that updates them all, a prune's passes over
// every record, a compaction) do not stay mapped in memory: the cache
// file's pages the process holds stay within an eighth of the cache's
// bound and a few pages, while the file is many times that.
func TestMappedPagesReleased(t *testing.T) {
	dir := t.TempDir()
	var l logged
	const folders, files, bound = 40, 100, 64 << 20
	c := open(t, dir, &l, func(o *Options) { o.MaxBytes = bound })
	c.release = 1 << 20 // of a file of a few MiB, an eighth of an 8 MiB bound
	blob := []byte(strings.Repeat("z", 2000))
	path := func(f, i int) string { return fmt.Sprintf("/store/p%02d/%03d.jsonl", f, i) }
	for f := range folders {
		for i := range files {
			c.Put(path(f, i), v1, map[string][]byte{"b": blob})
		}
	}
	c.Flush()
	size := c.Size()
	limit := c.release + 64<<10
	if size < 16*limit {
		t.Fatalf("cache file of %d bytes: too small to tell", size)
	}
	check := func(what string) {
		t.Helper()
		if rss := mappedRss(t, c.Path()); rss > limit {
			t.Errorf("after %s: %d KiB of the %d KiB cache file mapped in memory, want at most %d KiB", what, rss>>10, size>>10, limit>>10)
		}
	}
	check("writing it")
	for f := range folders {
		if got := c.Folder(fmt.Sprintf("/store/p%02d", f)); len(got) != files {
			t.Fatalf("folder %d: %d records", f, len(got))
		}
	}
	check("reading every folder")
	for f := range folders {
		for i := range files {
			if _, ok := c.Get(path(f, i)); !ok {
				t.Fatalf("%s: no record", path(f, i))
			}
		}
	}
	check("looking up every file")
	v2 := v1
	v2.Size++
	for f := range folders {
		for i := range files {
			c.Put(path(f, i), v2, map[string][]byte{"b": blob})
		}
	}
	c.Flush()
	check("updating every record")
	// A smaller bound: the next flush prunes (a pass over every record),
	// and compacts the file.
	c.o.MaxBytes = size / 8
	c.Put(path(0, 0), v1, map[string][]byte{"b": blob})
	c.Flush()
	if c.Stats().Pruned.Load() == 0 {
		t.Fatal("nothing pruned")
	}
	check("pruning and compacting")
	if c.Stats().Released.Load() == 0 {
		t.Error("no release counted")
	}
	if lines := l.get(); len(lines) != 0 {
		t.Fatalf("log: %v", lines)
	}
}
