package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// (trash.Restore): never over a file there (trash.ErrTaken), nor while a
// session with its id is in the store of x (ErrDuplicate: pi would have two
// sessions with one id, as an import or a fork with that id would make).
//
// pi running in a session keeps it in memory and appends each new entry to
// its path: when the session was trashed meanwhile (quiet for a minute,
// pi waiting on its user), pi's next lines make a file of entries without
// a header at the old path. Such a file is joined to the session instead
// (see rejoin): the restored file is the trashed one, then those lines.
func RestoreSession(tr *trash.Trash, t Trashed, x *Index) error {
	if t.Header != nil && x != nil {
		if _, ok := x.ByID(t.Header.ID); ok {
			return fmt.Errorf("%w: %w", duplicate(t.Header.ID, "trash that one first, or fork this one from trash/ to keep both"), fs.ErrExist)
		}
	}
	err := tr.Restore(t.Item)
	if errors.Is(err, trash.ErrTaken) {
		if joined, jerr := rejoin(tr, t); joined {
			return jerr
		}
	}
	return err
}

// rejoin restores a trashed session at whose path pi went on appending
// after the trash: a file there that holds only whole entries (no header)
// chained under the session's entries and each other. Those lines are
// appended to the trashed file (unless an earlier rejoin that stopped
// half-way did), the two files are exchanged in one step, and lines pi
// appended to the old file meanwhile are appended after: the restored
// session is the trashed file, then every line pi wrote, in order, and pi,
// which appends to the path, goes on appending to it. The file of pi's
// lines takes the session's place in the trash (nothing is unlinked). It
// reports false, having changed nothing, when the file at the path is not
// such lines.
func rejoin(tr *trash.Trash, t Trashed) (bool, error) {
	stray, err := readRegular(t.Original)
	if err != nil {
		return false, nil
	}
	l, err := Open(t.File())
	if err != nil {
		return false, nil
	}
	known := make(map[string]bool, len(l.Entries))
	for _, e := range l.Entries {
		if e.ID != "" {
			known[e.ID] = true
		}
	}
	n := strayLines(stray, known)
	if n == 0 {
		return false, nil
	}
	lines := stray[:n]
	trashed, err := readRegular(t.File())
	if err != nil {
		return true, err
	}
	old := int64(len(trashed))
	if !bytes.HasSuffix(trashed, lines) {
		if err := AppendBatch(t.File(), append([]byte{'\n'}, lines...)); err != nil {
			return true, err
		}
	}
	if err := tr.Exchange(t.Item); err != nil {
		// Not restored: the trashed file is cut back to what it was.
		if fi, serr := os.Stat(t.File()); serr == nil && fi.Size() > old && !bytes.HasSuffix(trashed, lines) {
			os.Truncate(t.File(), old)
		}
		return true, fmt.Errorf("pi wrote to the session's path after it was trashed, and the two cannot be joined here: %w; move %s away to restore the session without those lines", err, t.Original)
	}
	// Lines pi appended to the old file between the read and the
	// exchange (now in the trash) follow.
	if later, err := readRegular(t.File()); err == nil && len(later) > n {
		if m := strayLines(later[n:], nil); m > 0 {
			if err := AppendBatch(t.Original, append([]byte{'\n'}, later[n:n+m]...)); err != nil {
				return true, fmt.Errorf("restored %s with the lines pi wrote after it was trashed, but not those it wrote during the restore (they are in %s): %w", t.Original, t.File(), err)
			}
		}
	}
	return true, nil
}

// strayLines is the length of the whole lines at the start of data that
// are entries pi appended to a session (objects with a string id, a type
// other than the header's, and a parent among known or the lines before);
// 0 when a whole line is not one, or there is none. With known nil, any
// parent is taken. A last line without newline is not counted.
func strayLines(data []byte, known map[string]bool) int {
	end := bytes.LastIndexByte(data, '\n') + 1
	if end == 0 {
		return 0
	}
	off := 0
	for off < end {
		nl := bytes.IndexByte(data[off:end], '\n')
		line := data[off : off+nl]
		e, ok := parseLine(line, 1, int64(off))
		if !ok || !e.Object || e.ID == "" || e.Type == "" || e.Type == "session" {
			return 0
		}
		if known != nil {
			if !known[e.ParentID] {
				return 0
			}
			known[e.ID] = true
		}
		off += nl + 1
	}
	return end
}

// readRegular reads a regular file (never a FIFO or a device).
func readRegular(path string) ([]byte, error) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
