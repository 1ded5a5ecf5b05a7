package trash

import (
	"path/filepath"

	"github.com/pifs/pifs/internal/mountinfo"
)

// InfoDirs are the info/ folders of every trash directory List(under)
// reads, whether they exist or not: a caller that keeps a listing takes
// their mtimes to know when to list again.
func (t *Trash) InfoDirs(under string) ([]string, error) {
	_, _, dirs, err := t.dirsUnder(under)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(dirs))
	for i, c := range dirs {
		out[i] = filepath.Join(c.dir, "info")
	}
	return out, nil
}

// dirsUnder is the absolute and the real path of the folder under, and the
// trash directories that may hold files from it (see dirsFor).
func (t *Trash) dirsUnder(under string) (abs, real string, dirs []trashDir, err error) {
	if abs, err = filepath.Abs(under); err != nil {
		return "", "", nil, err
	}
	if real, err = mountinfo.RealPath(abs); err != nil {
		return "", "", nil, err
	}
	dirs, err = t.dirsFor(real)
	return abs, real, dirs, err
}
