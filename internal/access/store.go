package access

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
)

// What a caller may do to the store's files and folders, checked as the
// kernel would check the caller's own access to them.

// SearchDown checks that w may search every folder from the store down
// to dir, both included; dir must be the store or inside it.
func SearchDown(w Who, store, dir string) error {
	store = filepath.Clean(store)
	rel, err := filepath.Rel(store, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return Errorf("%s is outside the sessions directory %s", dir, store)
	}
	p := store
	parts := []string{}
	if rel != "." {
		parts = strings.Split(rel, "/")
	}
	for i := 0; ; i++ {
		o, err := LstatOwner(p)
		if err != nil {
			return err
		}
		if !w.Allows(o, Search) {
			return Errorf("user %d may not search %s (mode %04o, owner %d:%d)", w.Uid, p, o.Perm, o.Uid, o.Gid)
		}
		if i == len(parts) {
			return nil
		}
		p = filepath.Join(p, parts[i])
	}
}

// MayCreateIn checks that w may create a file in dir of the store (made
// first when it is not there), for a pifs that runs as user self: it
// returns the folders that must be made, outermost first.
func MayCreateIn(w Who, self uint32, store, dir string) ([]string, error) {
	if !w.Root() && w.Uid != self && self != 0 {
		return nil, Errorf("pifs runs as user %d and cannot create a file that belongs to user %d; mount the store as that user, or as root", self, w.Uid)
	}
	dir = filepath.Clean(dir)
	var missing []string
	at := dir
	for {
		_, err := os.Lstat(at)
		if err == nil {
			break
		}
		if !errors.Is(err, iofs.ErrNotExist) {
			return nil, err
		}
		missing = append([]string{at}, missing...)
		parent := filepath.Dir(at)
		if parent == at {
			return nil, err
		}
		at = parent
	}
	if err := SearchDown(w, store, at); err != nil {
		return nil, err
	}
	// A folder of the store may be a link (another user may plant one in
	// a store they may write): what counts is the folder it leads to, and
	// every folder above that one.
	real, err := filepath.EvalSymlinks(at)
	if err != nil {
		return nil, err
	}
	if real != at {
		if err := SearchFromTop(w, real); err != nil {
			return nil, err
		}
		at = real
	}
	o, err := LstatOwner(at)
	if err != nil {
		return nil, err
	}
	if !w.Allows(o, Write|Search) {
		return nil, Errorf("user %d may not create files in %s (mode %04o, owner %d:%d): pifs creates for a user only what the user could create in the store", w.Uid, at, o.Perm, o.Uid, o.Gid)
	}
	return missing, nil
}

// MayOpen checks that w may open the file at path of the store for want
// (Read, Write): search every folder from the store down to it, and want
// on the file; what says what is refused ("read", "write to").
func MayOpen(w Who, store, path string, want uint32, what string) error {
	if w.Root() {
		return nil
	}
	if err := SearchDown(w, store, filepath.Dir(path)); err != nil {
		return err
	}
	o, err := LstatOwner(path)
	if err != nil {
		return err
	}
	if !w.Allows(o, want) {
		return Errorf("user %d may not %s %s (mode %04o, owner %d:%d)", w.Uid, what, path, o.Perm, o.Uid, o.Gid)
	}
	return nil
}
