package view

import (
	"slices"
	"strings"
	"syscall"
	"time"
)

// What the mount shows is a tree of values of three kinds, Folder, File and
// Link, each a small type of this package that computes its content from
// the store. The layer that answers the kernel serves any of them through
// the View's methods (List, Lookup, Attr, Content, Target, Write...): it
// needs one node type per kind, never one per view, and a new view is code
// of this package only.

// Node is a folder, file or link of the mount.
type Node interface {
	// scope is what of the store it shows, whose owner and permissions
	// it takes (see Owner).
	scope() Scope
}

// Folder is a folder of the mount.
type Folder interface {
	Node
	// list returns the children; the order does not matter.
	list() ([]Child, error)
	// lookup finds one child by name (ErrNotFound when there is none).
	lookup(name string) (Child, error)
	// mtime is the folder's modification time.
	mtime() (time.Time, error)
}

// File is a file of the mount whose content is computed: the whole of it,
// from the session's current version, and its mtime.
type File interface {
	Node
	content() ([]byte, time.Time, error)
}

// Link is a symlink of the mount whose target is computed.
type Link interface {
	Node
	target() (string, time.Time, error)
}

// Raw is a file served straight from a file of the store (session.jsonl),
// so that its size and content are always the file's.
type Raw interface {
	Node
	// path is the store's file.
	path() (string, error)
	// stat is its size and mtime as the index knows them.
	stat() (int64, time.Time, error)
}

// sizer is a File that knows its size without rendering it again.
type sizer interface {
	size() (int64, time.Time, error)
}

// costly is a File whose size takes parsing or rendering the session.
// READDIRPLUS looks up every name a listing gives; for these the listing
// gives the name alone (the kernel looks it up when someone asks), so that
// a walk renders nothing it does not open, unless its size was counted
// already, which knownSize tells.
type costly interface {
	knownSize() (int64, time.Time, bool)
}

// kept is a File whose content never changes (an entry): the kernel may
// keep its pages.
type kept interface {
	kept()
}

// symlinker is a folder that takes new symlinks.
type symlinker interface {
	symlink(target, name string, c Caller) (Child, error)
}

// unlinker is a folder whose names can be removed.
type unlinker interface {
	unlink(name string, c Caller) error
}

// Child is one name in a folder: what it is, its inode number, and how to
// make its value.
type Child struct {
	Name string
	Mode uint32 // S_IFDIR, S_IFREG or S_IFLNK
	Ino  uint64
	make func() Node
}

// Node makes the child's value.
func (c Child) Node() Node { return c.make() }

// Scope is what of the store a value shows: the store (the zero Scope), a
// project, or a session.
type Scope struct{ project, session string }

// ScopeOf is n's scope.
func ScopeOf(n Node) Scope { return n.scope() }

// Attr is what stat shows of a value.
type Attr struct {
	Mode     uint32 // the kind and the permissions
	Size     uint64
	Mtime    time.Time
	Uid, Gid uint32
}

// applyOwner sets the owner and permissions of a, whose mode holds the
// kind and the permissions pifs gives it, from o. Files and folders show
// the read bits of what they show in the store, and its owner's write bit:
// a copy (cp, cp -r, pi's /export of a branch) is then a file its owner can
// write and pi can continue, and rm -r removes without asking, as after
// any export; writing to the mount's own files is still refused, but for
// the controls, which show every write bit of the file they write to. A
// read-only mount, and the trash, show no write bit.
func applyOwner(o Owner, a *Attr, readOnly bool) {
	kind, base := a.Mode&syscall.S_IFMT, a.Mode&0o777
	read, own := o.Perm&0o444, o.Perm&0o200
	if readOnly {
		own = 0
	}
	perm := read | own
	switch kind {
	case syscall.S_IFDIR:
		perm = read | read>>2 | own
	case syscall.S_IFLNK:
		perm = 0o777
	}
	if kind != syscall.S_IFLNK && base&0o200 != 0 {
		perm |= o.Perm & 0o222 // a control, or labels/: who may write the file
	}
	a.Uid, a.Gid = o.Uid, o.Gid
	a.Mode = kind | perm
}

// Window is the part of data a read of n bytes at off gives.
func Window(data []byte, off int64, n int) []byte {
	if off >= int64(len(data)) {
		return nil
	}
	return data[off:min(int64(len(data)), off+int64(n))]
}

// sortChildren sorts a listing by name; of children with one name, the
// first listed stays first. Most listings are made in order already (a
// session folder's, a project's) and are only checked. Names are almost
// always unique: the stable sort, which costs a few times more on a big
// folder, is taken only then.
func sortChildren(list []Child) {
	byName := func(a, b Child) int { return strings.Compare(a.Name, b.Name) }
	if slices.IsSortedFunc(list, byName) {
		return // a run of one name keeps the order it was listed in
	}
	listed := slices.Clone(list)
	slices.SortFunc(list, byName)
	for i := 1; i < len(list); i++ {
		if list[i-1].Name == list[i].Name {
			copy(list, listed)
			slices.SortStableFunc(list, byName)
			return
		}
	}
}

// Costly tells whether n is a file whose size takes parsing or rendering
// its session (see costly).
func Costly(n Node) bool {
	_, ok := n.(costly)
	return ok
}

// Kept tells whether n is a file whose content never changes.
func Kept(n Node) bool {
	_, ok := n.(kept)
	return ok
}
