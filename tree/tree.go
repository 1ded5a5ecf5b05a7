// Package tree owns one session's tree as pi sees it: entries by id, the
// children of each (in pi's getTree order), roots, tips, the path to any
// entry, the leaf, labels, the name, branch segments, the model context at any
// leaf, and the summaries pi's session list and /session show.
//
// A Tree is built from a sessions.Log and grows with it. It never hangs on
// a damaged file: a parent cycle, which makes pi loop forever, only hides the
// entries on it from the walk down from the roots.
package tree

import (
	"math"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// LeafRecordType is the customType of the custom entry pifs appends to record
// a leaf move. It adds nothing to the context; its parentId is the chosen
// entry (null for "before the first entry"), so pi resumes there.
const LeafRecordType = "pifs.leaf"

// Node is an entry placed in the tree.
type Node struct {
	*sessions.Entry
	Parent   *Node
	Children []*Node
	time     float64 // new Date(timestamp).getTime(), NaN when invalid
}

// IsLeafRecord reports whether the node is a pifs leaf-move record.
func (n *Node) IsLeafRecord() bool { return isLeafRecord(n.Entry) }

func isLeafRecord(e *sessions.Entry) bool {
	if e.Type != schema.TypeCustom {
		return false
	}
	ct, _ := e.Str("customType")
	return ct == LeafRecordType
}

// Label is an entry's label and when it was set.
type Label struct {
	Text      string
	Timestamp []byte // raw
	// seq is the place in the file of the entry that set it, so that of
	// two entries with one text the one labelled last is known.
	seq int
}

// Tree is one session's tree. It is not safe for concurrent use.
type Tree struct {
	Header  *sessions.Header
	entries []*sessions.Entry
	byID    map[string]*Node
	roots   []*Node
	// waiting holds orphans by the parent id they name, in case that parent
	// appears later in the file.
	waiting map[string][]*Node
	labels  map[string]Label
	// labelOrder is the order in which labels were set, as pi's Map keeps it.
	labelOrder []string
	name       string
	leafCtx    leafContext
	// counter, when set, counts the parent links walks up the tree
	// follow (see CountSteps).
	counter *atomic.Int64
	// exported holds what exports learnt of each entry, by its Seq (see
	// export.go); a length of 0 is not learnt yet.
	exported []exportLine
	// reshaped is 1 + the Seq of the last entry that changed the tree
	// other than by adding a node (see Reshaped); 0 when none did.
	reshaped int
	// selectors are the /tree selectors of the last leaf asked for.
	selectors selectors
	// counts are /session's message counts (see Counts).
	counts countsCache
}

// CountSteps adds the parent links this tree's walks up the tree follow
// from now on (a path to the root, an entry's ancestor, the active path of
// /tree) to c, so that a holder of many trees, which come and go, counts
// them all; a test that guards the cost of lookups counts them.
func (t *Tree) CountSteps(c *atomic.Int64) { t.counter = c }

// walked counts n steps up the tree.
func (t *Tree) walked(n int) {
	if t.counter != nil {
		t.counter.Add(int64(n))
	}
}

// New builds the tree of a parsed log.
func New(l *sessions.Log) *Tree {
	t := &Tree{
		Header:  l.Header,
		entries: make([]*sessions.Entry, 0, len(l.Entries)),
		byID:    make(map[string]*Node, len(l.Entries)),
		waiting: map[string][]*Node{},
		labels:  map[string]Label{},
	}
	// The nodes of the entries there are now come from one allocation.
	t.addAll(l.Entries, make([]Node, len(l.Entries)))
	return t
}

// Add places entries appended to the file.
func (t *Tree) Add(entries ...*sessions.Entry) {
	t.addAll(entries, nil)
}

func (t *Tree) addAll(entries []*sessions.Entry, nodes []Node) {
	for i, e := range entries {
		var n *Node
		if nodes != nil {
			n = &nodes[i]
		}
		t.add(e, n)
	}
}

// add places e, in n when it is not nil.
func (t *Tree) add(e *sessions.Entry, n *Node) {
	t.entries = append(t.entries, e)
	switch e.Type {
	case schema.TypeLabel:
		if target, ok := e.Str("targetId"); ok {
			if lab := e.Get("label"); jsjson.Truthy(lab) {
				if _, ok := t.labels[target]; !ok {
					t.labelOrder = append(t.labelOrder, target)
				}
				t.labels[target] = Label{Text: labelText(lab), Timestamp: e.Timestamp, seq: len(t.entries)}
			} else if _, ok := t.labels[target]; ok {
				delete(t.labels, target)
				for i, id := range t.labelOrder {
					if id == target {
						t.labelOrder = append(t.labelOrder[:i:i], t.labelOrder[i+1:]...)
						break
					}
				}
			}
		}
	case schema.TypeSessionInfo:
		name, _ := e.Str("name")
		t.name = jsjson.Trim(name)
	}
	if e.ID == "" {
		return
	}
	if n == nil {
		n = new(Node)
	}
	*n = Node{Entry: e, time: e.Time}
	if old := t.byID[e.ID]; old != nil {
		t.leafCtx = leafContext{} // paths through the old entry change
		t.reshaped = e.Seq + 1
		// A duplicate id: the later entry wins and takes over the children.
		t.detach(old)
		for _, c := range old.Children {
			c.Parent = n
		}
		n.Children = old.Children
		old.Children = nil
		sortChildren(n.Children)
	}
	t.byID[e.ID] = n
	if e.ParentID == "" || e.ParentID == e.ID {
		t.roots = append(t.roots, n)
	} else if p := t.byID[e.ParentID]; p != nil {
		n.Parent = p
		insertChild(p, n)
	} else {
		t.roots = append(t.roots, n)
		t.waiting[e.ParentID] = append(t.waiting[e.ParentID], n)
	}
	if len(t.waiting) == 0 {
		return
	}
	if orphans := t.waiting[e.ID]; len(orphans) > 0 {
		t.leafCtx = leafContext{} // paths through the orphans grow
		t.reshaped = e.Seq + 1
		delete(t.waiting, e.ID)
		for _, o := range orphans {
			if t.byID[o.ID] != o || o.Parent != nil {
				continue
			}
			t.roots = remove(t.roots, o)
			o.Parent = n
			n.Children = append(n.Children, o)
		}
		sortChildren(n.Children)
	}
}

func labelText(v []byte) string {
	if s, err := jsjson.Unquote(v); err == nil && jsjson.KindOf(v) == jsjson.String {
		return s
	}
	return string(jsjson.AppendCanonical(nil, v))
}

func (t *Tree) detach(n *Node) {
	if n.Parent != nil {
		n.Parent.Children = remove(n.Parent.Children, n)
		n.Parent = nil
		return
	}
	t.roots = remove(t.roots, n)
	if n.ParentID != "" {
		t.waiting[n.ParentID] = remove(t.waiting[n.ParentID], n)
	}
}

func remove(list []*Node, n *Node) []*Node {
	for i, x := range list {
		if x == n {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// less orders siblings as pi's getTree does: by timestamp, ties (and
// unreadable timestamps) in file order.
func less(a, b *Node) bool {
	if a.time < b.time {
		return true
	}
	if a.time > b.time {
		return false
	}
	return a.Seq < b.Seq
}

func sortChildren(c []*Node) {
	sort.SliceStable(c, func(i, j int) bool {
		if math.IsNaN(c[i].time) || math.IsNaN(c[j].time) {
			return c[i].Seq < c[j].Seq
		}
		return less(c[i], c[j])
	})
}

func insertChild(p, n *Node) {
	i := len(p.Children)
	if !math.IsNaN(n.time) {
		for i > 0 && !math.IsNaN(p.Children[i-1].time) && less(n, p.Children[i-1]) {
			i--
		}
	}
	p.Children = append(p.Children, nil)
	copy(p.Children[i+1:], p.Children[i:])
	p.Children[i] = n
}

// Reshaped tells whether an entry from seq on changed the tree other than
// by adding a node below its parent or as a root: an id that was already
// there (the later entry takes the earlier one's place and children), or
// the parent of entries that named it before it came (they move below it).
func (t *Tree) Reshaped(seq int) bool { return t.reshaped > seq }

// Entries returns every entry in file order (header excluded).
func (t *Tree) Entries() []*sessions.Entry { return t.entries }

// Len is the number of entries with an id (pi's getEntryCount).
func (t *Tree) Len() int { return len(t.byID) }

// Node returns the entry with the given id (the last one in the file).
func (t *Tree) Node(id string) *Node { return t.byID[id] }

// Leaf returns the file's last entry, which is where pi resumes (nil when
// the session has no entries).
func (t *Tree) Leaf() *sessions.Entry {
	if len(t.entries) == 0 {
		return nil
	}
	return t.entries[len(t.entries)-1]
}

// LeafID is the id of the entry the session stands at: the leaf's, or for a
// pifs leaf record, the entry it moved to ("" when there is none).
func (t *Tree) LeafID() string {
	leaf := t.Leaf()
	if leaf == nil {
		return ""
	}
	if isLeafRecord(leaf) {
		return leaf.ParentID
	}
	return leaf.ID
}

// LabelOrder returns the labelled ids in the order of pi's label map: the
// order labels were first set (an entry relabelled keeps its place; one
// cleared and labelled again goes last). pi's clone writes labels in it.
func (t *Tree) LabelOrder() []string { return t.labelOrder }

// LabelsNewestFirst returns the labelled ids, the one labelled last first.
func (t *Tree) LabelsNewestFirst() []string {
	ids := slices.Clone(t.labelOrder)
	slices.SortFunc(ids, func(a, b string) int { return t.labels[b].seq - t.labels[a].seq })
	return ids
}

// Label returns an entry's label.
func (t *Tree) Label(id string) (Label, bool) {
	l, ok := t.labels[id]
	return l, ok
}

// Name is the session's name: the last session_info entry's, trimmed ("" when
// unnamed or cleared).
func (t *Tree) Name() string { return t.name }

// Visible returns the children that are shown as branches: all but leaf
// records that have no children of their own.
func (n *Node) Visible() []*Node {
	for _, c := range n.Children {
		if c.IsLeafRecord() && len(c.Children) == 0 {
			out := make([]*Node, 0, len(n.Children))
			for _, c := range n.Children {
				if !(c.IsLeafRecord() && len(c.Children) == 0) {
					out = append(out, c)
				}
			}
			return out
		}
	}
	return n.Children
}

// Walk visits every node reachable from the roots in depth-first preorder,
// without recursion (sessions can be deep). Nodes on a parent cycle are not
// reachable, as in pi's getTree.
func (t *Tree) Walk(fn func(n *Node) bool) {
	stack := make([]*Node, 0, 64)
	for i := len(t.roots) - 1; i >= 0; i-- {
		stack = append(stack, t.roots[i])
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(n) {
			return
		}
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
}

// Tips returns the entries without children, in depth-first order. Leaf
// records are never tips: the entry they point at is.
func (t *Tree) Tips() []*Node {
	var tips []*Node
	t.Walk(func(n *Node) bool {
		if !n.IsLeafRecord() && len(n.Visible()) == 0 {
			tips = append(tips, n)
		}
		return true
	})
	return tips
}

// PathTo returns the entries from the root to the entry with the given id, as
// pi's getBranch does. A parent cycle ends the walk before it repeats.
func (t *Tree) PathTo(id string) []*sessions.Entry {
	n := t.byID[id]
	if n == nil {
		return nil
	}
	return t.pathFrom(n.Entry)
}

// LeafPath returns the path from the root to the leaf (the file's last
// entry, which may have no id): the entries pi resumes with.
func (t *Tree) LeafPath() []*sessions.Entry {
	leaf := t.Leaf()
	if leaf == nil {
		return nil
	}
	return t.pathFrom(leaf)
}

// pathFrom walks up from e (which may have no id) to its root.
func (t *Tree) pathFrom(e *sessions.Entry) []*sessions.Entry {
	// Start from e's node; an entry that is not a node (no id) starts at
	// the node its parentId names.
	n := t.byID[e.ID]
	path := make([]*sessions.Entry, 0, 64)
	if e.ID == "" || n == nil || n.Entry != e {
		path = append(path, e)
		n = nil
		if e.ParentID != "" && e.ParentID != e.ID {
			n = t.byID[e.ParentID]
		}
	}
	// Parent pointers are the parentId links, resolved. A walk longer than
	// the number of nodes has met a cycle; only then is it worth
	// remembering what was seen.
	limit := len(t.byID) + 1
	steps := 0
	for ; n != nil; n = n.Parent {
		steps++
		if len(path) > limit {
			seen := make(map[*sessions.Entry]bool, len(path))
			for _, p := range path {
				if seen[p] {
					break
				}
				seen[p] = true
			}
			path = path[:len(seen)]
			break
		}
		path = append(path, n.Entry)
	}
	t.walked(steps)
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// Segment is a run of entries in which each but the last has exactly one
// (visible) child; Children are the segments that start where it forks.
type Segment struct {
	Nodes    []*Node
	Children []*Segment
}

// ID names the segment by its first entry.
func (s *Segment) ID() string { return s.Nodes[0].ID }

// Segments returns the tree as nested segments, one top-level segment per
// root (leaf records without children left out).
func (t *Tree) Segments() []*Segment {
	var out []*Segment
	type job struct {
		start *Node
		dst   *[]*Segment
	}
	var stack []job
	for i := len(t.roots) - 1; i >= 0; i-- {
		if r := t.roots[i]; !(r.IsLeafRecord() && len(r.Children) == 0) {
			stack = append(stack, job{r, &out})
		}
	}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		seg := &Segment{}
		n := j.start
		for {
			seg.Nodes = append(seg.Nodes, n)
			vis := n.Visible()
			if len(vis) != 1 {
				for i := len(vis) - 1; i >= 0; i-- {
					stack = append(stack, job{vis[i], &seg.Children})
				}
				break
			}
			n = vis[0]
		}
		*j.dst = append(*j.dst, seg)
	}
	// Children were pushed in reverse; each dst got them in order because
	// the stack pops them first-to-last.
	return out
}
