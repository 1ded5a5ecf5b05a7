package view

import (
	"os"
	"syscall"
)

// Who may move what: a change pifs makes in the store for a caller
// (trash, restore, import) is checked against the caller's rights on the
// folders it changes, as the kernel would check the same rename or create
// done directly, so that the mount lets nobody do through pifs what they
// could not do without it.

// mayChangeIn is nil when c may create and remove names in the folder
// dir: write and search permission on it, and, when it has the sticky bit,
// ownership of it or of file (the name removed, "" for none). Else a
// refusal with EACCES that names the folder.
func mayChangeIn(c Caller, dir, file string) error {
	if c.Uid == 0 {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	perm := uint32(fi.Mode().Perm())
	var bits uint32
	switch {
	case st.Uid == c.Uid:
		bits = perm >> 6
	case c.who().inGroup(st.Gid):
		bits = perm >> 3
	default:
		bits = perm
	}
	if bits&3 != 3 {
		return refuse(syscall.EACCES, "%s: permission denied: you may not create or remove files in this folder", dir)
	}
	if fi.Mode()&os.ModeSticky != 0 && st.Uid != c.Uid {
		if file == "" {
			return nil
		}
		if ff, err := os.Lstat(file); err == nil {
			if fs, ok := ff.Sys().(*syscall.Stat_t); ok && fs.Uid != c.Uid {
				return refuse(syscall.EACCES, "%s: permission denied: the folder is sticky and the file is not yours", file)
			}
		}
	}
	return nil
}

// changeable gives the folders that take changes their write bits, so
// that the kernel, checking permissions itself (default_permissions,
// which --allow-other implies), lets through who may make them: a project
// folder (imports, and sessions moved to the trash) the owner's write bits
// of its folder in the store; trash/ those of /tmp (1777), since who may
// trash or restore a session is checked against the folders of the store
// and of the trash (mayChangeIn). a holds the folder's attributes with
// the owner o (nil: its scope's).
func (v *View) changeable(f Folder, a *Attr, o *Owner) {
	if v.opts.ReadOnly {
		return
	}
	switch f.(type) {
	case *projectDir:
		if o == nil {
			owner := v.Owner(f.scope())
			o = &owner
		}
		a.Mode |= o.Perm & 0o222
	case *trashDir:
		a.Mode = syscall.S_IFDIR | syscall.S_ISVTX | 0o777
	}
}
