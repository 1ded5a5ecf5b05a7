package tree

import (
	"bytes"
	"sync"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions/schema"
)

// What pi 1.6's /tree selector shows of a session: which entries each of
// its five filter modes lists, in which order, at which indentation, with
// which connectors, and which of them are on the active path. The row text
// is a rendering (render.TreeText); the facts below are pi's rules.

// Filter is one of the /tree selector's filter modes.
type Filter uint8

// The filter modes, in the order pi cycles through them.
const (
	// FilterDefault hides settings and bookkeeping entries (label,
	// context_edit, custom, model_change, thinking_level_change,
	// session_info).
	FilterDefault Filter = iota
	// FilterNoTools is the default view without tool results.
	FilterNoTools
	// FilterUserOnly lists user messages only.
	FilterUserOnly
	// FilterLabeledOnly lists labelled entries only.
	FilterLabeledOnly
	// FilterAll lists every entry (but those every mode hides).
	FilterAll
)

// Filters are the filter modes, in pi's order.
var Filters = []Filter{FilterDefault, FilterNoTools, FilterUserOnly, FilterLabeledOnly, FilterAll}

var filterNames = [...]string{"default", "no-tools", "user-only", "labeled-only", "all"}

// String is the mode's name as pi spells it (its treeFilterMode setting).
func (f Filter) String() string {
	if int(f) < len(filterNames) {
		return filterNames[f]
	}
	return "unknown"
}

// FileName is the name of the session file that shows the mode: tree.txt
// for the default, tree-<mode>.txt for the others.
func (f Filter) FileName() string {
	if f == FilterDefault {
		return "tree.txt"
	}
	return "tree-" + f.String() + ".txt"
}

// Connector is what a row draws at its last indentation level.
type Connector uint8

// The connectors.
const (
	NoConnector Connector = iota
	Tee                   // "├─ ": a branch with siblings after it
	Elbow                 // "└─ ": the last branch
)

// Row is one row of the selector.
type Row struct {
	Node *Node
	// Indent is the number of three-column levels before the entry.
	Indent  int
	gutters *gutter // the vertical lines of the levels above, newest first
	// Active: the entry is on the path from the root to the active leaf
	// (pi marks it with "• ").
	Active bool
	// Connector is drawn at the last level (when Indent > 0).
	Connector Connector
	// Foldable: the row draws a connector and has rows under it, so pi's
	// selector could fold it there; it marks the connector "├⊟ " or
	// "└⊟ " (its isFoldable: a row with listed children that starts a
	// branch; a root, which folds too, draws no connector to mark).
	Foldable bool
}

// rowLayout is pi's layout state of a row, kept while the rows of a mode
// are laid out and not after (five modes' rows of a session are kept).
type rowLayout struct {
	indent       int32 // pi's indent, before the shift for several roots
	justBranched bool
	showConn     bool
	isLast       bool
	kids         *gutter // the gutters this row's children inherit
}

// gutter is a vertical line ("│") or its blank, at one level, inherited
// from an ancestor that drew a connector.
type gutter struct {
	pos  int
	show bool
	next *gutter // the gutter of an older ancestor
}

// AppendPrefix appends the row's indentation as pi's /tree selector
// draws it: a vertical line or blank for each level an ancestor's gutter
// covers, the connector at the last level, three columns per level, the
// connector's line a fold mark ("⊟") on a row that can fold (Foldable).
func (r *Row) AppendPrefix(dst []byte) []byte { return r.appendPrefix(dst, true) }

// AppendPlainPrefix is AppendPrefix without fold marks, as pi's exported
// page draws its tree. The two are the same length ("⊟" and "─" are three
// bytes each).
func (r *Row) AppendPlainPrefix(dst []byte) []byte { return r.appendPrefix(dst, false) }

