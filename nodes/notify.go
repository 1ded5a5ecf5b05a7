package nodes

import (
	"github.com/hanwen/go-fuse/v2/fs"
)

// watchState is what the watcher remembers between passes: each session
// file as last seen, by the inode number of its folder.
type watchState struct {
	sigs map[uint64]fileSig
}

// resolver finds a child by name without the kernel.
type resolver interface {
	resolve(name string) (uint64, bool)
}

// Sync compares the store with what the kernel has looked up and tells the
// kernel what changed: names that went away, and the attributes and content
// of every view of a session whose file changed. It must run only in the
// watcher goroutine, never in a FUSE handler (the kernel answers a
// notification only after it takes locks a handler may be waiting under),
// and it holds no lock of its own while notifying.
func (r *Root) Sync() {
	if r.watch.sigs == nil {
		r.watch.sigs = map[uint64]fileSig{}
	}
	live := map[uint64]bool{}
	r.checkChildren(&r.Inode, &r.dir)
	for _, ch := range r.Children() {
		switch d := ch.Operations().(type) {
		case *projectDir:
			r.checkChildren(ch, d)
			for _, sch := range ch.Children() {
				if sd, ok := sch.Operations().(*sessionDir); ok {
					live[sch.StableAttr().Ino] = true
					r.syncSession(sch, sd)
				}
			}
		case *byIDDir:
			r.checkChildren(ch, d)
		}
	}
	for ino := range r.watch.sigs {
		if !live[ino] {
			delete(r.watch.sigs, ino)
		}
	}
}

// checkChildren drops the known children of n whose name no longer
// resolves to the same node.
func (r *Root) checkChildren(n *fs.Inode, res resolver) {
	for name, ch := range n.Children() {
		if ino, ok := res.resolve(name); ok && ino == ch.StableAttr().Ino {
			continue
		}
		n.NotifyEntry(name)
		n.RmChild(name)
	}
}

// syncSession invalidates the views of a session whose file changed.
func (r *Root) syncSession(n *fs.Inode, d *sessionDir) {
	m, err := d.s.meta()
	if err != nil {
		return // gone: its project's check dropped it
	}
	ino := n.StableAttr().Ino
	old, seen := r.watch.sigs[ino]
	if seen && old == m.sig {
		return
	}
	r.watch.sigs[ino] = m.sig
	reset := !seen || old.ino != m.sig.ino || old.dev != m.sig.dev || m.sig.size < old.size
	r.st.refreshParsed(d.s.project, d.s.name)
	invalidate(n, reset)
}

// invalidate drops what the kernel cached of n and the nodes below it:
// attributes and content, and names that no longer resolve. Entry files
// never change, unless the file was rewritten (reset).
func invalidate(n *fs.Inode, reset bool) {
	ops := n.Operations()
	if _, ok := ops.(*entryFile); !ok || reset {
		n.NotifyContent(0, 0)
	}
	res, ok := ops.(resolver)
	if !ok {
		return
	}
	for name, ch := range n.Children() {
		if ino, ok := res.resolve(name); !ok || ino != ch.StableAttr().Ino {
			n.NotifyEntry(name)
			n.RmChild(name)
			continue
		}
		invalidate(ch, reset)
	}
}
