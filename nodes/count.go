package nodes

import (
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fs"
)

// noticeCounts count what telling the kernel of changes cost: the
// notifications sent (an inode's attributes and content, or a name, to
// drop) and the inodes looked at to find them (a name resolved again, a
// node gone through). .pifs/stats shows them as "notices"; a test that
// guards the cost of a change counts them there.
type noticeCounts struct{ Notifies, Touched atomic.Int64 }

// notifyContent has the kernel drop n's attributes and content (a
// folder's listing).
func (r *Root) notifyContent(n *fs.Inode) {
	r.counts.Notifies.Add(1)
	n.NotifyContent(0, 0)
}

// notifyEntry has the kernel drop a name in parent.
func (r *Root) notifyEntry(parent *fs.Inode, name string) {
	r.counts.Notifies.Add(1)
	parent.NotifyEntry(name)
}

// touch counts an inode looked at.
func (r *Root) touch() { r.counts.Touched.Add(1) }

// fileCounts count how session.jsonl was read: reads that reached pifs
// (RawReads) and opens the kernel reads from the store's file itself
// (Passthrough); PassthroughOffered is 1 when the kernel offers to
// (whether it lets this mount do it depends on who mounted it); and the
// reads of the other files, views and entries, that reached pifs
// (ViewReads). .pifs/stats shows them as "files".
type fileCounts struct{ RawReads, Passthrough, PassthroughOffered, ViewReads atomic.Int64 }
