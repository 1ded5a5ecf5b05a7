package trash

import (
	"path/filepath"
)

// InfoDirs are the info/ folders of every trash directory List(under)
// reads, whether they exist or not: a caller that keeps a listing takes
// their mtimes to know when to list again.
func (t *Trash) InfoDirs(under string) ([]string, error) {
	abs, err := filepath.Abs(under)
	if err != nil {
		return nil, err
	}
	real, err := realPath(abs)
	if err != nil {
		return nil, err
	}
	dirs, err := t.dirsFor(real)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(dirs))
	for i, c := range dirs {
		out[i] = filepath.Join(c.dir, "info")
	}
	return out, nil
}
