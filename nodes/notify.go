package nodes

import (
	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/view"
)

// Apply tells the kernel what changed in the store, as the index found it
// (see view.View.Notices), of what the kernel holds.
//
// It must run only in the watcher goroutine, never in a FUSE handler (the
// kernel answers a notification only after it takes locks a handler may be
// waiting under), and it holds no lock of its own while notifying.
func (r *Root) Apply(changes []sessions.Change) {
	r.v.Publish(changes)
	r.tell(r.v.Notices(changes))
}

// Deliver tells the kernel what pifs changed itself and what it let go of
// (see view.View.PendingNotices), and of the pages and listings read while the store
// changed (see keptSnapshot, dirHandle.Releasedir).
//
// Like Apply, it must not run in a FUSE handler.
func (r *Root) Deliver() {
	notices, done := r.v.PendingNotices()
	defer done()
	r.tell(notices)
	r.staleMu.Lock()
	stale := r.stale
	r.stale = nil
	r.staleMu.Unlock()
	for _, n := range stale {
		r.notifyContent(n)
	}
}

// putStale asks Deliver to drop what the kernel keeps of n's pages or
// listing.
func (r *Root) putStale(n *fs.Inode) {
	r.staleMu.Lock()
	r.stale = append(r.stale, n)
	r.staleMu.Unlock()
	r.v.SignalNotices()
}

// tell carries out notices on the nodes the kernel holds.
func (r *Root) tell(notices []view.Notice) {
	for _, nt := range notices {
		if len(nt.Path) == 0 {
			r.do(r.EmbeddedInode(), "", nt.Do)
			continue
		}
		for _, parent := range r.held(r.EmbeddedInode(), nt.Path[:len(nt.Path)-1]) {
			r.do(parent, nt.Path[len(nt.Path)-1], nt.Do)
		}
	}
}

// held are the nodes the kernel holds at path below n ("*" for every
// name).
func (r *Root) held(n *fs.Inode, path []string) []*fs.Inode {
	nodes := []*fs.Inode{n}
	for _, name := range path {
		var next []*fs.Inode
		for _, n := range nodes {
			r.touch()
			if name == "*" {
				for _, ch := range n.Children() {
					next = append(next, ch)
				}
			} else if ch := n.GetChild(name); ch != nil {
				next = append(next, ch)
			}
		}
		nodes = next
	}
	return nodes
}

// do does what a notice asks to the name in parent ("" for parent itself).
func (r *Root) do(parent *fs.Inode, name string, what view.Action) {
	n := parent
	if name != "" {
		n = parent.GetChild(name)
	}
	switch what {
	case view.Forget:
		r.forget(parent, name)
	case view.ForgetHeld:
		if n != nil {
			r.forget(parent, name)
		}
	case view.Refresh, view.Reset:
		if n != nil {
			r.invalidate(n, what == view.Reset)
		}
	case view.Grew:
		if n != nil {
			r.grew(n)
		}
	case view.Attrs:
		if n != nil {
			r.notifyContent(n)
		}
	case view.ShedNames:
		if n != nil {
			for name := range n.Children() {
				r.forget(n, name)
			}
		}
	case view.Shed:
		// Only a folder the walk went into: forgetting a name also drops
		// the parent's kept listing.
		if n != nil && len(n.Children()) > 0 {
			r.notifyEntry(parent, name)
		}
	}
}

// resolver finds a child by name without the kernel.
type resolver interface {
	resolve(name string) (uint64, bool)
}

// forget drops a name the kernel may hold.
func (r *Root) forget(parent *fs.Inode, name string) {
	r.notifyEntry(parent, name)
	parent.RmChild(name)
}

// invalidate drops what the kernel cached of n and the nodes below it:
// attributes and content, and names that no longer resolve. Files whose
// content never changes keep theirs, unless their session file was
// rewritten (reset).
func (r *Root) invalidate(n *fs.Inode, reset bool) {
	r.touch()
	ops := n.Operations()
	if f, ok := ops.(*file); !ok || !f.kept || reset {
		r.notifyContent(n)
	}
	d, ok := ops.(resolver)
	if !ok {
		return
	}
	for name, ch := range n.Children() {
		if !r.resolves(d, name, ch) {
			r.forget(n, name)
			continue
		}
		r.invalidate(ch, reset)
	}
}

// resolves tells whether name in d still names ch.
func (r *Root) resolves(d resolver, name string, ch *fs.Inode) bool {
	r.touch()
	ino, ok := d.resolve(name)
	return ok && ino == ch.StableAttr().Ino
}

// grew drops what the kernel cached of a session folder whose file grew
// (view.Grew): as invalidate, but of the folders of one name per entry
// only their own attributes and listing; the names in them that changed
// come in notices of their own.
func (r *Root) grew(n *fs.Inode) {
	r.touch()
	r.notifyContent(n)
	d, ok := n.Operations().(resolver)
	if !ok {
		return
	}
	for name, ch := range n.Children() {
		switch {
		case !r.resolves(d, name, ch):
			r.forget(n, name)
		case view.PerEntry(name):
			r.notifyContent(ch)
		default:
			r.invalidate(ch, false)
		}
	}
}
