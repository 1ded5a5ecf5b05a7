package view

import (
	"os"
	"syscall"
	"time"

	"github.com/pifs/pifs/sessions"
)

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
	applyOwner(*o, &a, v.opts.ReadOnly || inTrash(n))
	return a
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

// Snapshot is what an open file of a computed view holds: its whole
// content now, and the attributes that go with it (for fstat once the
// session is gone).
func (v *View) Snapshot(f File) ([]byte, Attr, error) {
	data, mt, err := f.content()
	if err != nil {
		return nil, Attr{}, err
	}
	return data, v.own(f, Attr{Mode: syscall.S_IFREG | v.perm(f), Size: uint64(len(data)), Mtime: mt}, nil), nil
}

// Opened is the attributes of f but its size, for an open file that
// follows its session (see Follow): its mode and owner now, and the time
// it was opened.
func (v *View) Opened(f File) Attr {
	return v.own(f, Attr{Mode: syscall.S_IFREG | v.perm(f), Mtime: time.Now()}, nil)
}

// seenBy is a value whose showing depends on who asks: c, the child that
// gives it, as a caller with sight s sees it, and whether they see it.
type seenBy interface {
	seenBy(s *sight, c Child) (Child, bool)
}

// ListFor lists a folder as caller c sees it.
func (v *View) ListFor(f Folder, c Caller) ([]Child, error) {
	kids, err := v.List(f)
	if err != nil || !v.ListsPerCaller(f) {
		return kids, err
	}
	var s *sight
	out := kids[:0]
	for _, k := range kids {
		if sb, ok := k.Node().(seenBy); ok {
			if s == nil {
				s = v.sightOf(c)
			}
			if k, ok = sb.seenBy(s, k); !ok {
				continue
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// LookupFor finds a child of a folder by name, as caller c sees it.
func (v *View) LookupFor(f Folder, name string, c Caller) (Child, error) {
	k, err := v.Lookup(f, name)
	if err != nil || !v.opts.Shared {
		return k, err
	}
	sb, ok := k.Node().(seenBy)
	if !ok {
		return k, nil
	}
	if k, ok = sb.seenBy(v.sightOf(c), k); !ok {
		return Child{}, ErrNotFound
	}
	return k, nil
}

// PerCaller tells whether what a value shows depends on who asks, or
// changes with no notice (volatile): the kernel must not keep it for
// another caller.
func (v *View) PerCaller(n Node) bool {
	if _, ok := n.(live); ok {
		return true
	}
	_, ok := n.(seenBy)
	_, vol := n.(volatile)
	return v.opts.Shared && ok || vol
}

// live is a value the kernel must keep for no one: it follows what the
// kernel is not told of (by-file/, from the full-text index).
type live interface{ live() }

// gathers is a folder that may show sessions from elsewhere, whose
// listing then depends on who asks.
type gathers interface{ gathers() bool }

// ListsPerCaller tells whether a folder's listing depends on who asks: the
// kernel must not keep it for another caller.
func (v *View) ListsPerCaller(f Folder) bool {
	if _, ok := f.(live); ok {
		return true
	}
	g, ok := f.(gathers)
	return v.opts.Shared && ok && g.gathers()
}
