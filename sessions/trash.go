package sessions

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pifs/pifs/internal/trash"
)

// BusyWindow is how recently a session file may have changed for it to be
// taken as being written: pi keeps no lock on the session it runs in.
const BusyWindow = time.Minute

// ErrBusy is returned for a session written within BusyWindow.
var ErrBusy = errors.New("the session was written in the last minute: pi may be running in it")

// NewTrash is the user's trash (trash.New, from the environment) for the
// sessions of the store at dir, which it keeps out of: a store whose trash
// would be inside it is refused at the first trash (trash.ErrInside).
func NewTrash(dir string) (*trash.Trash, error) {
	tr, err := trash.New(os.Getenv, os.Getuid())
	if err != nil {
		return nil, err
	}
	tr.Outside = dir
	return tr, nil
}

// TrashSession moves the session file of f into the trash, as pi's delete
// does with the trash command, unless the file changed within BusyWindow
// of now (ErrBusy) or since f was read (ErrChanged). Nothing is unlinked.
func TrashSession(tr *trash.Trash, f *File, now time.Time) (trash.Item, error) {
	fi, err := os.Stat(f.Path)
	if err != nil {
		return trash.Item{}, err
	}
	if SigOf(fi) != f.Sig {
		return trash.Item{}, ErrChanged
	}
	if d := now.Sub(fi.ModTime()); d < BusyWindow && d > -BusyWindow {
		return trash.Item{}, fmt.Errorf("%w (changed %s ago); try again when it has been quiet for a minute", ErrBusy, d.Round(time.Second))
	}
	return tr.Put(f.Path)
}

// Trashed is a session file of the store in the trash.
type Trashed struct {
	trash.Item
	// Project is the project folder it was listed in: its folder, or for a
	// file from the top of the store, the one of its header's cwd; Name
	// its file name without .jsonl.
	Project, Name string
	// Flat tells that it was at the top of the store.
	Flat bool
	// Header is its header, read from the trash.
	Header *Header
}

// TrashedSessions lists the session files of the store at dir that are in
// the trash, oldest first: items whose original path is NAME.jsonl at the
// top of the store or in a project folder, and whose trashed file is a
// session (its header read from the trash).
func TrashedSessions(tr *trash.Trash, dir string) ([]Trashed, error) {
	items, err := tr.List(dir)
	if err != nil {
		return nil, err
	}
	real := realDir(dir)
	var out []Trashed
	for _, it := range items {
		rel, ok := storeKey(it.Original, dir)
		if !ok && real != "" {
			rel, ok = storeKey(it.Original, real)
		}
		if !ok || !strings.HasSuffix(rel, ".jsonl") {
			continue
		}
		h, err := ReadHeader(it.File())
		if err != nil {
			continue
		}
		t := Trashed{Item: it, Header: h}
		if project, name, folder := strings.Cut(rel, "/"); folder {
			t.Project, t.Name = project, strings.TrimSuffix(name, ".jsonl")
		} else {
			t.Project, t.Name, t.Flat = ProjectFolder(h.Cwd), strings.TrimSuffix(rel, ".jsonl"), true
		}
		if t.Name == "" {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// RestoreSession puts a trashed session back where it was, byte for byte
// (trash.Restore): never over a file there (trash.ErrTaken).
func RestoreSession(tr *trash.Trash, t Trashed) error { return tr.Restore(t.Item) }
