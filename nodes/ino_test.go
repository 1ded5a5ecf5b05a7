package nodes

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
		ino := inoOf(parts...)
		if ino < 2 || ino >= 1<<63 {
			t.Fatalf("inoOf(%q) = %d out of range", parts, ino)
		}
		if old, ok := seen[ino]; ok {
			t.Fatalf("inoOf(%q) = inoOf(%q) = %d", parts, old, ino)
		}
		seen[ino] = parts
	}
	add(byIDName)
	add(newName)
	for p := 0; p < 20; p++ {
		proj := "p" + strconv.Itoa(p)
		add("p", proj)
		add("p", proj, cwdName)
		add("p", proj, newName)
		for s := 0; s < 20; s++ {
			sess := "s" + strconv.Itoa(s)
			view := func(parts ...string) { add(append([]string{"s", proj, sess}, parts...)...) }
			view()
			for _, e := range sessionFiles {
				view(e.name)
			}
			for e := 0; e < 40; e++ {
				id := strconv.Itoa(e)
				view(entriesName, id)
				view(entriesName, id, "0")
				view(branchesName, id)
				view(branchesName, id, contextName)
				view(branchesName, id, transcriptName)
				view(branchesName, "x", entriesName, id)
				view(treeName, id)
				view(treeName, entriesName, id)
				view(labelsName, id)
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

// TestInoParts: a session's views, a folder's shared prefix and a number
// as a part are hashed as inoOf of all their parts, so that Readdir and
// Lookup, whichever way they build a number, agree.
func TestInoParts(t *testing.T) {
	s := sessionRef{project: "--home-u-p--", name: "2025_x"}
	if got, want := s.ino(branchesName, "e1", entriesName, "e2", "1234"),
		inoOf("s", s.project, s.name, branchesName, "e1", entriesName, "e2", "1234"); got != want {
		t.Errorf("sessionRef.ino = %d, inoOf = %d", got, want)
	}
	if got, want := s.inoBase().with(treeName).with(entriesName, "e").ino(), s.ino(treeName, entriesName, "e"); got != want {
		t.Errorf("hashed in two steps: %d, in one: %d", got, want)
	}
	for _, n := range []int64{0, 7, -1, 1234567890123, -1 << 63} {
		if got, want := inoSeed.with("x").withInt(n).ino(), inoOf("x", strconv.FormatInt(n, 10)); got != want {
			t.Errorf("withInt(%d) = %d, want %d", n, got, want)
		}
	}
	// The numbers are the same in every mount: pinned here.
	const byID = 6797008678046720278
	if got := inoOf(byIDName); got != byID {
		t.Errorf("inoOf(by-id) = %d, was %d: inode numbers changed between versions", got, uint64(byID))
	}
}
