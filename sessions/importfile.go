package sessions

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// An import through the mount (cp x.jsonl MOUNT/<project>/) streams: the
// bytes go to a hidden temporary file in the store as they come
// (ImportTemp), never held in memory, and at close the file is checked and
// renamed into place (ImportFile), or removed.

// ImportTemp makes the hidden temporary file an import into project
// streams to: in the project's folder, or in the store's when the store is
// flat or the project has no folder yet (a file there is renamed into a
// new folder), so that the rename into place stays on one file system.
func (x *Index) ImportTemp(flat bool, project string) (*os.File, error) {
	dir := x.dir
	if p, ok := x.ProjectFolder(project); ok && !flat {
		dir = p
	}
	return os.CreateTemp(dir, ".pifs-import-*")
}

// ImportFile stores the file at tmp (made by ImportTemp, written and
// closed) as the session file name of project, as importBytes stores
// bytes: checked as pi's SessionManager.open would open it (CheckImport),
// refused when its id is in the store already (ErrDuplicate), renamed to
// NAME.jsonl, NAME-1.jsonl… without replacing anything. It returns the new
// path. On an error tmp is left for the caller to remove.
//
// Only the file's first MiB is read when it holds a version 2 or 3
// header there; any other file is read whole, as pi reads it.
func (x *Index) ImportFile(flat bool, project, name, tmp string) (string, error) {
	stem, err := checkImportName(project, name)
	if err != nil {
		return "", err
	}
	h, err := checkImportFile(tmp)
	if err != nil {
		return "", err
	}
	if _, ok := x.ByID(h.ID); ok {
		return "", duplicate(h.ID, "to keep a copy, fork it, which gives the copy an id of its own")
	}
	dir, err := importDir(x.dir, flat, project, h)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return "", err
	}
	return placeImport(tmp, dir, name, stem)
}

// checkImportFile is CheckImport of the file at path.
func checkImportFile(path string) (*Header, error) {
	fd, fi, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	head := make([]byte, min(fi.Size(), maxHeaderScan))
	if _, err := io.ReadFull(fd, head); err != nil {
		return nil, err
	}
	if int64(len(head)) == fi.Size() {
		return CheckImport(head)
	}
	if h, err := readHeader(bytes.NewReader(head)); err == nil && h.Version >= 2 {
		if err := checkResumeFile(path); err != nil {
			return nil, err
		}
		return h, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return CheckImport(data)
}

// ChownImport gives the temporary file of an import to the user who
// writes it, when pifs runs as root for others (--allow-other): the
// session is theirs, as if they had copied it into the store.
func ChownImport(f *os.File, uid, gid uint32) error {
	if os.Geteuid() != 0 || uid == 0 {
		return nil
	}
	err := f.Chown(int(uid), int(gid))
	if errors.Is(err, syscall.EPERM) {
		return nil // a file system that keeps no owners
	}
	return err
}

// StatFile reads the header and the attributes of a session file outside
// the store's folders (a trashed session), as the index keeps them of its
// own; Project and Name are left to the caller. A file that is no session
// has a nil Header.
func StatFile(path string) (*File, error) {
	fd, fi, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	f := &File{Path: filepath.Clean(path), Sig: SigOf(fi), Mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		f.Uid, f.Gid = st.Uid, st.Gid
	}
	h, err := readHeader(fd)
	if err != nil && !errors.Is(err, ErrNotSession) {
		return nil, err
	}
	f.Header = h
	return f, nil
}
