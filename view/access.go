package view

import (
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pifs/pifs/internal/access"
)

// What a caller may do to the store through the mount, checked against
// the store's files and folders as the kernel would check the caller's own
// access (see caller.go for who asks and the rules).

// searchDown checks that w may search every folder from the store down
// to dir, both included; dir must be the store or inside it.
func (v *View) searchDown(w access.Who, dir string) error {
	store := filepath.Clean(v.opts.SessionsDir)
	rel, err := filepath.Rel(store, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return access.Errorf("%s is outside the sessions directory %s", dir, store)
	}
	p := store
	parts := []string{}
	if rel != "." {
		parts = strings.Split(rel, "/")
	}
	for i := 0; ; i++ {
		o, err := access.LstatOwner(p)
		if err != nil {
			return err
		}
		if !w.Allows(o, access.Search) {
			return access.Errorf("user %d may not search %s (mode %04o, owner %d:%d)", w.Uid, p, o.Perm, o.Uid, o.Gid)
		}
		if i == len(parts) {
			return nil
		}
		p = filepath.Join(p, parts[i])
	}
}

// mayCreateIn checks that caller c may create a file in dir of the store
// (made first when it is not there): it returns the folders that must be
// made, outermost first.
func (v *View) mayCreateIn(c Caller, dir string) ([]string, error) {
	w := c.Who()
	if !w.Root() && w.Uid != v.uid && v.uid != 0 {
		return nil, access.Errorf("pifs runs as user %d and cannot create a file that belongs to user %d; mount the store as that user, or as root", v.uid, w.Uid)
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
	if err := v.searchDown(w, at); err != nil {
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
		if err := access.SearchFromTop(w, real); err != nil {
			return nil, err
		}
		at = real
	}
	o, err := access.LstatOwner(at)
	if err != nil {
		return nil, err
	}
	if !w.Allows(o, access.Write|access.Search) {
		return nil, access.Errorf("user %d may not create files in %s (mode %04o, owner %d:%d): pifs creates for a user only what the user could create in the store", w.Uid, at, o.Perm, o.Uid, o.Gid)
	}
	return missing, nil
}

// mayAppend checks that caller c may write to the session file at path.
func (v *View) mayAppend(c Caller, path string) error {
	return v.mayOpen(c, path, access.Write, "write to")
}

// mayReadFile checks that caller c may read the session file at path.
func (v *View) mayReadFile(c Caller, path string) error {
	return v.mayOpen(c, path, access.Read, "read")
}

// opener is a control that checks its caller's rights when it is opened
// for writing.
type opener interface {
	mayOpen(c Caller) error
}

func (v *View) mayOpen(c Caller, path string, want uint32, what string) error {
	w := c.Who()
	if w.Root() {
		return nil
	}
	if err := v.searchDown(w, filepath.Dir(path)); err != nil {
		return err
	}
	o, err := access.LstatOwner(path)
	if err != nil {
		return err
	}
	if !w.Allows(o, want) {
		return access.Errorf("user %d may not %s %s (mode %04o, owner %d:%d)", w.Uid, what, path, o.Perm, o.Uid, o.Gid)
	}
	return nil
}

// mayChange checks that caller c may append to the session's file.
func (s sessionRef) mayChange(c Caller) error {
	f, err := s.meta()
	if err != nil {
		return err
	}
	return s.v.mayAppend(c, f.Path)
}

// refuseTrashed refuses a change to a trashed session, with the reason in
// its errors file and the log.
func (v *View) refuseTrashed(n Node, what string) error {
	sc := n.scope()
	err := refuse(ErrReadOnly, "%s: this session is in the trash, where nothing changes it; restore it first (mv MOUNT/trash/%s MOUNT/<project>/)", what, sc.session)
	newSessionRef(v, sc.project, sc.session).refused(err)
	return err
}

// Who may read what: the mount shows each thing with the owner and the
// permissions of what it shows in the store, so that with --allow-other
// (and default_permissions) another user reaches exactly what the store
// lets them reach. The root and by-id/, by-cwd/, usage/ are the store
// folder's; a project folder and what it holds but its sessions are its
// folder's; a session folder and every file and folder in it are its
// session file's. Folders get x where they get r; files keep only r, but
// for controls and labels/, which keep the file's w bits (who may write
// the file may write through them); a symlink is 0777 as always.
//
// A value's owner comes from its scope in a constant number of steps,
// never from the folders above it: a lookup deep in tree/ costs what one
// at the top does.

// Owner is the owner of what a scope shows: a session's file, a
// project's folder, the store's folder; where that cannot be read, the
// scope above's, and at the top, the mount's own user with 0755.
func (v *View) Owner(s Scope) Owner {
	if s.session != "" {
		if f, err := v.meta(s.project, s.session); err == nil {
			return Owner{Uid: f.Uid, Gid: f.Gid, Perm: uint32(f.Mode.Perm())}
		}
	}
	if s.project != "" {
		// A project that only flat files name shows the store's.
		if path, ok := v.x.ProjectFolder(s.project); ok {
			if o, ok := access.OwnerOfPath(path); ok {
				return o
			}
		}
	}
	if o, ok := access.OwnerOfPath(v.opts.SessionsDir); ok {
		return o
	}
	return Owner{Uid: v.uid, Gid: v.gid, Perm: 0o755}
}