func (r *Row) appendPrefix(dst []byte, marks bool) []byte {
	if r.Indent == 0 {
		return dst
	}
	// pi takes the first gutter at a level in its list, oldest first.
	var buf [64]int8
	var level []int8 // 0: none, 1: "│", 2: blank
	if r.Indent <= len(buf) {
		level = buf[:r.Indent]
	} else {
		level = make([]int8, r.Indent)
	}
	for g := r.gutters; g != nil; g = g.next {
		if g.pos < len(level) {
			level[g.pos] = 2
			if g.show {
				level[g.pos] = 1
			}
		}
	}
	for i, g := range level {
		switch {
		case g == 1:
			dst = append(dst, "│  "...)
		case g == 2:
			dst = append(dst, "   "...)
		case i == r.Indent-1 && r.Connector == Tee && marks && r.Foldable:
			dst = append(dst, "├⊟ "...)
		case i == r.Indent-1 && r.Connector == Elbow && marks && r.Foldable:
			dst = append(dst, "└⊟ "...)
		case i == r.Indent-1 && r.Connector == Tee:
			dst = append(dst, "├─ "...)
		case i == r.Indent-1 && r.Connector == Elbow:
			dst = append(dst, "└─ "...)
		default:
			dst = append(dst, "   "...)
		}
	}
	return dst
}

// Selector is what pi's /tree selector lists for one active leaf and one
// filter mode.
type Selector struct {
	Rows []Row
	t    *Tree
	// calls are the tool calls of the walk, shared by the selectors of
	// one walk.
	calls *toolCalls
	memo  memo
}

// memo holds what callers derive from a selector's rows (see Memo).
type memo struct {
	mu sync.Mutex
	m  map[any]any
}

// Memo is what make returned for key the first time it was asked for on
// this selector: what is derived from its rows is derived once while the
// tree keeps the selector (see Tree.Selector), by whichever view asks
// first. A caller asking while another makes it waits for it.
func (s *Selector) Memo(key any, make func() any) any {
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	if v, ok := s.memo.m[key]; ok {
		return v
	}
	v := make()
	if s.memo.m == nil {
		s.memo.m = map[any]any{}
	}
	s.memo.m[key] = v
	return v
}

// toolCalls are the tool calls that tool-result rows show, looked up
// among the assistant messages in the selector's walk order. The walk
// does not depend on the filter mode, so every mode's selector for one
// active leaf shares them.
type toolCalls struct {
	assistants []*Node
	once       sync.Once
	byID       map[string][]byte
}

// Tree is the tree the selector lists.
func (s *Selector) Tree() *Tree { return s.t }

// ToolCall returns the toolCall block that a toolResult's toolCallId
// (raw JSON) names, as pi's selector finds it: among the assistant
// messages of every branch, the last in its walk order; nil when none. It
// may be called from several goroutines.
func (s *Selector) ToolCall(id []byte) []byte {
	c := s.calls
	c.once.Do(func() {
		c.byID = map[string][]byte{}
		for _, n := range c.assistants {
			jsjson.Elements(n.MsgContent, func(b []byte) bool {
				if jsjson.KindOf(b) != jsjson.Object {
					return true
				}
				if typ, key := typeAnd(b, "id"); key != nil && isString(typ, "toolCall") {
					c.byID[string(callKey(key))] = b
				}
				return true
			})
		}
	})
	return c.byID[string(callKey(id))]
}

// callKey is the map key of a tool call id: the value as JSON.stringify
// writes it, which for most ids is the raw JSON.
func callKey(id []byte) []byte {
	if jsjson.KindOf(id) == jsjson.String && bytes.IndexByte(id, '\\') < 0 {
		return id
	}
	return jsjson.AppendCanonical(nil, id)
}

// FileLeafID is the id of the file's last entry ("" when it has none):
// pi's getLeafId, the active leaf of its /tree. After a leaf move by pifs it
// is the move's record, which sits under the chosen entry.
func (t *Tree) FileLeafID() string {
	if e := t.Leaf(); e != nil {
		return e.ID
	}
	return ""
}

// LabelValue is an entry's label as its label entry holds it (raw JSON),
// for showing it as pi does (String(label)).
func (t *Tree) LabelValue(id string) ([]byte, bool) {
	l, ok := t.labels[id]
	if !ok {
		return nil, false
	}
	if l.seq > 0 && l.seq <= len(t.entries) {
		if v := t.entries[l.seq-1].Get("label"); v != nil {
			return v, true
		}
	}
	return jsjson.Quote(nil, l.Text), true
}

