package view

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pifs/pifs/sessions"
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

// who is a caller's identity as access checks use it: uid, gid and
// supplementary groups.
type who struct {
	uid, gid uint32
	groups   []uint32
}

func (c Caller) who() who { return who{c.Uid, c.Gid, c.groups()} }

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

// searchDown checks that w may search every folder from the store down
// to dir, both included; dir must be the store or inside it.
func (v *View) searchDown(w who, dir string) error {
	store := filepath.Clean(v.opts.SessionsDir)
	rel, err := filepath.Rel(store, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return errAccess("%s is outside the sessions directory %s", dir, store)
	}
	p := store
	parts := []string{}
	if rel != "." {
		parts = strings.Split(rel, "/")
	}
	for i := 0; ; i++ {
		o, err := lstatOwner(p)
		if err != nil {
			return err
		}
		if !w.allows(o, maySearch) {
			return errAccess("user %d may not search %s (mode %04o, owner %d:%d)", w.uid, p, o.Perm, o.Uid, o.Gid)
		}
		if i == len(parts) {
			return nil
		}
		p = filepath.Join(p, parts[i])
	}
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

// mayCreateIn checks that caller c may create a file in dir of the store
// (made first when it is not there): it returns the folders that must be
// made, outermost first.
func (v *View) mayCreateIn(c Caller, dir string) ([]string, error) {
	w := c.who()
	if !w.root() && w.uid != v.uid && v.uid != 0 {
		return nil, errAccess("pifs runs as user %d and cannot create a file that belongs to user %d; mount the store as that user, or as root", v.uid, w.uid)
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
		if err := searchFromTop(w, real); err != nil {
			return nil, err
		}
		at = real
	}
	o, err := lstatOwner(at)
	if err != nil {
		return nil, err
	}
	if !w.allows(o, mayWrite|maySearch) {
		return nil, errAccess("user %d may not create files in %s (mode %04o, owner %d:%d): pifs creates for a user only what the user could create in the store", w.uid, at, o.Perm, o.Uid, o.Gid)
	}
	return missing, nil
}

// mayAppend checks that caller c may write to the session file at path.
func (v *View) mayAppend(c Caller, path string) error {
	return v.mayOpen(c, path, mayWrite, "write to")
}

// mayRead checks that caller c may read the session file at path.
func (v *View) mayReadFile(c Caller, path string) error {
	return v.mayOpen(c, path, mayRead, "read")
}

func (v *View) mayOpen(c Caller, path string, want uint32, what string) error {
	w := c.who()
	if w.root() {
		return nil
	}
	if err := v.searchDown(w, filepath.Dir(path)); err != nil {
		return err
	}
	o, err := lstatOwner(path)
	if err != nil {
		return err
	}
	if !w.allows(o, want) {
		return errAccess("user %d may not %s %s (mode %04o, owner %d:%d)", w.uid, what, path, o.Perm, o.Uid, o.Gid)
	}
	return nil
}

// createFor creates a planned session file for caller c, with the
// folders it needs, and gives them to the caller. The folders it is made
// in are checked again as they are opened (sessions.CreateAs), so that a
// link swapped in after the check leads nowhere the caller may not write.
func (v *View) createFor(c Caller, p newSession) (string, error) {
	if _, err := v.mayCreateIn(c, p.dir); err != nil {
		return "", err
	}
	uid, gid := -1, -1
	if v.uid == 0 && (c.Uid != 0 || c.Gid != 0) {
		uid, gid = int(c.Uid), int(c.Gid)
	}
	w := c.who()
	return sessions.CreateAs(p.dir, p.file, uid, gid, func(fi iofs.FileInfo) error {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no owner", p.dir)
		}
		if o := (Owner{st.Uid, st.Gid, uint32(fi.Mode().Perm())}); !w.allows(o, mayWrite|maySearch) {
			at, _ := filepath.EvalSymlinks(p.dir)
			return errAccess("user %d may not create files in %s (mode %04o, owner %d:%d): pifs creates for a user only what the user could create in the store", w.uid, at, o.Perm, o.Uid, o.Gid)
		}
		return nil
	}, p.lines...)
}

// opener is a control that checks its caller's rights when it is opened
// for writing.
type opener interface {
	mayOpen(c Caller) error
}

// mayOpen: a write to name, leaf or append appends to the session file.
func (c sessionControl[P]) mayOpen(who Caller) error { return c.s.mayChange(who) }

// mayOpen: a fork reads the session (where the copy goes is checked per
// line).
func (c forkControl) mayOpen(who Caller) error {
	f, err := c.s.meta()
	if err != nil {
		return err
	}
	return c.s.v.mayReadFile(who, f.Path)
}

// mayChange checks that caller c may append to the session's file.
func (s sessionRef) mayChange(c Caller) error {
	f, err := s.meta()
	if err != nil {
		return err
	}
	return s.v.mayAppend(c, f.Path)
}
