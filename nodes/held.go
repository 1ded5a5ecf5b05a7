package nodes

import (
	"context"

	"github.com/hanwen/go-fuse/v2/fs"
)

// The nodes the kernel holds count against the cache's budget. A walk
// (find, grep -r, tar) makes the kernel look up every name it passes,
// and pifs keeps a node for each until the kernel forgets it: after
// find over 10,000 sessions that was 1.5 million nodes, more than the
// parsed sessions themselves, outside any bound, and the collector then
// ran without pause, a core's worth, at every allocation. Counting them
// lets the cache drop the least recently used sessions as nodes grow;
// dropping a session has the kernel forget the names below its entries/,
// branches/ and tree/ (see Deliver), and so their nodes.

// nodeBytes is about what one node costs: go-fuse's Inode with its maps
// of children and parents, pifs's node, and the kernel's id for it.
const nodeBytes = 512

// trimEvery is how many new nodes go by between checks of the budget.
const trimEvery = 1024

var (
	_ = (fs.NodeOnAdder)((*dir)(nil))
	_ = (fs.NodeOnForgetter)((*dir)(nil))
	_ = (fs.NodeOnAdder)((*file)(nil))
	_ = (fs.NodeOnForgetter)((*file)(nil))
	_ = (fs.NodeOnAdder)((*link)(nil))
	_ = (fs.NodeOnForgetter)((*link)(nil))
)

func (d *dir) OnAdd(ctx context.Context)  { d.r.st.nodeAdded() }
func (d *dir) OnForget()                  { d.r.st.nodeForgotten() }
func (f *file) OnAdd(ctx context.Context) { f.r.st.nodeAdded() }
func (f *file) OnForget()                 { f.r.st.nodeForgotten() }
func (l *link) OnAdd(ctx context.Context) { l.r.st.nodeAdded() }
func (l *link) OnForget()                 { l.r.st.nodeForgotten() }

// nodeAdded counts a node go-fuse took, and every trimEvery nodes drops
// sessions from the cache while it holds more than its budget.
func (st *store) nodeAdded() {
	if st.nodes.Add(1)%trimEvery == 0 {
		st.mu.Lock()
		st.trim(nil)
		st.mu.Unlock()
	}
}

// nodeForgotten counts a node go-fuse let go. go-fuse may report a node
// twice (RmChild of a node the kernel still holds): the count stays at
// zero or more.
func (st *store) nodeForgotten() {
	for {
		n := st.nodes.Load()
		if n <= 0 || st.nodes.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// Nodes is how many nodes the kernel holds of this mount, as counted (for
// tests that guard a cost).
func (r *Root) Nodes() int64 { return r.st.nodes.Load() }