// Selector lists the tree as pi's /tree selector does with leaf as the
// active leaf (pi's is FileLeafID) and filter mode f:
//
//   - the order is a depth-first walk from the roots in which the branch
//     holding the active leaf comes first among its siblings (and its
//     root first among the roots);
//   - usage entries are never listed, nor assistant messages without text
//     that did not end in an error or abort (tool-call-only turns), unless
//     one is the active leaf;
//   - the mode then keeps what it shows (see Filter);
//   - an entry hangs under its nearest listed ancestor: the indentation
//     grows by one where an entry has several listed children and once
//     more for the first entry after such a fork, and stays flat along a
//     chain; several listed roots hang under an invisible common root.
func (t *Tree) Selector(leaf string, f Filter) *Selector {
	c := &t.selectors
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.selector(t, leaf, f)
	c.w.dropScratch()
	return s
}

// Selectors are the selectors of every filter mode for one active leaf,
// by mode (Filters' order): the walk, which entries any mode may list and
// the tool calls are worked out once for the five.
func (t *Tree) Selectors(leaf string) []*Selector {
	c := &t.selectors
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Selector, len(Filters))
	for _, f := range Filters {
		out[f] = c.selector(t, leaf, f)
	}
	c.w.dropScratch()
	return out
}

// selectors keeps the walk of the last active leaf asked for, and the
// selectors made of it, while the tree stays as it was: the six /tree
// views and the session's page ask for the same leaf's, and share its
// walk, its tool calls and its rows.
type selectors struct {
	mu       sync.Mutex
	leaf     string
	entries  int // len(t.entries) when the walk was made
	reshaped int // t.reshaped then
	w        *selectorWalk
	by       [len(filterNames)]*Selector // by Filter
}

// selector is the selector of leaf and f, made when the walk kept is of
// another leaf or of the tree as it was before a change. c.mu is held.
func (c *selectors) selector(t *Tree, leaf string, f Filter) *Selector {
	if c.w == nil || c.leaf != leaf || c.entries != len(t.entries) || c.reshaped != t.reshaped {
		c.leaf, c.entries, c.reshaped, c.w = leaf, len(t.entries), t.reshaped, t.walk(leaf)
		c.by = [len(filterNames)]*Selector{}
	}
	if c.by[f] == nil {
		c.by[f] = c.w.selector(f)
	}
	return c.by[f]
}

// selectorWalk is the selector's walk of the tree for one active leaf,
// which no filter mode changes: every node in walk order, where its
// parent is in that order, and whether any mode may list it.
type selectorWalk struct {
	t      *Tree
	onPath []bool
	order  []*Node
	up     []int32 // the place in order of each node's parent, -1 for a root
	shown  []bool  // any mode may list the node (see listed)
	calls  *toolCalls

	// Scratch of the modes' selectors, made one after the other.
	row, parent, kids, last []int32
	layout                  []rowLayout
}

// dropScratch lets the scratch go once the modes asked for are made: the
// walk is kept with the tree, its scratch need not be.
func (w *selectorWalk) dropScratch() {
	w.row, w.parent, w.kids, w.last, w.layout = nil, nil, nil, nil, nil
}

// scratch returns s resliced to n, grown if it is shorter.
func scratch[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (t *Tree) walk(leaf string) *selectorWalk {
	size := len(t.byID)
	w := &selectorWalk{t: t, onPath: t.activePath(leaf), calls: &toolCalls{},
		order: make([]*Node, 0, size), up: make([]int32, 0, size), shown: make([]bool, 0, size)}
	type item struct {
		n  *Node
		up int32
	}
	stack := make([]item, 0, 64)
	pushAll := func(list []*Node, up int32) {
		// Reversed, so that they pop in order; the active one pops first.
		var first *Node
		for i := len(list) - 1; i >= 0; i-- {
			if n := list[i]; first == nil && w.active(n) {
				first = n
			} else {
				stack = append(stack, item{n, up})
			}
		}
		if first != nil {
			stack = append(stack, item{first, up})
		}
	}
	pushAll(t.roots, -1)
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		if n.Type == schema.TypeMessage && n.Role == schema.RoleAssistant {
			w.calls.assistants = append(w.calls.assistants, n)
		}
		w.order = append(w.order, n)
		w.up = append(w.up, it.up)
		w.shown = append(w.shown, t.listed(n, leaf))
		pushAll(n.Children, int32(len(w.order)-1))
	}
	return w
}

