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
			ref := sessionRef{project: proj, name: sess}
			add("s", proj, sess)
			for _, e := range sessionFiles {
				n := e.name
				add(ref.inoParts(n)...)
			}
			for e := 0; e < 40; e++ {
				id := strconv.Itoa(e)
				add(ref.inoParts(entriesName, id)...)
				add(ref.inoParts(branchesName, id)...)
				add(ref.inoParts(branchesName, id, contextName)...)
				add(ref.inoParts(branchesName, id, transcriptName)...)
				add(ref.inoParts(branchesName, "x", entriesName, id)...)
				add(ref.inoParts(treeName, id)...)
				add(ref.inoParts(treeName, entriesName, id)...)
				add(ref.inoParts(labelsName, id)...)
			}
		}
	}
	// Parts that concatenate alike stay apart.
	add("a", "b/b")
	add("a/b", "b")
	add("ab", "")
	add("", "ab")
}
