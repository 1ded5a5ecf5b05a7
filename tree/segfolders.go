package tree

// The folders of a tree of segments (the mount's tree/): one folder per
// segment, named by its first entry, holding its entries and the folders
// of the segments that start where it forks.

// SegmentInfo is one folder of the tree of segments: its segment's nodes,
// the position of the first on its root path, and the first nodes of the
// segments that start below it.
type SegmentInfo struct {
	Nodes []*Node
	Pos   int
	Next  []*Node
}

// SegmentTable is the tree of segments (Segments) as folders, by the id
// of each segment's first entry; "" is the top, whose Next are the roots.
func (t *Tree) SegmentTable() map[string]*SegmentInfo {
	m := map[string]*SegmentInfo{}
	top := &SegmentInfo{}
	m[""] = top
	type job struct {
		segs []*Segment
		pos  int
		into *SegmentInfo
	}
	stack := []job{{t.Segments(), 1, top}}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, sg := range j.segs {
			info := &SegmentInfo{Nodes: sg.Nodes, Pos: j.pos}
			j.into.Next = append(j.into.Next, sg.Nodes[0])
			m[sg.ID()] = info
			stack = append(stack, job{sg.Children, j.pos + len(sg.Nodes), info})
		}
	}
	return m
}

// SegmentFolder is the folder of the tree of segments that holds x's
// entry, as the ids of the segments from the top down to it, and x's
// position on its root path. ok is false when x shows in no folder (a
// leaf record without children) or the walk up meets a parent cycle.
func (t *Tree) SegmentFolder(x *Node) (firsts []string, pos int, ok bool) {
	if x.IsLeafRecord() && len(x.Children) == 0 {
		return nil, 0, false
	}
	limit := t.Len() + 1
	steps := 0
	for n := x; n != nil; n = n.Parent {
		// n goes up to the first entry of its segment.
		for n.Parent != nil && len(n.Parent.Visible()) == 1 {
			n = n.Parent
			if steps++; steps > limit {
				return nil, 0, false
			}
		}
		firsts = append(firsts, n.ID)
		if n.Parent != nil {
			if steps++; steps > limit {
				return nil, 0, false
			}
		}
	}
	for i, j := 0, len(firsts)-1; i < j; i, j = i+1, j-1 {
		firsts[i], firsts[j] = firsts[j], firsts[i]
	}
	return firsts, steps + 1, true
}

// VisibleBefore is how many children of x showed in the tree of segments
// before the entries from the file offset from on were added: those
// written before, but leaf records that had no children then.
func (x *Node) VisibleBefore(from int64) int {
	n := 0
	for _, c := range x.Children {
		if c.Offset >= from {
			continue
		}
		if c.IsLeafRecord() && !hasChildBefore(c, from) {
			continue
		}
		n++
	}
	return n
}

func hasChildBefore(x *Node, from int64) bool {
	for _, c := range x.Children {
		if c.Offset < from {
			return true
		}
	}
	return false
}
