package access

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// other is a user who owns nothing here: the others' bits decide.
func other() Who {
	return Who{Uid: uint32(os.Getuid()) + 4242, Gid: uint32(os.Getgid()) + 4242}
}

func mkdir(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

func refused(err error, says string) bool {
	var e *Error
	return errors.As(err, &e) && errors.Is(err, syscall.EACCES) && strings.Contains(err.Error(), says)
}

// TestSearchDown: every folder from the store down to the folder asked
// must be searchable, the store's own included; a folder outside the
// store is refused.
func TestSearchDown(t *testing.T) {
	store := t.TempDir()
	mkdir(t, filepath.Join(store, "open", "deep"), 0o755)
	mkdir(t, filepath.Join(store, "shut", "deep"), 0o755)
	mkdir(t, filepath.Join(store, "shut"), 0o700)
	w := other()
	if err := SearchDown(w, store, filepath.Join(store, "open", "deep")); err != nil {
		t.Errorf("a searchable path: %v", err)
	}
	if err := SearchDown(w, store, filepath.Join(store, "shut", "deep")); !refused(err, "may not search "+filepath.Join(store, "shut")+" ") {
		t.Errorf("below a folder shut to others: %v", err)
	}
	if err := SearchDown(w, store, filepath.Dir(store)); !refused(err, "outside the sessions directory") {
		t.Errorf("outside the store: %v", err)
	}
	if err := SearchDown(Who{}, store, filepath.Join(store, "shut", "deep")); err != nil {
		t.Errorf("root: %v", err)
	}
}

// TestMayCreateIn: a file may be created where the caller may write and
// search the nearest folder that exists, the folders to make named
// outermost first; a folder reached through a link counts with every
// folder above the one it leads to; a pifs that is not root creates only
// for its own user.
func TestMayCreateIn(t *testing.T) {
	store := t.TempDir()
	mkdir(t, filepath.Join(store, "shared"), 0o777)
	mkdir(t, filepath.Join(store, "mine"), 0o755)
	w := other()
	missing, err := MayCreateIn(w, 0, store, filepath.Join(store, "shared", "a", "b"))
	if want := []string{filepath.Join(store, "shared", "a"), filepath.Join(store, "shared", "a", "b")}; err != nil || !reflect.DeepEqual(missing, want) {
		t.Errorf("in a folder open to all: %q, %v; want %q", missing, err, want)
	}
	if _, err := MayCreateIn(w, 0, store, filepath.Join(store, "mine", "a")); !refused(err, "may not create files in "+filepath.Join(store, "mine")) {
		t.Errorf("in a folder others may not write: %v", err)
	}
	if _, err := MayCreateIn(w, w.Uid+1, store, filepath.Join(store, "shared")); !refused(err, "pifs runs as user") {
		t.Errorf("a pifs of another user: %v", err)
	}
	if _, err := MayCreateIn(w, w.Uid, store, filepath.Join(store, "shared")); err != nil {
		t.Errorf("a pifs of the caller's user: %v", err)
	}

	// A link in the store to a folder open to all, below one shut to
	// others.
	away := t.TempDir()
	mkdir(t, filepath.Join(away, "hidden", "target"), 0o777)
	mkdir(t, filepath.Join(away, "hidden"), 0o700)
	if err := os.Symlink(filepath.Join(away, "hidden", "target"), filepath.Join(store, "shared", "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := MayCreateIn(w, 0, store, filepath.Join(store, "shared", "link")); !refused(err, "may not search "+filepath.Join(away, "hidden")) {
		t.Errorf("through a link to a folder below one shut to others: %v", err)
	}
}

// TestMayOpen: a file may be opened for what its bits give the caller,
// below folders the caller may search.
func TestMayOpen(t *testing.T) {
	store := t.TempDir()
	mkdir(t, filepath.Join(store, "p"), 0o755)
	path := filepath.Join(store, "p", "s.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w := other()
	if err := MayOpen(w, store, path, Read, "read"); err != nil {
		t.Errorf("read of a file open to read: %v", err)
	}
	if err := MayOpen(w, store, path, Write, "write to"); !refused(err, "may not write to "+path) {
		t.Errorf("write to a file others may only read: %v", err)
	}
	os.Chmod(filepath.Join(store, "p"), 0o700)
	if err := MayOpen(w, store, path, Read, "read"); !refused(err, "may not search") {
		t.Errorf("read below a folder shut to others: %v", err)
	}
	if err := MayOpen(Who{}, store, path, Write, "write to"); err != nil {
		t.Errorf("root: %v", err)
	}
}
