package nodes

import (
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Who may read what: the mount shows each thing with the owner and the
// permissions of what it shows in the store, so that with --allow-other
// (and default_permissions) another user reaches exactly what the store
// lets them reach. The root and by-id/, by-cwd/, usage/ are the store
// folder's; a project folder is its folder's; a session folder and every
// file and folder in it are its session file's. Folders get x where they
// get r; files keep only r, but for controls, which keep the owner's w; a
// symlink is 0777 as always.

// owner is the owner and permission bits of a file or folder of the store.
type owner struct {
	uid, gid uint32
	perm     uint32
}

// ownerSource is a node that shows something of the store with an owner of
// its own; the others take their nearest such ancestor's.
type ownerSource interface {
	owner() (owner, bool)
}

func ownerOfPath(path string) (owner, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return owner{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return owner{}, false
	}
	return owner{st.Uid, st.Gid, uint32(fi.Mode().Perm())}, true
}

func (r *Root) owner() (owner, bool) { return ownerOfPath(r.opts.SessionsDir) }

func (d *projectDir) owner() (owner, bool) {
	path, ok := d.r.st.x.ProjectFolder(d.project)
	if !ok {
		return d.r.owner() // only flat files name it
	}
	return ownerOfPath(path)
}

func (d *sessionDir) owner() (owner, bool) {
	f, err := d.s.meta()
	if err != nil {
		return owner{}, false
	}
	return owner{f.Uid, f.Gid, uint32(f.Mode.Perm())}, true
}

// ownerFor is the owner of a node: its own, or its nearest ancestor's,
// starting at parent.
func (r *Root) ownerFor(ops any, parent *fs.Inode) owner {
	if o, ok := ownOwner(ops); ok {
		return o
	}
	return r.inheritedOwner(parent)
}

// ownOwner is the owner of a node that has one of its own.
func ownOwner(ops any) (owner, bool) {
	if src, ok := ops.(ownerSource); ok {
		return src.owner()
	}
	return owner{}, false
}

// inheritedOwner is the owner a folder passes on to its children that have
// none of their own: its own, or its nearest ancestor's.
func (r *Root) inheritedOwner(folder *fs.Inode) owner {
	for p := folder; p != nil; {
		if src, ok := p.Operations().(ownerSource); ok {
			if o, ok := src.owner(); ok {
				return o
			}
		}
		_, p = p.Parent()
	}
	return owner{r.uid, r.gid, 0o755}
}

// own sets the owner and permissions of out, whose mode holds the kind and
// the permissions pifs gives it, from o.
func own(out *fuse.Attr, o owner) {
	kind, base := out.Mode&syscall.S_IFMT, out.Mode&0o777
	read := o.perm & 0o444
	perm := read
	switch kind {
	case syscall.S_IFDIR:
		perm = read | read>>2
	case syscall.S_IFLNK:
		perm = 0o777
	default:
		if base&0o200 != 0 {
			perm |= o.perm & 0o200 // a control the owner may write
		}
	}
	out.Owner = fuse.Owner{Uid: o.uid, Gid: o.gid}
	out.Mode = kind | perm
}

// parentOf is the folder an inode was found in (nil for the root).
func parentOf(n *fs.Inode) *fs.Inode {
	_, p := n.Parent()
	return p
}
