package view

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/sessions"
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

// writable is a File that takes writes: a control.
type writable interface {
	control() control
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

// inRoot is a value of the store's scope.
type inRoot struct{ v *View }

func (inRoot) scope() Scope { return Scope{} }

// inProject is a value of a project's scope ("": the store's).
type inProject struct {
	v       *View
	project string
}

func (p inProject) scope() Scope { return Scope{project: p.project} }

// Attr is what stat shows of a value.
type Attr struct {
	Mode     uint32 // the kind and the permissions
	Size     uint64
	Mtime    time.Time
	Uid, Gid uint32
}

// List lists a folder: its children sorted by name, each name once.
func (v *View) List(f Folder) ([]Child, error) {
	v.listings.Add(1)
	list, err := f.list()
	if err != nil {
		return nil, err
	}
	sortChildren(list)
	kids := list[:0]
	for _, c := range list {
		if len(kids) > 0 && kids[len(kids)-1].Name == c.Name {
			continue // the first of a name wins, as in lookup
		}
		kids = append(kids, c)
	}
	return kids, nil
}

// sortChildren sorts a listing by name; of children with one name, the
// first listed stays first. Names are almost always unique: the stable
// sort, which costs a few times more on a big folder, is taken only then.
func sortChildren(list []Child) {
	byName := func(a, b Child) int { return strings.Compare(a.Name, b.Name) }
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

// Lookup finds a child of a folder by name.
func (v *View) Lookup(f Folder, name string) (Child, error) {
	v.lookups.Add(1)
	return f.lookup(name)
}

// Attr is what stat shows of n: its kind, permissions, size and mtime,
// with the owner o, or its scope's (see Owner) when o is nil.
func (v *View) Attr(n Node, o *Owner) (Attr, error) {
	var a Attr
	var err error
	switch n := n.(type) {
	case Folder:
		a.Mode = syscall.S_IFDIR | 0o555
		if _, ok := n.(symlinker); ok && !v.opts.ReadOnly {
			a.Mode |= 0o200 // labels/ takes ln -s and rm
		}
		a.Mtime, err = n.mtime()
	case Link:
		var t string
		t, a.Mtime, err = n.target()
		a.Mode, a.Size = syscall.S_IFLNK|0o777, uint64(len(t))
	case Raw:
		var size int64
		size, a.Mtime, err = n.stat()
		a.Mode, a.Size = syscall.S_IFREG|0o444, uint64(size)
	case File:
		var size int64
		if sz, ok := n.(sizer); ok {
			size, a.Mtime, err = sz.size()
		} else {
			var data []byte
			data, a.Mtime, err = n.content()
			size = int64(len(data))
		}
		a.Mode, a.Size = syscall.S_IFREG|v.perm(n), uint64(size)
	}
	if err != nil {
		return Attr{}, err
	}
	a = v.own(n, a, o)
	if f, ok := n.(Folder); ok {
		v.changeable(f, &a, o)
	}
	return a, nil
}

// KnownAttr is Attr for a costly file whose size was counted already, and
// only then: a listing gives the others by name alone.
func (v *View) KnownAttr(n Node, o *Owner) (Attr, bool) {
	c, ok := n.(costly)
	if !ok {
		return Attr{}, false
	}
	size, mt, ok := c.knownSize()
	if !ok {
		return Attr{}, false
	}
	return v.own(n, Attr{Mode: syscall.S_IFREG | v.perm(n.(File)), Size: uint64(size), Mtime: mt}, o), true
}

// OpenAttr is what fstat shows of a Raw file open as f, from f itself.
func (v *View) OpenAttr(n Raw, fi os.FileInfo) Attr {
	return v.own(n, Attr{Mode: syscall.S_IFREG | 0o444, Size: uint64(fi.Size()), Mtime: fi.ModTime()}, nil)
}

// own gives a its owner: o, or n's scope's.
func (v *View) own(n Node, a Attr, o *Owner) Attr {
	if a.Mtime.IsZero() || a.Mtime.Unix() < 0 {
		a.Mtime = time.Unix(0, 0)
	}
	if o == nil {
		owner := v.Owner(n.scope())
		o = &owner
	}
	o.apply(&a)
	return a
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

// perm is the permissions pifs gives a file: controls are writable unless
// the mount is read-only.
func (v *View) perm(f File) uint32 {
	if v.Writable(f) {
		return 0o644
	}
	return 0o444
}

// Writable tells whether f takes writes.
func (v *View) Writable(f File) bool {
	_, ok := f.(writable)
	return ok && !v.opts.ReadOnly && !inTrash(f)
}

// Content is a file's whole content.
func (v *View) Content(f File) ([]byte, error) {
	data, _, err := f.content()
	return data, err
}

// Target is a link's target.
func (v *View) Target(l Link) (string, error) {
	t, _, err := l.target()
	return t, err
}

// OpenRaw opens the store's file a Raw file shows, for reading.
func (v *View) OpenRaw(n Raw) (*os.File, error) {
	path, err := n.path()
	if err != nil {
		return nil, err
	}
	return sessions.OpenRegular(path) // a FIFO put there must not block
}

// Window is the part of data a read of n bytes at off gives.
func Window(data []byte, off int64, n int) []byte {
	if off >= int64(len(data)) {
		return nil
	}
	return data[off:min(int64(len(data)), off+int64(n))]
}
