package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/trash"
)

// TestTrashSessions: a session written in the last minute is refused,
// one changed since it was read too; a quiet one goes to the trash, is
// listed among the store's trashed sessions with the project it was in
// (a flat one in its cwd's), and is restored byte for byte. Files of the
// store that are not sessions, and trashed files from elsewhere, are not
// listed.
func TestTrashSessions(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sessions")
	tr := &trash.Trash{Home: filepath.Join(t.TempDir(), "Trash"), UID: os.Getuid(), Outside: store}
	write := func(p, data string, age time.Duration) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
	}
	const folderSession = `{"type":"session","version":3,"id":"a","cwd":"/p"}` + "\n"
	const flatSession = `{"type":"session","version":3,"id":"b","cwd":"/q"}` + "\n"
	write(filepath.Join(store, "--p--", "a.jsonl"), folderSession, time.Hour)
	write(filepath.Join(store, "b.jsonl"), flatSession, time.Hour)
	write(filepath.Join(store, "busy.jsonl"), `{"type":"session","version":3,"id":"c","cwd":"/q"}`+"\n", 10*time.Second)
	write(filepath.Join(store, "--p--", "notes.jsonl"), "not a session\n", time.Hour)
	elsewhere := filepath.Join(t.TempDir(), "e.jsonl")
	write(elsewhere, folderSession, time.Hour)
	if _, err := tr.Put(elsewhere); err != nil {
		t.Fatal(err)
	}

	x := NewIndex(store)
	now := time.Now()
	busy, err := x.Lookup("--q--", "busy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TrashSession(tr, busy, now); !errors.Is(err, ErrBusy) {
		t.Errorf("trash of a busy session: %v", err)
	}
	a, _ := x.Lookup("--p--", "a")
	b, _ := x.Lookup("--q--", "b")
	// Changed since it was read.
	f, _ := os.OpenFile(a.Path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n")
	f.Close()
	os.Chtimes(a.Path, now.Add(-time.Hour), now.Add(-time.Hour))
	if _, err := TrashSession(tr, a, now); !errors.Is(err, ErrChanged) {
		t.Errorf("trash of a session changed since read: %v", err)
	}
	x.Update(a.Path)
	a, _ = x.Lookup("--p--", "a")
	for _, f := range []*File{a, b} {
		if _, err := TrashSession(tr, f, now); err != nil {
			t.Fatalf("trash %s: %v", f.Name, err)
		}
	}
	notes := filepath.Join(store, "--p--", "notes.jsonl")
	if _, err := tr.Put(notes); err != nil {
		t.Fatal(err)
	}
	list, err := TrashedSessions(tr, store)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("trashed sessions: %+v", list)
	}
	byName := map[string]Trashed{}
	for _, s := range list {
		byName[s.Name] = s
	}
	if s := byName["a"]; s.Project != "--p--" || s.Flat || s.Header.ID != "a" {
		t.Errorf("a: %+v", s)
	}
	if s := byName["b"]; s.Project != "--q--" || !s.Flat || s.Header.ID != "b" {
		t.Errorf("b: %+v", s)
	}
	for _, s := range list {
		if err := RestoreSession(tr, s, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(store, "b.jsonl")); string(got) != flatSession {
		t.Errorf("b restored as %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(store, "--p--", "a.jsonl")); string(got) != folderSession+"\n" {
		t.Errorf("a restored as %q", got)
	}
	if list, _ := TrashedSessions(tr, store); len(list) != 0 {
		t.Errorf("after restoring: %+v", list)
	}
}

// TestRestoreJoinsStrayLines: a restore onto a file of entries without a
// header, chained under the trashed session's entries (what pi appends to
// the path of a session it holds open), joins them: the trashed file, then
// those lines; the file they were in goes to the trash. A file there that
// is not such lines (a header, a line not an entry, an entry chained
// elsewhere) is not joined: ErrTaken, nothing changed. A session whose id
// is in the store is not restored (ErrDuplicate, fs.ErrExist).
func TestRestoreJoinsStrayLines(t *testing.T) {
	const session = `{"type":"session","version":3,"id":"s","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi"}}
`
	const stray = `{"type":"message","id":"a2","parentId":"a1","message":{"role":"assistant","content":[]}}
{"type":"message","id":"a3","parentId":"a2","message":{"role":"user","content":"more"}}
`
	trashOne := func(t *testing.T) (*trash.Trash, Trashed, string) {
		store := filepath.Join(t.TempDir(), "sessions")
		tr := &trash.Trash{Home: filepath.Join(t.TempDir(), "Trash"), UID: os.Getuid(), Outside: store}
		path := filepath.Join(store, "--p--", "s.jsonl")
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(session), 0o644)
		if _, err := tr.Put(path); err != nil {
			t.Fatal(err)
		}
		list, err := TrashedSessions(tr, store)
		if err != nil || len(list) != 1 {
			t.Fatalf("trashed: %+v %v", list, err)
		}
		return tr, list[0], path
	}

	tr, s, path := trashOne(t)
	os.WriteFile(path, []byte(stray), 0o644)
	if err := RestoreSession(tr, s, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != session+stray {
		t.Errorf("restored as %q", got)
	}
	if got, _ := os.ReadFile(s.File()); string(got) != stray {
		t.Errorf("the trash holds %q, want the stray lines", got)
	}

	for what, there := range map[string]string{
		"a session":              session,
		"not an entry":           "in the way\n",
		"chained elsewhere":      `{"type":"message","id":"b2","parentId":"zz","message":{"role":"user","content":"x"}}` + "\n",
		"an entry, then garbage": stray + "garbage\n",
	} {
		tr, s, path := trashOne(t)
		os.WriteFile(path, []byte(there), 0o644)
		if err := RestoreSession(tr, s, nil); !errors.Is(err, trash.ErrTaken) {
			t.Errorf("%s there: %v, want ErrTaken", what, err)
		}
		if got, _ := os.ReadFile(path); string(got) != there {
			t.Errorf("%s there: it became %q", what, got)
		}
		if got, _ := os.ReadFile(s.File()); string(got) != session {
			t.Errorf("%s there: the trashed file became %q", what, got)
		}
	}

	// The id taken meanwhile.
	tr, s, path = trashOne(t)
	os.WriteFile(filepath.Join(filepath.Dir(path), "copy.jsonl"), []byte(session), 0o644)
	err := RestoreSession(tr, s, NewIndex(filepath.Dir(filepath.Dir(path))))
	if !errors.Is(err, ErrDuplicate) || !errors.Is(err, fs.ErrExist) {
		t.Errorf("restore with its id in the store: %v", err)
	}
	if _, err := os.Lstat(path); err == nil {
		t.Error("restored with its id in the store")
	}
}
