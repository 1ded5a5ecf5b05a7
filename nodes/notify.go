package nodes

import (
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// Apply tells the kernel what changed in the store, as the index found it:
// names that went away, and the attributes and content of every view of a
// session whose file changed, of the folders listing it and of the links
// that may now point elsewhere. Its cost follows the changes and what the
// kernel holds of them, never the size of the store.
//
// It must run only in the watcher goroutine, never in a FUSE handler (the
// kernel answers a notification only after it takes locks a handler may be
// waiting under), and it holds no lock of its own while notifying.
func (r *Root) Apply(changes []sessions.Change) {
	root := r.EmbeddedInode()
	touched := map[*fs.Inode]bool{}
	for _, c := range changes {
		pn := root.GetChild(c.Project)
		if c.Name == "" {
			if !r.st.hasProject(c.Project) {
				forget(root, c.Project)
			} else if pn != nil {
				invalidate(pn, false)
			}
			touched[root] = true
			continue
		}
		if pn != nil {
			touched[pn] = true
			switch {
			case c.New == nil:
				forget(pn, c.Name)
			default:
				if sn := pn.GetChild(c.Name); sn != nil {
					reset := c.Old == nil || !c.New.Sig.Grew(c.Old.Sig) || c.New.Sig.Size == c.Old.Sig.Size
					invalidate(sn, reset)
				}
			}
		}
		if c.Old == nil || c.New == nil {
			if byID := root.GetChild(byIDName); byID != nil {
				for _, f := range []*sessions.File{c.Old, c.New} {
					if f != nil {
						forget(byID, names.Encode(f.Header.ID))
					}
				}
				touched[byID] = true
			}
			if byCwd := root.GetChild(byCwdName); byCwd != nil {
				invalidate(byCwd, false)
			}
		}
		touched[root] = true
	}
	if len(changes) > 0 {
		// Every report covers the store; a project's only its own, but
		// which projects a clone's calls count in can change too.
		if u := root.GetChild(usageName); u != nil {
			invalidate(u, false)
		}
		for _, pn := range root.Children() {
			if u := pn.GetChild(usageName); u != nil {
				invalidate(u, false)
			}
		}
	}
	for n := range touched {
		if b := n.GetChild(byNameName); b != nil {
			invalidate(b, false)
		}
		n.NotifyContent(0, 0) // the folder's attributes
		for _, name := range []string{latestName, cwdName} {
			if n.GetChild(name) != nil {
				forget(n, name)
			}
		}
	}
}

// heavyFolders are a session folder's folders of one name per entry: a walk
// (grep -r, tar) leaves the kernel holding a node for each name in them,
// and pifs one for each node the kernel holds.
var heavyFolders = []string{entriesName, branchesName, treeName}

// Work signals that Deliver has something to do.
func (r *Root) Work() <-chan struct{} { return r.st.out.signal }

// Notifying tells the Root that a goroutine runs Deliver whenever Work
// signals: from then on a write through a control returns once the kernel
// was told what it changed.
func (r *Root) Notifying() { r.notifying.Store(true) }

// Deliver tells the kernel what pifs changed itself (as Apply does for the
// watcher's changes) and sheds the sessions dropped from the cache: it asks
// the kernel to forget the names below their entries/, branches/ and tree/
// folders, so that what pifs holds for a walk of the store (a node per name
// the kernel looked up) follows its cache, not everything the walk passed.
// A folder in use (someone's working directory, an open file below it)
// stays valid for its users; a new path to it is looked up again. It
// returns how many folders it let go.
//
// Like Apply, it must not run in a FUSE handler.
func (r *Root) Deliver() int {
	changes, evicted, stale, done := r.st.out.take()
	defer done()
	r.Apply(changes)
	// Pages and listings read while the store changed (see keptSnapshot,
	// dirHandle.Releasedir).
	for _, n := range stale {
		n.NotifyContent(0, 0)
	}
	root := r.EmbeddedInode()
	n := 0
	for _, k := range evicted {
		pn := root.GetChild(k.project)
		if pn == nil {
			continue
		}
		sn := pn.GetChild(k.name)
		if sn == nil || r.st.isParsed(k) {
			continue // parsed again since: in use
		}
		for _, name := range heavyFolders {
			// Only a folder the walk went into: forgetting a name also
			// drops the session folder's kept listing.
			if d := sn.GetChild(name); d != nil && len(d.Children()) > 0 {
				sn.NotifyEntry(name)
				n++
			}
		}
	}
	return n
}

// settle waits, after a write through a control, until the kernel was
// told what it changed, for a second at most.
func (r *Root) settle() {
	if r.notifying.Load() {
		r.st.out.wait(time.Second)
	}
}

// forget drops a name the kernel may hold.
func forget(parent *fs.Inode, name string) {
	parent.NotifyEntry(name)
	parent.RmChild(name)
}

// resolver finds a child by name without the kernel.
type resolver interface {
	resolve(name string) (uint64, bool)
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
			forget(n, name)
			continue
		}
		invalidate(ch, reset)
	}
}
