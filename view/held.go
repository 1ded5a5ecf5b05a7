package view

// The nodes the kernel holds count against the cache's budget. A walk
// (find, grep -r, tar) makes the kernel look up every name it passes,
// and pifs keeps a node for each until the kernel forgets it: after
// find over 10,000 sessions that is 1.5 million nodes, more than the
// parsed sessions themselves, and the collector would run without pause,
// a core's worth, at every allocation. Counting them lets the cache drop
// the least recently used sessions as nodes grow; dropping a session has
// the kernel forget the names below its entries/, branches/ and tree/ (see
// Take), and so their nodes.

// nodeBytes is about what one node costs: the FUSE server's inode with
// its maps of children and parents, pifs's node, and the kernel's id for
// it.
const nodeBytes = 512

// ManyNames tells whether a listing of n names has more than the kernel
// could be handed a node for within the budget, with the nodes it holds
// already: such a listing gives its names alone (READDIR's answer to
// READDIRPLUS), so that `ls` of a folder of two million entries costs its
// names, not two million nodes, and `find` over 100,000 sessions stops
// adding nodes once they fill their share. A name is looked up, and its
// node made, when something asks for it.
func (v *View) ManyNames(n int) bool {
	return (v.st.nodes.Load()+int64(n))*nodeBytes > v.st.budget/2
}

// trimEvery is how many new nodes go by between checks of the budget.
const trimEvery = 1024

// NodeAdded counts a node the kernel holds, and every trimEvery nodes
// drops sessions from the cache while it holds more than its budget.
func (v *View) NodeAdded() { v.st.nodeAdded() }

// NodeForgotten counts a node the kernel let go.
func (v *View) NodeForgotten() { v.st.nodeForgotten() }

func (st *store) nodeAdded() {
	if st.nodes.Add(1)%trimEvery == 0 {
		st.mu.Lock()
		st.trim(nil)
		st.mu.Unlock()
	}
}

// nodeForgotten counts a node let go. It may be reported twice (a node
// dropped while the kernel still holds it): the count stays at zero or
// more.
func (st *store) nodeForgotten() {
	for {
		n := st.nodes.Load()
		if n <= 0 || st.nodes.CompareAndSwap(n, n-1) {
			return
		}
	}
}
