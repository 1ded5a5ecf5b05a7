package cache

// The nodes the kernel holds count against the cache's budget. A walk
// (find, grep -r, tar) makes the kernel look up every name it passes,
// and pifs keeps a node for each until the kernel forgets it: after
// find over 10,000 sessions that is 1.5 million nodes, more than the
// parsed sessions themselves, and the collector would run without pause,
// a core's worth, at every allocation. Counting them lets the cache drop
// the least recently used sessions as nodes grow; a session dropped is
// told to the views (Options.Evicted), which have the kernel forget the
// names below its folders, and so their nodes.

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
func (c *Cache) ManyNames(n int) bool {
	return (c.nodes.Load()+int64(n))*nodeBytes > c.nodeShare()
}

// IndexFileBytes is about what the index holds for a session file (its
// header, names and facts): measured, 1.2 KB for each of 100,000 small
// sessions.
const IndexFileBytes = 1280

// nodeShare is the part of the budget the nodes the kernel holds may
// take: half of it, less what the index holds, which the budget does not
// let go of (it may be nothing: then every listing gives names alone) and
// half of what the process's memory asks the cache to give up.
func (c *Cache) nodeShare() int64 {
	return c.budget/2 - c.squeeze.Load()/2 - c.x.Len()*IndexFileBytes
}

// The session folders listed, oldest first, are where a walk left the
// nodes it made: when the nodes pass their share of the budget, the kernel
// is told to forget the names held in the oldest of them (Options.Shed), a
// few folders for every trimEvery nodes added, so that the nodes follow
// the budget whatever was walked (find over 100,000 sessions stats some
// 800,000 folders in them). A folder stays valid; a path into it is looked
// up again.

// folderNodes is about how many nodes a walk leaves in a session folder.
const folderNodes = 8

// FolderListed records that a session folder was listed.
func (c *Cache) FolderListed(project, name string) {
	c.listedMu.Lock()
	defer c.listedMu.Unlock()
	// At most one entry a node of the share: a folder listed again and
	// again takes several, and the oldest go first.
	if limit := int(c.budget / 2 / nodeBytes); len(c.listed) >= limit {
		c.listed = append(c.listed[:0], c.listed[len(c.listed)/2:]...)
	}
	c.listed = append(c.listed, Folder{project, name})
}

// shed tells the kernel to forget the names held in the session folders
// listed longest ago, while the nodes are past their share. The session
// a walk is in is kept for later: forgetting the names of a folder the
// walk is inside leaves the names it looks up there after that out of
// reach of any later notice, held by the kernel until memory runs short
// (grep -r of a store at a small cache piled up 100,000 such nodes).
func (c *Cache) shed() {
	if c.nodes.Load()*nodeBytes <= c.nodeShare() {
		return
	}
	c.mu.Lock()
	var walking Folder
	if w := c.walking; w != nil {
		walking = Folder{w.Project, w.Name}
	}
	c.mu.Unlock()
	c.listedMu.Lock()
	n := min(len(c.listed), trimEvery/folderNodes)
	old := make([]Folder, 0, n)
	var kept []Folder
	for _, f := range c.listed[:n] {
		if f == walking {
			kept = append(kept, f)
		} else {
			old = append(old, f)
		}
	}
	c.listed = append(c.listed[n:], kept...)
	c.listedMu.Unlock()
	if len(old) > 0 && c.o.Shed != nil {
		c.o.Shed(old)
	}
}

// trimEvery is how many new nodes go by between checks of the budget.
const trimEvery = 1024

// NodeAdded counts a node the kernel holds, and every trimEvery nodes
// drops sessions from the cache while it holds more than its budget.
func (c *Cache) NodeAdded() {
	if c.nodes.Add(1)%trimEvery == 0 {
		c.mu.Lock()
		c.trim(nil)
		c.mu.Unlock()
		c.shed()
	}
}

// NodeForgotten counts a node the kernel let go. It may be reported twice
// (a node dropped while the kernel still holds it): the count stays at
// zero or more.
func (c *Cache) NodeForgotten() {
	for {
		n := c.nodes.Load()
		if n <= 0 || c.nodes.CompareAndSwap(n, n-1) {
			return
		}
	}
}
