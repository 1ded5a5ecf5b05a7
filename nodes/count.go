package nodes

import (
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fs"
)

// NoticeStats count what telling the kernel of changes cost: the
// notifications sent (an inode's attributes and content, or a name, to
// drop) and the inodes looked at to find them (a name resolved again, a
// node gone through). A test that guards the cost of a change counts them.
type NoticeStats struct {
	Notifies, Touched int64
}

// noticeCounts are a Root's NoticeStats as they grow.
type noticeCounts struct{ notifies, touched atomic.Int64 }

// NoticeStats returns what the notices cost so far.
func (r *Root) NoticeStats() NoticeStats {
	return NoticeStats{Notifies: r.counts.notifies.Load(), Touched: r.counts.touched.Load()}
}

// notifyContent has the kernel drop n's attributes and content (a
// folder's listing).
func (r *Root) notifyContent(n *fs.Inode) {
	r.counts.notifies.Add(1)
	n.NotifyContent(0, 0)
}

// notifyEntry has the kernel drop a name in parent.
func (r *Root) notifyEntry(parent *fs.Inode, name string) {
	r.counts.notifies.Add(1)
	parent.NotifyEntry(name)
}

// touch counts an inode looked at.
func (r *Root) touch() { r.counts.touched.Add(1) }