// active tells whether n is on the path to the active leaf.
func (w *selectorWalk) active(n *Node) bool { return n.Seq < len(w.onPath) && w.onPath[n.Seq] }

// selector is the walk's selector for filter mode f.
func (w *selectorWalk) selector(f Filter) *Selector {
	s := &Selector{t: w.t, calls: w.calls}
	rows := 0
	for i, n := range w.order {
		if w.shown[i] && w.t.Keeps(n, f) {
			rows++
		}
	}
	s.Rows = make([]Row, 0, rows)
	// row is, for each node in walk order, the row of the node or of its
	// nearest listed ancestor (-1 for none); parent, for each row, that of
	// its nearest listed ancestor.
	w.row = scratch(w.row, len(w.order))
	w.parent = scratch(w.parent, rows)[:0]
	for i, n := range w.order {
		r := int32(-1)
		if up := w.up[i]; up >= 0 {
			r = w.row[up]
		}
		if w.shown[i] && w.t.Keeps(n, f) {
			s.Rows = append(s.Rows, Row{Node: n, Active: w.active(n)})
			w.parent = append(w.parent, r)
			r = int32(len(s.Rows) - 1)
		}
		w.row[i] = r
	}
	w.lay(s.Rows)
	return s
}

// activePath marks the nodes from the root to leaf, by their Seq; nothing
// when leaf is not reachable from a root (pi's walk then stops at the
// leaf itself, which it does not list).
func (t *Tree) activePath(leaf string) []bool {
	n := t.byID[leaf]
	if leaf == "" || n == nil {
		return nil
	}
	var chain []*Node
	defer func() { t.walked(len(chain)) }()
	for ; n != nil; n = n.Parent {
		if len(chain) > len(t.byID) {
			return nil // a parent cycle
		}
		chain = append(chain, n)
	}
	on := make([]bool, t.entries[len(t.entries)-1].Seq+1)
	for _, n := range chain {
		on[n.Seq] = true
	}
	return on
}

// listed reports whether any mode may list n, leaf being the active leaf;
// a mode lists it when it also keeps it (see Keeps).
func (t *Tree) listed(n *Node, leaf string) bool {
	if n.Type == "usage" {
		return false
	}
	if n.Type == schema.TypeMessage && n.Role == schema.RoleAssistant && n.ID != leaf {
		if !hasText(n.MsgContent) && !endedBadly(jsjson.Get(n.Msg, "stopReason")) {
			return false
		}
	}
	return true
}

// Keeps reports whether mode f keeps n among the entries that every mode
// may list (FilterAll's rows): the part of a mode's rule that is its own.
func (t *Tree) Keeps(n *Node, f Filter) bool {
	switch f {
	case FilterUserOnly:
		return n.Type == schema.TypeMessage && n.Role == schema.RoleUser
	case FilterNoTools:
		return !isSetting(n.Type) && !(n.Type == schema.TypeMessage && n.Role == schema.RoleToolResult)
	case FilterLabeledOnly:
		_, ok := t.labels[n.ID]
		return ok
	case FilterAll:
		return true
	}
	return !isSetting(n.Type)
}

// isSetting: the entry types the default view hides as bookkeeping.
func isSetting(typ string) bool {
	switch typ {
	case schema.TypeLabel, schema.TypeContextEdit, schema.TypeCustom, schema.TypeModelChange, schema.TypeThinkingLevelChange, schema.TypeSessionInfo:
		return true
	}
	return false
}

