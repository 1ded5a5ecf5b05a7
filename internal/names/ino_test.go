package names

import (
	"strconv"
	"testing"
)

// TestInoCollisions derives the numbers of many views of many sessions and
// checks that none are shared, including near-misses where parts shift
// between fields (restic's a/b/b regression).
func TestInoCollisions(t *testing.T) {
	seen := map[uint64][]string{}
	add := func(parts ...string) {
		ino := Ino(parts...)
		if ino < 2 || ino >= 1<<63 {
			t.Fatalf("Ino(%q) = %d out of range", parts, ino)
		}
		if old, ok := seen[ino]; ok {
			t.Fatalf("Ino(%q) = Ino(%q) = %d", parts, old, ino)
		}
		seen[ino] = parts
	}
	// A session folder's names, as the mount shows them.
	sessionNames := []string{"session.jsonl", "header.json", "info.json", "context.json", "transcript.md",
		"transcript.html", "name", "leaf", "append", "fork", "errors", "entries", "branches", "tree", "labels", "current"}
	add("by-id")
	add("new")
	for p := 0; p < 20; p++ {
		proj := "p" + strconv.Itoa(p)
		add("p", proj)
		add("p", proj, "cwd")
		add("p", proj, "new")
		for s := 0; s < 20; s++ {
			sess := "s" + strconv.Itoa(s)
			view := func(parts ...string) { add(append([]string{"s", proj, sess}, parts...)...) }
			view()
			for _, name := range sessionNames {
				view(name)
			}
			for e := 0; e < 40; e++ {
				id := strconv.Itoa(e)
				view("entries", id)
				view("entries", id, "0")
				view("branches", id)
				view("branches", id, "context.json")
				view("branches", id, "transcript.md")
				view("branches", "x", "entries", id)
				view("tree", id)
				view("tree", "entries", id)
				view("labels", id)
			}
		}
	}
	// Parts that concatenate alike stay apart.
	add("a", "b/b")
	add("a/b", "b")
	add("ab", "")
	add("", "ab")
	add("", "", "ab")
	add("ab", "", "")
}

// TestInoParts: a hash built in steps, and a number as a part, give the
// number Ino gives for all the parts at once, so that Readdir and Lookup,
// whichever way they build a number, agree.
func TestInoParts(t *testing.T) {
	base := Seed.With("s", "--home-u-p--", "2025_x")
	if got, want := base.With("branches", "e1", "entries", "e2", "1234").Ino(),
		Ino("s", "--home-u-p--", "2025_x", "branches", "e1", "entries", "e2", "1234"); got != want {
		t.Errorf("hashed from a base: %d, at once: %d", got, want)
	}
	if got, want := base.With("tree").With("entries", "e").Ino(), base.With("tree", "entries", "e").Ino(); got != want {
		t.Errorf("hashed in two steps: %d, in one: %d", got, want)
	}
	for _, n := range []int64{0, 7, -1, 1234567890123, -1 << 63} {
		if got, want := Seed.With("x").WithInt(n).Ino(), Ino("x", strconv.FormatInt(n, 10)); got != want {
			t.Errorf("WithInt(%d) = %d, want %d", n, got, want)
		}
	}
	// The numbers are the same in every mount: pinned here.
	const byID = 6797008678046720278
	if got := Ino("by-id"); got != byID {
		t.Errorf("Ino(by-id) = %d, want %d: inode numbers must not change between versions", got, uint64(byID))
	}
}
