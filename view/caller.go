package view

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
	mayRead   = 4
	mayWrite  = 2
	maySearch = 1
)

// errAccess is an access refused for a caller, with what to do.
func errAccess(format string, args ...any) error {
	return &refusal{syscall.EACCES, fmt.Sprintf(format, args...)}
}

// What a folder does with the changes a user asks of it: the mount only
// reads, but for labels/ (ln -s, rm), and every other change is refused
// with EROFS (ErrReadOnly); a refusal inside a session says why in its
// errors file where the user may not know (an editor saving a new file).
//
// How `rm -rf` of a session folder changes nothing: it removes what it
// finds in listing order, so it is refused something else of the session
// (append comes first) before it reaches labels/. A label is cleared by
// unlinking it, unless the same process was refused removing anything else
// of that session in the last removalWindow.

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

func (c Caller) who() who { return who{c.Uid, c.Gid, c.groups()} }

// who is a caller's identity as access checks use it: uid, gid and
// supplementary groups.
type who struct {
	uid, gid uint32
	groups   []uint32
}

// root tells that the caller bypasses permission checks, as root does.
func (w who) root() bool { return w.uid == 0 }

func (w who) inGroup(gid uint32) bool {
	if w.gid == gid {
		return true
	}
	for _, g := range w.groups {
		if g == gid {
			return true
		}
	}
	return false
}

// allows tells whether w may access what o owns for want (mayRead,
// mayWrite, maySearch bits), as the kernel's permission check decides:
// the owner's bits for the owner, else the group's for a member, else the
// others'.
func (w who) allows(o Owner, want uint32) bool {
	if w.root() {
		return true
	}
	var bits uint32
	switch {
	case w.uid == o.Uid:
		bits = o.Perm >> 6 & 7
	case w.inGroup(o.Gid):
		bits = o.Perm >> 3 & 7
	default:
		bits = o.Perm & 7
	}
	return bits&want == want
}

// key spells the identity for a map.
func (w who) key() string {
	return fmt.Sprint(w.uid, w.gid, w.groups)
}

// lstatOwner is the owner and permissions of a path, not following a
// symlink.
func lstatOwner(path string) (Owner, error) {
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

// searchFromTop checks that w may search every folder from / down to
// dir, both included.
func searchFromTop(w who, dir string) error {
	dir = filepath.Clean(dir)
	for p := dir; ; p = filepath.Dir(p) {
		o, err := lstatOwner(p)
		if err != nil {
			return err
		}
		if !w.allows(o, maySearch) {
			return errAccess("user %d may not search %s (mode %04o, owner %d:%d)", w.uid, p, o.Perm, o.Uid, o.Gid)
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
