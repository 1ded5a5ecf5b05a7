package sessions_test

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/sessions"
)

// TestCreateAsChecksWhatItOpens: the folder a new session goes into is
// checked as what it is when opened: a link leads to its target, which is
// what the check sees; a folder to be made is made only in a parent the
// check accepts; a refused create leaves nothing.
func TestCreateAsChecksWhatItOpens(t *testing.T) {
	top := t.TempDir()
	store, guarded := filepath.Join(top, "store"), filepath.Join(top, "guarded")
	os.Mkdir(store, 0o755)
	os.Mkdir(guarded, 0o755)
	os.Symlink(guarded, filepath.Join(store, "--evil--"))
	gi, _ := os.Stat(guarded)
	refused := errors.New("refused")
	notGuarded := func(fi iofs.FileInfo) error {
		if os.SameFile(fi, gi) {
			return refused
		}
		return nil
	}
	header := headerFor("x")
	if _, err := sessions.CreateAs(filepath.Join(store, "--evil--"), "a.jsonl", -1, -1, notGuarded, header); !errors.Is(err, refused) {
		t.Errorf("a create through a link to a refused folder: %v", err)
	}
	if _, err := sessions.CreateAs(filepath.Join(store, "--evil--", "sub"), "a.jsonl", -1, -1, notGuarded, header); !errors.Is(err, refused) {
		t.Errorf("a folder made through a link to a refused folder: %v", err)
	}
	if names, _ := os.ReadDir(guarded); len(names) != 0 {
		t.Errorf("made in the refused folder: %v", names)
	}
	path, err := sessions.CreateAs(filepath.Join(store, "--ok--"), "a.jsonl", -1, -1, notGuarded, header)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != string(header)+"\n" {
		t.Errorf("the file holds %q", data)
	}
	if _, err := sessions.CreateAs(filepath.Join(store, "--ok--"), "a.jsonl", -1, -1, notGuarded, header); !errors.Is(err, iofs.ErrExist) {
		t.Errorf("a name taken: %v", err)
	}
}

// headerFor is a header for a session id.
func headerFor(id string) []byte {
	return sessions.HeaderLine(id, "2024-01-01T00:00:00.000Z", "/x", "")
}
