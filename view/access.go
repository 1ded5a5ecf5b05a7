package view

import "github.com/pifs/pifs/internal/access"

// What a caller may do to the store through the mount, checked against
// the store's files and folders as the kernel would check the caller's own
// access (see caller.go for who asks and the rules).

// searchDown checks that w may search every folder from the store down
// to dir, both included; dir must be the store or inside it.
func (v *View) searchDown(w access.Who, dir string) error {
	return access.SearchDown(w, v.opts.SessionsDir, dir)
}

// mayCreateIn checks that caller c may create a file in dir of the store
// (made first when it is not there): it returns the folders that must be
// made, outermost first.
func (v *View) mayCreateIn(c Caller, dir string) ([]string, error) {
	return access.MayCreateIn(c.Who(), v.uid, v.opts.SessionsDir, dir)
}

// mayAppend checks that caller c may write to the session file at path.
func (v *View) mayAppend(c Caller, path string) error {
	return access.MayOpen(c.Who(), v.opts.SessionsDir, path, access.Write, "write to")
}

// mayReadFile checks that caller c may read the session file at path.
func (v *View) mayReadFile(c Caller, path string) error {
	return access.MayOpen(c.Who(), v.opts.SessionsDir, path, access.Read, "read")
}

// opener is a control that checks its caller's rights when it is opened
// for writing.
type opener interface {
	mayOpen(c Caller) error
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
