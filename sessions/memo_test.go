package sessions

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMemo: a version keeps what is made for it once; a new version of the
// file starts with none.
func TestMemo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "--a--", "s1.jsonl")
	writeIndexed(t, path, header("one", "/a"))
	x := NewIndex(dir)
	f, err := x.Lookup("--a--", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if m := f.Memo(nil); m != nil {
		t.Errorf("a new version holds %v", m)
	}
	made := 0
	mk := func() any { made++; return &made }
	if f.Memo(mk) != f.Memo(mk) || made != 1 || f.Memo(nil) != &made {
		t.Errorf("made %d times", made)
	}
	fd, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	fd.WriteString(`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n")
	fd.Close()
	ch := x.Update(path)
	if len(ch) != 1 || ch[0].New == f {
		t.Fatalf("append: %+v", ch)
	}
	if m := ch[0].New.Memo(nil); m != nil {
		t.Errorf("the new version holds the old one's %v", m)
	}
}
