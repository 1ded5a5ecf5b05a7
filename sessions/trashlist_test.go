package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/trash"
)

// TestTrashList: the listing shows the store's trashed sessions by name,
// leaving out names the mount cannot show; it reads the trash again once
// told it is stale, gives a trashed session's
// file as the same value while it is unchanged and a new one after a
// change, and says fs.ErrNotExist of a name it does not hold.
func TestTrashList(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sessions")
	tr := &trash.Trash{Home: filepath.Join(t.TempDir(), "Trash"), UID: os.Getuid(), Outside: store}
	hour := time.Now().Add(-time.Hour)
	put := func(project, name, id string) {
		t.Helper()
		p := filepath.Join(store, project, name+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`{"type":"session","version":3,"id":"`+id+`","cwd":"/p"}`+"\n"), 0o644)
		os.Chtimes(p, hour, hour)
		if _, err := tr.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	put("--p--", "a", "a")
	put("--p--", "hidden", "h")
	ts := NewTrashList(store, func(name string) bool { return !strings.HasPrefix(name, "hid") })
	ts.tr, ts.made = tr, true // the trash of this test, not the user's

	names, _, err := ts.List()
	if err != nil || strings.Join(names, " ") != "a" {
		t.Fatalf("listed %q, %v; want a", names, err)
	}
	e, f, err := ts.Entry("a")
	if err != nil || e.Project != "--p--" || f.Header.ID != "a" || f.Name != "a" || f.Project != "--p--" {
		t.Fatalf("a: %+v %+v %v", e, f, err)
	}
	if _, again, _ := ts.Entry("a"); again != f {
		t.Error("an unchanged trashed file gives another value")
	}
	for _, name := range []string{"hidden", "b", ""} {
		if _, _, err := ts.Entry(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%q: %v, want fs.ErrNotExist", name, err)
		}
	}

	// Another session trashed: the listing, told, reads the trash again.
	put("--q--", "b", "b")
	ts.Stale()
	if names, _, _ := ts.List(); strings.Join(names, " ") != "a b" {
		t.Errorf("after a second trash: %q", names)
	}
	if _, _, err := ts.Entry("b"); err != nil {
		t.Errorf("b: %v", err)
	}

	// The trashed file changed: a new value.
	os.WriteFile(e.File(), []byte(`{"type":"session","version":3,"id":"a","cwd":"/p"}`+"\n\n"), 0o644)
	if _, again, err := ts.Entry("a"); err != nil || again == f || again.Sig.Size != f.Sig.Size+1 {
		t.Errorf("a changed: %+v, %v", again, err)
	}
	os.Remove(e.File())
	if _, _, err := ts.Entry("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a gone from the trash's files/: %v", err)
	}
}
