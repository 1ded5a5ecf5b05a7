// Package access decides who may do what to the store through the mount,
// as the kernel would decide it were the caller doing it in the store
// itself: the caller's identity (uid, gid, supplementary groups), the
// owner and permission bits of the store's files and folders, and the
// checks every change pifs makes for a caller passes first.
package access

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Who may do what through the mount (docs/guarantees.md, "Who may do
// what"): pifs runs with its own rights (often root, to serve a shared
// store with --allow-other), so every change it makes for a caller is
// first checked against the caller's rights, as the kernel would check
// them were the caller doing it in the store itself:
//
//   - a write to a session control appends to the session file: the caller
//     must be allowed to write that file (checked when the control is
//     opened for writing, as open(2) checks);
//   - fork reads the session: the caller must be allowed to read it;
//   - a new session file (fork, new) goes into a folder: the caller must be
//     allowed to search every folder from the store down to it and to
//     write and search it; a folder that does not exist yet is made in the
//     nearest one that does, which is checked so instead.
//
// A refused change is EACCES, with the reason in the session's errors
// file and the log. What pifs creates for a caller is then given to the
// caller (chown to their uid and gid), so that it is theirs as if they had
// made it; a pifs that does not run as root cannot give a file away, and
// creates only for its own user.
//
// The kernel checks the rest: with default_permissions (which
// --allow-other implies) it checks every access against the modes the
// mount shows, which are those of the store's files (see Owner).

// Access bits, as in access(2).
const (
	Read   = 4
	Write  = 2
	Search = 1
)

// Error is an access refused for a caller: the sentence that says why and
// what to do, and the errno (EACCES) it is.
type Error struct {
	Errno syscall.Errno
	Msg   string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Errno }

// Errorf is an access refused for a caller (EACCES), with what to do.
func Errorf(format string, args ...any) error {
	return &Error{syscall.EACCES, fmt.Sprintf(format, args...)}
}

// Caller is who asks for a change: the process, and the user and group it
// runs as.
type Caller struct {
	Pid, Uid, Gid uint32
}

// groups are the caller's supplementary groups, from /proc (FUSE tells
// only the uid and gid of a request). A caller whose process is gone has
// none.
func (c Caller) groups() []uint32 {
	if c.Pid == 0 {
		return nil
	}
	data, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(c.Pid), 10) + "/status")
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Groups:"); ok {
			var out []uint32
			for _, f := range strings.Fields(rest) {
				if g, err := strconv.ParseUint(f, 10, 32); err == nil {
					out = append(out, uint32(g))
				}
			}
			return out
		}
	}
	return nil
}

// Who is the caller's identity, its supplementary groups read now.
func (c Caller) Who() Who { return Who{c.Uid, c.Gid, c.groups()} }

// Who is a caller's identity as access checks use it: uid, gid and
// supplementary groups.
type Who struct {
	Uid, Gid uint32
	groups   []uint32
}

// Root tells that the caller bypasses permission checks, as root does.
func (w Who) Root() bool { return w.Uid == 0 }

// InGroup tells whether gid is the caller's group or one of its
// supplementary groups.
func (w Who) InGroup(gid uint32) bool {
	if w.Gid == gid {
		return true
	}
	for _, g := range w.groups {
		if g == gid {
			return true
		}
	}
	return false
}

// Allows tells whether w may access what o owns for want (Read, Write,
// Search bits), as the kernel's permission check decides:
// the owner's bits for the owner, else the group's for a member, else the
// others'.
func (w Who) Allows(o Owner, want uint32) bool {
	if w.Root() {
		return true
	}
	var bits uint32
	switch {
	case w.Uid == o.Uid:
		bits = o.Perm >> 6 & 7
	case w.InGroup(o.Gid):
		bits = o.Perm >> 3 & 7
	default:
		bits = o.Perm & 7
	}
	return bits&want == want
}

// Key spells the identity for a map.
func (w Who) Key() string {
	return fmt.Sprint(w.Uid, w.Gid, w.groups)
}

// LstatOwner is the owner and permissions of a path, not following a
// symlink.
func LstatOwner(path string) (Owner, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Owner{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Owner{}, fmt.Errorf("%s: no owner", path)
	}
	return Owner{st.Uid, st.Gid, uint32(fi.Mode().Perm())}, nil
}

// SearchFromTop checks that w may search every folder from / down to
// dir, both included.
func SearchFromTop(w Who, dir string) error {
	dir = filepath.Clean(dir)
	for p := dir; ; p = filepath.Dir(p) {
		o, err := LstatOwner(p)
		if err != nil {
			return err
		}
		if !w.Allows(o, Search) {
			return Errorf("user %d may not search %s (mode %04o, owner %d:%d)", w.Uid, p, o.Perm, o.Uid, o.Gid)
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}

// Who may move what: a change pifs makes in the store for a caller
// (trash, restore, import) is checked against the caller's rights on the
// folders it changes, as the kernel would check the same rename or create
// done directly, so that the mount lets nobody do through pifs what they
// could not do without it.

// MayChangeIn is nil when c may create and remove names in the folder
// dir: write and search permission on it, and, when it has the sticky bit,
// ownership of it or of file (the name removed, "" for none). Else a
// refusal with EACCES that names the folder.
func MayChangeIn(c Caller, dir, file string) error {
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
	case c.Who().InGroup(st.Gid):
		bits = perm >> 3
	default:
		bits = perm
	}
	if bits&3 != 3 {
		return Errorf("%s: permission denied: you may not create or remove files in this folder", dir)
	}
	if fi.Mode()&os.ModeSticky != 0 && st.Uid != c.Uid {
		if file == "" {
			return nil
		}
		if ff, err := os.Lstat(file); err == nil {
			if fs, ok := ff.Sys().(*syscall.Stat_t); ok && fs.Uid != c.Uid {
				return Errorf("%s: permission denied: the folder is sticky and the file is not yours", file)
			}
		}
	}
	return nil
}

// Owner is the owner and permission bits of a file or folder of the store.
type Owner struct {
	Uid, Gid uint32
	Perm     uint32
}

// OwnerOfPath is the owner and permission bits of path, following a
// symlink; false when it cannot be read.
func OwnerOfPath(path string) (Owner, bool) {
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
