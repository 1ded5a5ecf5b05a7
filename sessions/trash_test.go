package sessions

import (
	"errors"
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
		if err := RestoreSession(tr, s); err != nil {
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
