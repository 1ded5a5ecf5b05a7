package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

func TestSessionIsValid(t *testing.T) {
	var buf bytes.Buffer
	if err := Session(&buf, 6000, 1600); err != nil {
		t.Fatal(err)
	}
	l, err := sessions.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 6000 {
		t.Fatalf("%d entries", len(l.Entries))
	}
	tr := tree.New(l)
	if len(tr.Tips()) < 3 || len(tr.LabelOrder()) < 5 {
		t.Fatalf("tips %d labels %d", len(tr.Tips()), len(tr.LabelOrder()))
	}
}

func TestStore(t *testing.T) {
	dir := t.TempDir()
	p := StoreSpec{Sessions: 12, Projects: 3, Seed: 7, MinEntries: 5, MaxExtra: 40, BigEvery: 6, BigEntries: 120, AvgBytes: 400, NeedleEvery: 4, Needle: "NEEDLE-x"}
	files, err := Store(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	needles := 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		l, err := sessions.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		want := f.Entries
		if f.Needle {
			want++
			needles++
			if !bytes.Contains(tree.New(l).Context().JSON(), []byte("NEEDLE-x")) {
				t.Errorf("%s: needle not in the context at the leaf", f.Path)
			}
		}
		if len(l.Entries) != want {
			t.Errorf("%s: %d entries, want %d", f.Path, len(l.Entries), want)
		}
		if l.Header.ID != f.ID || ids[f.ID] {
			t.Errorf("%s: header id %q, want unique %q", f.Path, l.Header.ID, f.ID)
		}
		ids[f.ID] = true
		if got := ProjectDir(l.Header.Cwd); got != f.Project || filepath.Dir(f.Path) != got {
			t.Errorf("%s: cwd %q is project %q", f.Path, l.Header.Cwd, got)
		}
	}
	if needles != 3 {
		t.Errorf("%d sessions with the needle, want 3", needles)
	}
	again, err := Store(t.TempDir(), p)
	if err != nil || len(again) != len(files) || again[5] != files[5] {
		t.Errorf("not deterministic: %v", err)
	}
}
