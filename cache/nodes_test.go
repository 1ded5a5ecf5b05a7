package cache

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
)

// TestShedKeepsTheWalkedFolder: with the nodes past their share, the
// kernel is told to forget the names of the session folders listed
// longest ago, but not of the one a walk is in (a name forgotten there
// would leave what the walk looks up after it out of reach of later
// notices); that one is shed once the walk has left it.
func TestShedKeepsTheWalkedFolder(t *testing.T) {
	files, x, st := genCache(t, gen.StoreSpec{Sessions: 4, Projects: 1, Seed: 5, MinEntries: 5, AvgBytes: 200}, 8<<20)
	var shed []Folder
	st.o.Shed = func(f []Folder) { shed = append(shed, f...) }
	folder := func(i int) Folder {
		return Folder{files[i].Project, strings.TrimSuffix(filepath.Base(files[i].Path), ".jsonl")}
	}
	for i := range files {
		st.FolderListed(folder(i).Project, folder(i).Session)
	}
	withEach(t, x, st, files[:1], func(*Session) {}) // the walk is in the first
	st.nodes.Store(st.nodeShare()/nodeBytes + 1)
	st.shed()
	if len(shed) != len(files)-1 {
		t.Fatalf("shed %v, want every folder but the walked one", shed)
	}
	for _, f := range shed {
		if f == folder(0) {
			t.Fatalf("the folder the walk is in was shed: %v", shed)
		}
	}
	shed = nil
	withEach(t, x, st, files[1:2], func(*Session) {}) // the walk moves on
	st.shed()
	if len(shed) != 1 || shed[0] != folder(0) {
		t.Errorf("after the walk left it, shed %v, want %v", shed, folder(0))
	}
}
