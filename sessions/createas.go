package sessions

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
)

// CreateAs writes a new session file for a user (Create for a caller of
// the mount): the folders dir needs are made and given to uid and gid, then
// the file is made in the folder dir is when it is opened, only if may
// accepts that folder (its owner and mode), and given to uid and gid (-1:
// kept as made). So a folder swapped for a link between the caller's check
// and the create (a link another user may plant in a shared store) is
// checked as what it leads to, and nothing is made anywhere else. It fails
// if the name is taken, and returns the file's path.
func CreateAs(dir, name string, uid, gid int, may func(folder iofs.FileInfo) error, lines ...[]byte) (string, error) {
	if err := makeFolders(dir, uid, gid, may); err != nil {
		return "", err
	}
	root, err := openChecked(dir, may)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if uid >= 0 {
		err = f.Chown(uid, gid)
	}
	if err == nil {
		_, err = f.Write(buf.Bytes())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(name)
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// openChecked opens the folder dir leads to, if may accepts it.
func openChecked(dir string, may func(iofs.FileInfo) error) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	fi, err := root.Stat(".")
	if err == nil && may != nil {
		err = may(fi)
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// makeFolders makes the folders of dir that are not there, outermost
// first, each in the folder its parent is when opened, if may accepts it,
// and gives each to uid and gid (-1: kept as made).
func makeFolders(dir string, uid, gid int, may func(iofs.FileInfo) error) error {
	var missing []string
	for at := filepath.Clean(dir); ; {
		if _, err := os.Lstat(at); err == nil {
			break
		} else if !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		missing = append(missing, at)
		parent := filepath.Dir(at)
		if parent == at {
			break
		}
		at = parent
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := makeFolder(missing[i], uid, gid, may); err != nil {
			return err
		}
	}
	return nil
}

// makeFolder makes one folder in its parent, if may accepts the parent.
func makeFolder(d string, uid, gid int, may func(iofs.FileInfo) error) error {
	parent, err := openChecked(filepath.Dir(d), may)
	if err != nil {
		return err
	}
	defer parent.Close()
	name := filepath.Base(d)
	if err := parent.Mkdir(name, 0o755); err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return nil // made meanwhile by another: not ours to give
		}
		return err
	}
	if uid >= 0 {
		return parent.Lchown(name, uid, gid)
	}
	return nil
}
