package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/rename"
)

// Why an import is refused (besides ErrNotSession, for a file pi cannot
// open, and the OS's own errors).
var (
	// ErrImportName: only a file named NAME.jsonl can be imported: pi lists
	// no other.
	ErrImportName = errors.New("not a session file name")
	// ErrDuplicate: a session with the file's id is in the store already.
	ErrDuplicate = errors.New("a session with this id is in the store already")
	// ErrOtherProject: in a flat store, a session is listed in the project
	// of its header's cwd; the file names another.
	ErrOtherProject = errors.New("the session's working directory belongs to another project")
)

// duplicate is ErrDuplicate for session id, and what to do.
// The other session is named by its by-id/ link, which the mount shows to
// whoever may read it, never by its project and name: the reason goes to a
// project's errors file, which others may read, and the caller may not be
// allowed to read that session.
func duplicate(id, todo string) error {
	return fmt.Errorf("%w: another session of the store has the id %s (by-id/%s, to whoever may read it); pi would have two sessions with one id (pi --session %s opens either); %s", ErrDuplicate, id, id, id, todo)
}

// maxImportNames bounds the names tried for one import (NAME, NAME-1…).
const maxImportNames = 10000

// CheckImport tells whether pi's SessionManager.open opens a file holding
// data, as pi's /import opens the file it copied, and returns its header.
// pi refuses a file in which no session header ({"type":"session","id":
// "..."}) comes before the first other line that parses, and fails on a
// version 1 session holding a line that is a JSON string, number or true,
// to which its migration cannot give an id. An empty file, which pi would
// make a new session of, is refused too: create one by writing to new. So
// is a file pi opens but cannot resume: one whose entries above its last
// form a parent cycle (see resumeWalk).
func CheckImport(data []byte) (*Header, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: the file is empty; to create a session, write to a new file", ErrNotSession)
	}
	refused := fmt.Errorf(`%w: no session header ({"type":"session","id":"…"}) comes before the first other line that parses, so pi cannot open it`, ErrNotSession)
	h, err := readHeader(bytes.NewReader(data))
	if err != nil && len(data) <= maxHeaderScan {
		return nil, refused
	}
	if err == nil && h.Version >= 2 {
		if err := checkResume(data); err != nil {
			return nil, err
		}
		return h, nil
	}
	// A header past the first MiB, which pi finds by reading the whole
	// file, or a version 1 session, whose every line pi migrates.
	l, err := Parse(data)
	if err != nil || l.Header == nil {
		return nil, refused
	}
	if l.Header.Version < 2 {
		for _, e := range l.Entries {
			if !e.Object && jsjson.KindOf(e.Raw) != jsjson.Array {
				return nil, fmt.Errorf("%w: a version 1 session whose line at byte %d is %.40s, not an object: pi cannot give it an id when it migrates the session, and fails to open it", ErrNotSession, e.Offset, e.Raw)
			}
		}
	} else {
		var w resumeWalk
		for _, e := range l.Entries {
			w.add(e)
		}
		if err := w.cycle(); err != nil {
			return nil, err
		}
	}
	return l.Header, nil
}

// importBytes stores data as a new session file of project, as pi's /import
// does (importFromJsonl in agent-session-runtime.js): under its own name,
// or NAME-1.jsonl, NAME-2.jsonl… when that is taken, in the project's
// folder (made when missing, as pi makes its session folder) or, in a
// flat store (pi's layout for a directory the user chose), at the top of
// the store, where it is listed in the project of its header's cwd: one
// whose cwd belongs to another project is refused there (ErrOtherProject).
// It returns the new file's path.
//
// A file pi cannot open is refused whole (CheckImport). Nothing is left
// behind by a refused or failed import: the bytes are written to a hidden
// temporary file in the target folder, which is then renamed to the first
// free name without replacing anything, or removed.
func importBytes(store string, flat bool, project, name string, data []byte) (string, error) {
	stem, h, err := checkImport(project, name, data)
	if err != nil {
		return "", err
	}
	return importAs(store, flat, project, name, stem, data, h)
}

// checkImport checks an import's names and bytes, and returns the file's
// name without .jsonl and the session's header.
func checkImport(project, name string, data []byte) (string, *Header, error) {
	stem, err := checkImportName(project, name)
	if err != nil {
		return "", nil, err
	}
	h, err := CheckImport(data)
	return stem, h, err
}

// checkImportName checks an import's project and file name, and returns
// the file's name without .jsonl.
func checkImportName(project, name string) (string, error) {
	stem, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || stem == "" || !validFileName(name) {
		return "", fmt.Errorf("%w: %q; pi lists only files named NAME.jsonl", ErrImportName, name)
	}
	if project == "" || !validFileName(project) || project == "." || project == ".." {
		return "", fmt.Errorf("%w: no project %q", fs.ErrNotExist, project)
	}
	return stem, nil
}

// importAs is importBytes of data checked already, whose header is h.
func importAs(store string, flat bool, project, name, stem string, data []byte, h *Header) (string, error) {
	dir, err := importDir(store, flat, project, h)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".pifs-import-*")
	if err != nil {
		return "", err
	}
	moved := false
	defer func() {
		if !moved {
			os.Remove(tmp.Name())
		}
	}()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	dest, err := placeImport(tmp.Name(), dir, name, stem)
	moved = err == nil
	return dest, err
}

// importDir is the folder an import of a session whose header is h goes
// to, made when missing: the project's, or in a flat store the store's.
func importDir(store string, flat bool, project string, h *Header) (string, error) {
	dir := filepath.Join(store, project)
	if flat {
		if p := ProjectFolder(h.Cwd); p != project {
			return "", fmt.Errorf("%w: this store keeps sessions flat, each listed in the project of its working directory, and this one's, %q, is %s; copy it there", ErrOtherProject, h.Cwd, p)
		}
		dir = store
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// placeImport renames the file tmp to the first free name of NAME.jsonl,
// NAME-1.jsonl… in dir, replacing nothing, and returns its path.
func placeImport(tmp, dir, name, stem string) (string, error) {
	for i := 0; i < maxImportNames; i++ {
		n := name
		if i > 0 {
			n = stem + "-" + strconv.Itoa(i) + ".jsonl"
		}
		dest := filepath.Join(dir, n)
		err := rename.NoReplace(tmp, dest)
		if err == nil {
			return dest, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no free name for %s in %s after %d tries", name, dir, maxImportNames)
}

// importBytes is importBytes into the store x indexes, refusing a session whose id
// is in the store already (ErrDuplicate). pi's /import takes such a file
// (its /export of a branch keeps the session's id), but two files with one
// id make `pi --session ID` open either, and by-id/ name one of them;
// forking the session (pi's /fork) keeps a copy under a new id. The
// first import reads the headers of the whole store, as by-id/ does.
func (x *Index) importBytes(flat bool, project, name string, data []byte) (string, error) {
	stem, h, err := checkImport(project, name, data)
	if err != nil {
		return "", err
	}
	if _, ok := x.ByID(h.ID); ok {
		return "", duplicate(h.ID, "to keep a copy, fork it, which gives the copy an id of its own")
	}
	return importAs(x.dir, flat, project, name, stem, data, h)
}
