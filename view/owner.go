package view

import (
	"os"
	"syscall"
)

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

// Owner is the owner and permission bits of a file or folder of the store.
type Owner struct {
	Uid, Gid uint32
	Perm     uint32
}

func ownerOfPath(path string) (Owner, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return Owner{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Owner{}, false
	}
	return Owner{st.Uid, st.Gid, uint32(fi.Mode().Perm())}, true
}

// Owner is the owner of what a scope shows: a session's file, a
// project's folder, the store's folder; where that cannot be read, the
// scope above's, and at the top, the mount's own user with 0755.
func (v *View) Owner(s Scope) Owner {
	if s.session != "" {
		if f, err := v.meta(s.project, s.session); err == nil {
			return Owner{f.Uid, f.Gid, uint32(f.Mode.Perm())}
		}
	}
	if s.project != "" {
		// A project that only flat files name shows the store's.
		if path, ok := v.x.ProjectFolder(s.project); ok {
			if o, ok := ownerOfPath(path); ok {
				return o
			}
		}
	}
	if o, ok := ownerOfPath(v.opts.SessionsDir); ok {
		return o
	}
	return Owner{v.uid, v.gid, 0o755}
}

// apply sets the owner and permissions of a, whose mode holds the kind and
// the permissions pifs gives it, from o.
func (o Owner) apply(a *Attr) {
	kind, base := a.Mode&syscall.S_IFMT, a.Mode&0o777
	read := o.Perm & 0o444
	perm := read
	switch kind {
	case syscall.S_IFDIR:
		perm = read | read>>2
	case syscall.S_IFLNK:
		perm = 0o777
	}
	if kind != syscall.S_IFLNK && base&0o200 != 0 {
		perm |= o.Perm & 0o222 // a control, or labels/: who may write the file
	}
	a.Uid, a.Gid = o.Uid, o.Gid
	a.Mode = kind | perm
}