// hasText reports whether message content has text that is not all white
// space: a string, or a text block with such text. (pi throws on a text
// that is not a string; pifs takes it as JavaScript's String() would.)
func hasText(content []byte) bool {
	switch jsjson.KindOf(content) {
	case jsjson.String:
		return !blank(content)
	case jsjson.Array:
		found := false
		jsjson.Elements(content, func(b []byte) bool {
			text, ok := BlockText(b)
			if !ok {
				return true
			}
			switch {
			case !jsjson.Truthy(text):
			case jsjson.KindOf(text) == jsjson.String:
				found = !blank(text)
			default:
				found = true // a truthy non-string prints as something
			}
			return !found
		})
		return found
	}
	return false
}

// blank reports whether a raw JSON string holds only white space (as
// String.prototype.trim sees it), looking no further than its first other
// character.
func blank(raw []byte) bool {
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); {
		if body[i] == ' ' {
			i++
			continue
		}
		r, next, ok := jsjson.DecodeRune(body, i)
		if !ok || jsjson.Trim(string(r)) != "" { // a lone surrogate is U+FFFD, not space
			return false
		}
		i = next
	}
	return true
}

// endedBadly: an assistant stopReason other than a normal stop or a tool
// call (an error or an abort), which the selector always shows.
func endedBadly(stop []byte) bool {
	if !jsjson.Truthy(stop) {
		return false
	}
	if jsjson.KindOf(stop) == jsjson.String {
		v, _ := jsjson.Unquote(stop)
		return v != "stop" && v != "toolUse"
	}
	return true
}

// lay computes each row's indentation, connector and gutters from its
// place among the listed rows (w.parent), as pi's
// recalculateVisualStructure does. Rows are in depth-first order, so a
// row's parent is laid out before it.
func (w *selectorWalk) lay(rows []Row) {
	parent := w.parent
	kids := scratch(w.kids, len(rows))
	last := scratch(w.last, len(rows))
	lay := scratch(w.layout, len(rows))
	w.kids, w.last, w.layout = kids, last, lay
	clear(kids)
	defer clear(lay) // the gutters are the rows' to keep, not the scratch's
	roots, lastRoot := 0, int32(-1)
	for i := range rows {
		if p := parent[i]; p < 0 {
			roots++
			lastRoot = int32(i)
		} else {
			kids[p]++
			last[p] = int32(i)
		}
	}
	several := roots > 1
	display := func(indent int32) int {
		if several {
			return int(max(0, indent-1))
		}
		return int(indent)
	}
	for i := range rows {
		r, l := &rows[i], &lay[i]
		virtualRoot := false
		if p := parent[i]; p < 0 {
			l.indent = 0
			if several {
				l.indent = 1
			}
			l.justBranched, l.showConn, virtualRoot = several, several, several
			l.isLast = int32(i) == lastRoot
			r.gutters = nil
		} else {
			pl := &lay[p]
			fork := kids[p] > 1
			l.indent = pl.indent
			if fork || (pl.justBranched && pl.indent > 0) {
				l.indent++
			}
			l.justBranched, l.showConn = fork, fork
			l.isLast = int32(i) == last[p]
			r.gutters = pl.kids
		}
		l.kids = r.gutters
		if l.showConn && !virtualRoot {
			l.kids = &gutter{pos: max(0, display(l.indent)-1), show: !l.isLast, next: r.gutters}
			r.Connector = Tee
			if l.isLast {
				r.Connector = Elbow
			}
			r.Foldable = kids[i] > 0
		}
		r.Indent = display(l.indent)
	}
}

// isString reports whether a raw JSON value is the string s.
func isString(v []byte, s string) bool {
	return jsjson.KindOf(v) == jsjson.String && jsjson.KeyIs(v, s)
}

// BlockText is the raw text of a content block whose type is "text" (nil
// when it has none); ok is false for any other block. It reads the block
// once, as texts are long.
func BlockText(block []byte) (text []byte, ok bool) {
	typ, text := typeAnd(block, "text")
	return text, isString(typ, "text")
}

// typeAnd is a content block's type and its member key (raw JSON, nil when
// missing), the last of each as JSON.parse keeps it, read in one pass.
func typeAnd(block []byte, key string) (typ, v []byte) {
	jsjson.Members(block, func(k, val []byte) bool {
		if jsjson.KeyIs(k, "type") {
			typ = val
		} else if jsjson.KeyIs(k, key) {
			v = val
		}
		return true
	})
	return typ, v
}
