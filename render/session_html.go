package render

import (
	"sort"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// The session folder's transcript.html is the whole session in one page,
// what pi's own exported page shows, without a script:
//
//   - a head with the whole session's stats as pi's page computes them
//     (messages by role, tool calls, tokens, cost, models), three toggles
//     (thinking, tool output, messages hidden in pi's terminal) and a link
//     that saves the session's JSONL (session.jsonl beside the page);
//   - every entry once, in nested segments (a segment is a run of entries
//     each the only child of the one before; its children follow in a
//     "kids" block), the branch to the leaf first, so that it reads
//     through in order;
//   - the path's totals;
//   - pi's /tree of the session as a sidebar, a row per entry as pi's
//     selector lists it with "all" as its filter, each a link to its
//     entry, and five radio buttons that filter the rows as pi's five
//     filters do.
//
// With CSS, the page shows one branch at a time, as pi's does: at first
// the path to the session's leaf; when an entry is the target of the
// address (a click on its row, on any link to it), the path through it
// to the newest leaf under it (at each fork the child pi lists last),
// scrolled to it. The toggles are checkboxes and their labels, the
// filters radio buttons: all CSS, no script. Without CSS (w3m), every
// entry shows, the leaf's branch first. pifs's own leaf records are
// folded out of the conversation (an empty element keeps their anchor).

// SessionHTML is the session folder's transcript.html.
func SessionHTML(t *tree.Tree) []byte {
	page, _ := renderSessionPage(t, 0)
	return page
}

// SessionHTMLSize is len(SessionHTML(t)), counted without keeping it. Its
// tree's rows are counted with those of tree.txt's views with home as
// the user's home (TreeTextSizes), whichever is asked first.
func SessionHTMLSize(t *tree.Tree, home string) int64 {
	return CountSessionPage(t, home).Size()
}

// SessionPageCount is how a session's page is cut into parts and the
// length of each piece, as SessionHTMLSize counts them: SessionHTMLCounted
// renders the page into a buffer of its exact size, each part straight
// into its place.
type SessionPageCount struct {
	bounds     []int
	head, tail int64 // before the parts; after them (the last marks, the tail)
	sizes      []int64
	home       string // the tree's rows were counted with
}

// CountSessionPage counts t's page; home is as SessionHTMLSize's.
func CountSessionPage(t *tree.Tree, home string) SessionPageCount {
	return countSessionPage(t, home, 0)
}

// Size is the page's length.
func (c SessionPageCount) Size() int64 {
	n := c.head + c.tail
	for _, k := range c.sizes {
		n += k
	}
	return n
}

// Bytes is about what the count holds, for a cache.
func (c SessionPageCount) Bytes() int64 { return int64(16*len(c.bounds) + 96) }

// SessionHTMLCounted is SessionHTML(t), given its count.
func SessionHTMLCounted(t *tree.Tree, c SessionPageCount) []byte {
	page, _ := renderSessionPageIn(layoutSession(t), c.bounds, &c)
	return page
}

// sink takes a page's pieces: appended to b, or, counting, added up in n
// with b reused for the next piece.
type sink struct {
	b      []byte
	count  bool
	n      int64
	copied int // bytes copied into a new buffer (see fillRuns)
	// home is the user's home when counting: see SessionHTMLSize.
	home string
	// navs, when rendering, are the tree's parts' lengths as counted
	// (nil: not counted).
	navs []int64
}

// done ends a piece.
func (s *sink) done() {
	if s.count {
		s.n += int64(len(s.b))
		s.b = s.b[:0]
	}
}

// sessionPage is the layout of a session's page: which entries it shows
// in which order, and the markup between them.
type sessionPage struct {
	t    *tree.Tree
	p    Page
	path []*sessions.Entry // the leaf's path: its totals and entry count
	// order is the entries the segments show, in page order; the first
	// onPath of them are the path's (less its childless leaf record).
	order  []*sessions.Entry
	onPath int
	// summed tells the path's totals are added up from the first onPath
	// entries of order (false: from path, when it does not lead there).
	summed bool
	// marks is the markup between the entries: each before the entry of
	// its index (len(order): after the last), in order.
	marks []mark
	// rest are the entries no branch from a root reaches (a parent
	// cycle, no id), in file order.
	rest []*sessions.Entry
	// records are the leaf records no segment holds.
	records []*sessions.Entry
	stats   *exportStats
	all     *tree.Selector
}

// mark is markup before the entry at index at of the page's order.
type mark struct {
	at   int
	html string
}

// Markup of the segments. A segment's classes: "lp" on the leaf's path
// (shown at first), "nw" the child pi's page follows under its parent
// (its last); "al" wraps the entries and branches after the leaf in the
// leaf's segment (hidden at first).
const (
	kidsOpen  = "<div class=\"kids\">\n"
	divClose  = "</div>\n"
	alOpen    = "<div class=\"al\">\n"
	forkStart = "<p class=\"fork\">branch from <a href=\"#"
)

// layoutSession lays the page of t out.
func layoutSession(t *tree.Tree) *sessionPage {
	sp := &sessionPage{t: t, p: PageOf(t), path: t.LeafPath(), stats: statsOf(t)}
	sp.all = t.Selector(t.FileLeafID(), tree.FilterAll)
	ents := t.Entries()
	sp.order = make([]*sessions.Entry, 0, len(ents))
	// Marks by entry (its Seq): on the leaf's path, shown by a segment.
	seqs := 0
	if len(ents) > 0 {
		seqs = ents[len(ents)-1].Seq + 1
	}
	marked := make([]uint8, seqs)
	const onPathBit, shownBit = 1, 2
	onPath := func(e *sessions.Entry) bool { return e.Seq < seqs && marked[e.Seq]&onPathBit != 0 }
	// The leaf's path, and its last node (through a leaf record: its
	// entry); an id-less leaf follows that node.
	var last *tree.Node
	var idless *sessions.Entry
	for _, e := range sp.path {
		if e.Seq < seqs {
			marked[e.Seq] |= onPathBit
		}
		if nd := t.Node(e.ID); e.ID != "" && nd != nil && nd.Entry == e {
			if !(nd.IsLeafRecord() && len(nd.Children) == 0) {
				last = nd
			}
		} else {
			idless = e
		}
	}
	if idless != nil && (last == nil || idless.ParentID != last.ID) {
		idless = nil // not under the path's last node: shown with the rest
	}
	var b []byte // markup waiting for the next entry
	add := func(e *sessions.Entry) {
		if len(b) > 0 {
			sp.marks = append(sp.marks, mark{len(sp.order), string(b)})
			b = b[:0]
		}
		sp.order = append(sp.order, e)
		if e.Seq < seqs {
			marked[e.Seq] |= shownBit
		}
	}
	// A walk of the segments, the one on the leaf's path first among
	// siblings; a stack of segments to open and of closings.
	type job struct {
		seg   *tree.Segment
		first bool // first of its siblings (opens the kids block)
		close string
	}
	segs := t.Segments()
	stack := make([]job, 0, 64)
	push := func(kids []*tree.Segment, parent *tree.Node) {
		ordered := make([]*tree.Segment, 0, len(kids))
		for _, k := range kids {
			if onPath(k.Nodes[0].Entry) {
				ordered = append(ordered, k)
			}
		}
		for _, k := range kids {
			if !onPath(k.Nodes[0].Entry) {
				ordered = append(ordered, k)
			}
		}
		for i := len(ordered) - 1; i >= 0; i-- {
			close := ""
			if i == len(ordered)-1 && parent != nil {
				close = divClose // the kids block
			}
			stack = append(stack, job{ordered[i], i == 0, close})
		}
	}
	push(segs, nil)
	// closers are what to close after a segment's subtree, by depth.
	type open struct {
		seg   *tree.Segment
		close string
	}
	var opened []open
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		// Close the segments this one is not under.
		parent := j.seg.Nodes[0].Parent
		for len(opened) > 0 {
			top := opened[len(opened)-1]
			if parent != nil && top.seg.Nodes[len(top.seg.Nodes)-1] == parent {
				break
			}
			b = append(b, top.close...)
			opened = opened[:len(opened)-1]
		}
		if j.first && parent != nil {
			b = append(b, kidsOpen...)
		}
		first := j.seg.Nodes[0]
		b = append(b, "<div class=\"seg"...)
		if onPath(first.Entry) {
			b = append(b, " lp"...)
		}
		if parent != nil && newest(parent) == first {
			b = append(b, " nw"...)
		}
		b = append(b, "\">\n"...)
		if parent != nil && !j.first {
			b = append(b, forkStart...)
			b = anchor(b, parent.ID)
			b = append(b, "\">"...)
			b = escapeHTML(b, []byte(parent.ID))
			b = append(b, "</a></p>\n"...)
		}
		close := divClose
		for _, nd := range j.seg.Nodes {
			add(nd.Entry)
			if nd == last {
				if idless != nil {
					b = append(b, "<div class=\"seg lp\">\n"...)
					add(idless)
					b = append(b, divClose...)
				}
				if nd != j.seg.Nodes[len(j.seg.Nodes)-1] || len(j.seg.Children) > 0 {
					b = append(b, alOpen...)
					close += divClose
				}
			}
		}
		if len(j.seg.Children) == 0 {
			b = append(b, close...)
			b = append(b, j.close...)
			continue
		}
		opened = append(opened, open{j.seg, close + j.close})
		push(j.seg.Children, j.seg.Nodes[len(j.seg.Nodes)-1])
	}
	for i := len(opened) - 1; i >= 0; i-- {
		b = append(b, opened[i].close...)
	}
	if len(b) > 0 {
		sp.marks = append(sp.marks, mark{len(sp.order), string(b)})
	}
	// Childless leaf records, which no segment holds, keep an anchor;
	// what no branch reaches is shown apart.
	for _, e := range ents {
		switch {
		case e.Seq < seqs && marked[e.Seq]&shownBit != 0:
		case isLeafRecord(t, e):
			sp.records = append(sp.records, e)
		default:
			sp.rest = append(sp.rest, e)
		}
	}
	// The path leads the order unless a cycle cut it off.
	k := 0
	for _, e := range sp.path {
		if isLeafRecord(t, e) && len(t.Node(e.ID).Children) == 0 {
			continue
		}
		if k >= len(sp.order) || sp.order[k] != e {
			k = -1
			break
		}
		k++
	}
	sp.summed = k >= 0
	sp.onPath = max(k, 0)
	return sp
}

// newest is the child pi's page follows under n (findNewestLeaf: its last
// child), pifs's leaf records without children passed over; nil when
// there is none.
func newest(n *tree.Node) *tree.Node {
	vis := n.Visible()
	if len(vis) == 0 {
		return nil
	}
	return vis[len(vis)-1]
}

// marksIn is the marks before the entries from..to of the order (to
// included when it is the end).
func (sp *sessionPage) marksIn(from, to int) []mark {
	i := sort.Search(len(sp.marks), func(i int) bool { return sp.marks[i].at >= from })
	j := sort.Search(len(sp.marks), func(i int) bool { return sp.marks[i].at >= to })
	if to == len(sp.order) {
		j = len(sp.marks)
	}
	return sp.marks[i:j]
}

// run appends the entries from..to of the order and the marks before
// them; the path's are added to sum.
func (sp *sessionPage) run(dst []byte, from, to int, sum *partSummary, each func([]byte) []byte) []byte {
	ms := sp.marksIn(from, to)
	for i := from; i < to; i++ {
		for len(ms) > 0 && ms[0].at == i {
			dst = append(dst, ms[0].html...)
			ms = ms[1:]
		}
		e := sp.order[i]
		switch {
		case isLeafRecord(sp.t, e):
			dst = appendLeafRecord(dst, e)
		case i < sp.onPath && sp.summed:
			dst = appendSummed(dst, e, sum)
		default:
			dst = entryHTML(dst, e, decodedUsage{})
		}
		if each != nil {
			dst = each(dst)
		}
	}
	return dst
}

// isLeafRecord tells whether e is the tree's node of a pifs leaf record.
func isLeafRecord(t *tree.Tree, e *sessions.Entry) bool {
	if e.ID == "" || e.Type != schema.TypeCustom {
		return false // the tree's lookup is a map's: most entries are not custom
	}
	nd := t.Node(e.ID)
	return nd != nil && nd.Entry == e && nd.IsLeafRecord()
}

// appendLeafRecord appends a pifs leaf record: bookkeeping a reader does
// not need, folded out of the conversation into an empty element that
// keeps its anchor (the records no segment holds, those without
// children, follow the conversation).
func appendLeafRecord(dst []byte, e *sessions.Entry) []byte {
	dst = append(dst, "<div class=\"entry leaf-record\" id=\""...)
	dst = anchor(dst, e.ID)
	return append(dst, "\"></div>\n"...)
}

// head appends the page up to where the entries go.
func (sp *sessionPage) head(dst []byte) []byte {
	dst = pageStart(dst, sp.p, sessionCSS)
	// The controls come first, before what they change (CSS selects
	// what follows a checked input); their labels here are for a browser
	// without CSS, the page's own are in the head and the tree.
	dst = append(dst, "<body class=\"session-page\">\n"+
		"<input type=\"checkbox\" id=\"t-thinking\"><label for=\"t-thinking\">show thinking</label>\n"+
		"<input type=\"checkbox\" id=\"t-tools\"><label for=\"t-tools\">show tool output</label>\n"+
		"<input type=\"checkbox\" id=\"t-hidden\"><label for=\"t-hidden\">show hidden messages</label>\n"...)
	for _, f := range tree.Filters {
		dst = append(dst, "<input type=\"radio\" name=\"filter\" id=\"f-"...)
		dst = append(dst, f.String()...)
		dst = append(dst, '"')
		if f == tree.FilterDefault {
			dst = append(dst, " checked"...)
		}
		dst = append(dst, "><label for=\"f-"...)
		dst = append(dst, f.String()...)
		dst = append(dst, "\">tree filter "...)
		dst = append(dst, f.String()...)
		dst = append(dst, "</label>\n"...)
	}
	dst = append(dst, "<div id=\"content\">\n"...)
	dst = headerStart(dst, sp.p)
	if h := sp.t.Header; h != nil {
		if ms := dateValue(h.Timestamp); ms == ms {
			dst = append(dst, "<dt>date</dt><dd><time>"...)
			dst = appendISO(dst, ms)
			dst = append(dst, "</time></dd>\n"...)
		}
	}
	dst = append(dst, "</dl>\n"...)
	dst = appendExportStats(dst, sp.stats)
	dst = append(dst, "<p class=\"actions\"><label for=\"t-thinking\">thinking</label> "+
		"<label for=\"t-tools\">tool output</label> <label for=\"t-hidden\">hidden messages</label> "+
		"<a class=\"download\" href=\"session.jsonl\" download=\""...)
	dst = escapeHTML(dst, []byte(sp.p.ID))
	dst = append(dst, ".jsonl\" type=\"application/jsonl\">↓ JSONL</a> <a href=\"#\">the leaf's branch</a></p>\n"+
		"</header>\n<main class=\"segs\">\n"...)
	return dst
}

// headCap is about the size of the head.
func (sp *sessionPage) headCap() int {
	n := headCap(sp.p) + len(sessionCSS) + 1024
	for _, m := range sp.stats.models {
		n += len(m) * 6
	}
	return n
}

// tail appends what follows the entries: the end of <main>, the entries
// no branch reaches, the path's totals, the tree, the page's end.
func (sp *sessionPage) tail(s *sink, sum pathSummary) {
	s.b = append(s.b, "</main>\n"...)
	s.done()
	for _, e := range sp.records {
		s.b = appendLeafRecord(s.b, e)
		s.done()
	}
	if len(sp.rest) > 0 {
		s.b = append(s.b, "<details class=\"unreached\"><summary>"...)
		s.b = appendCount(s.b, float64(len(sp.rest)))
		s.b = append(s.b, " entries on no branch from a root (a parent cycle, no id)</summary>\n"...)
		s.done()
		for _, e := range sp.rest {
			s.b = AppendEntryHTML(s.b, e)
			s.done()
		}
		s.b = append(s.b, "</details>\n"...)
	}
	s.b = append(pathTotals(s.b, sp.path, sum), "</div>\n"...)
	s.done()
	appendTreeNav(s, sp.t, sp.all)
	s.b = append(s.b, "</body>\n</html>\n"...)
	s.done()
}

// tailCap is about the size of what tail appends.
func (sp *sessionPage) tailCap() int {
	c := footCap + 1024 + htmlCap(sp.rest) + 64*len(sp.records)
	for i := range sp.all.Rows {
		c += navRowCap(&sp.all.Rows[i])
	}
	return c
}

// parts cuts the order into runs of about equal raw bytes.
func (sp *sessionPage) parts(parts int) []int {
	if parts <= 0 {
		parts = partsFor(rawBytes(sp.order), htmlMinBytes)
	}
	return pathParts(sp.order, parts)
}

// summary is the path's totals, from the runs' sums or the path itself.
func (sp *sessionPage) summary(sums []partSummary) pathSummary {
	if sp.summed {
		return sumParts(sums)
	}
	return summarize(sp.path)
}

// renderSessionPage renders t's page with the order cut into parts (0:
// as many as its size asks for), and the bytes it copied into a new
// buffer (see fillRuns).
func renderSessionPage(t *tree.Tree, parts int) ([]byte, int) {
	sp := layoutSession(t)
	return renderSessionPageIn(sp, sp.parts(parts), nil)
}

// runSlack is the room a run counted exactly is given besides its length:
// a run appends markup it takes back when what follows is empty, and
// must not outgrow its region meanwhile.
const runSlack = 4 << 10

// renderSessionPageIn renders sp's page cut where b says, into a buffer
// of the size c counted (nil: of the parts' estimates).
func renderSessionPageIn(sp *sessionPage, b []int, c *SessionPageCount) ([]byte, int) {
	est := make([]int, len(b)-1)
	total := sp.headCap()
	more := sp.tailCap()
	var navs []int64
	if c != nil {
		// The tree's rows counted with the page: the room after the
		// entries is theirs.
		navs = sizesOfRows(sp.all, c.home).navs
		total, more = int(c.head), int(c.tail)+runSlack*len(navs)
	}
	for k := range est {
		if c != nil {
			est[k] = int(c.sizes[k]) + runSlack
		} else {
			est[k] = htmlCap(sp.order[b[k]:b[k+1]])
			for _, m := range sp.marksIn(b[k], b[k+1]) {
				est[k] += len(m.html)
			}
		}
		total += est[k]
	}
	dst := sp.head(hugemem.Bytes(0, total+more))
	start := dst
	sums := make([]partSummary, len(est))
	dst, copied := fillRuns(dst, est, more, func(k int, dst []byte) []byte {
		sums[k].keepOrder(len(sums) > 1, b[k+1]-b[k])
		return sp.run(dst, b[k], b[k+1], &sums[k], nil)
	})
	for _, m := range sp.marksIn(len(sp.order), len(sp.order)) {
		dst = append(dst, m.html...)
	}
	k := sink{b: dst, navs: navs}
	sp.tail(&k, sp.summary(sums))
	dst = k.b
	copied += k.copied
	if copied == 0 && &dst[0] != &start[:1][0] {
		copied = len(dst) // an append outgrew the buffer
	}
	if c != nil {
		return dst, copied // at most runSlack a run unused
	}
	return fitted(dst, copied)
}

// countSessionPage is the count of renderSessionPage(t, parts), a piece
// at a time; home is as SessionHTMLSize's.
func countSessionPage(t *tree.Tree, home string, parts int) SessionPageCount {
	sp := layoutSession(t)
	b := sp.parts(parts)
	sizes := make([]int64, len(b)-1)
	sums := make([]partSummary, len(b)-1)
	par.Each(len(sizes), func(k int) {
		bp := getScratch()
		defer putScratch(bp)
		sums[k].keepOrder(len(sums) > 1, b[k+1]-b[k])
		*bp = sp.run((*bp)[:0], b[k], b[k+1], &sums[k], func(dst []byte) []byte {
			sizes[k] += int64(len(dst))
			return dst[:0]
		})
		sizes[k] += int64(len(*bp))
	})
	bp := getScratch()
	defer putScratch(bp)
	*bp = sp.head((*bp)[:0])
	c := SessionPageCount{bounds: b, head: int64(len(*bp)), sizes: sizes, home: home}
	for _, m := range sp.marksIn(len(sp.order), len(sp.order)) {
		c.tail += int64(len(m.html))
	}
	k := sink{b: (*bp)[:0], count: true, home: home}
	sp.tail(&k, sp.summary(sums))
	*bp = k.b
	c.tail += k.n
	return c
}

// navRowCap is about the size of a row of the tree: its indentation (at
// most five bytes a level), its text (cut after maxNavRow bytes) and
// markup.
func navRowCap(r *tree.Row) int { return r.Indent*5 + maxNavRow + 80 }

// appendTreeNav appends pi's /tree of the session as a sidebar of links,
// with its five filters as the labels of the radio buttons at the top of
// the page. Leaf records are left out. The rows are rendered on every
// core, as tree.txt's are.
func appendTreeNav(s *sink, t *tree.Tree, all *tree.Selector) {
	s.b = append(s.b, "<nav class=\"tree\" aria-label=\"Session tree\">\n<h2>tree</h2>\n<p class=\"filters\">"...)
	for _, f := range tree.Filters {
		s.b = append(s.b, "<label for=\"f-"...)
		s.b = append(s.b, f.String()...)
		s.b = append(s.b, "\">"...)
		s.b = append(s.b, f.String()...)
		s.b = append(s.b, "</label> "...)
	}
	s.b = append(s.b, "</p>\n<ol class=\"rows\">\n"...)
	s.done()
	if s.count {
		s.n += sizesOfRows(all, s.home).nav
	} else {
		b := rowParts(len(all.Rows))
		est := make([]int, len(b)-1)
		for k := range est {
			if len(s.navs) == len(est) {
				est[k] = int(s.navs[k]) + runSlack
				continue
			}
			for i := b[k]; i < b[k+1]; i++ {
				est[k] += navRowCap(&all.Rows[i])
			}
		}
		var copied int
		s.b, copied = fillRuns(s.b, est, footCap, func(k int, buf []byte) []byte {
			for i := b[k]; i < b[k+1]; i++ {
				buf = appendNavRow(buf, t, all, &all.Rows[i])
			}
			return buf
		})
		s.copied += copied
	}
	s.b = append(s.b, "</ol>\n<p class=\"tree-status\">"...)
	s.b = appendCount(s.b, float64(len(all.Rows)))
	s.b = append(s.b, " rows, as pi's /tree lists them</p>\n</nav>\n"...)
	s.done()
}

// maxNavRow is the most bytes of a row's text the tree shows.
const maxNavRow = 160

// appendNavRow appends one row of the tree: a link to its entry, its
// classes the filters that keep it (f0… in tree.Filters' order), "on"
// on the active path, its text tree.txt's row without the id, cut after
// maxNavRow bytes, its connectors as pi's page draws them (no fold
// marks). A leaf record has no row.
func appendNavRow(dst []byte, t *tree.Tree, all *tree.Selector, r *tree.Row) []byte {
	if r.Node.IsLeafRecord() {
		return dst
	}
	dst = navRowStart(dst, t, r)
	start := len(dst)
	return navRowEnd(appendRowBody(r.AppendPlainPrefix(dst), start, all, r, ""), start)
}

// navRowOf is appendNavRow of a row whose body (appendRowBody's bytes,
// home "") is made already.
func navRowOf(dst []byte, t *tree.Tree, r *tree.Row, body []byte) []byte {
	if r.Node.IsLeafRecord() {
		return dst
	}
	dst = navRowStart(dst, t, r)
	start := len(dst)
	return navRowEnd(append(r.AppendPlainPrefix(dst), body...), start)
}

// navRowStart appends a row's markup up to its text.
func navRowStart(dst []byte, t *tree.Tree, r *tree.Row) []byte {
	dst = append(dst, "<li class=\"r"...)
	for _, f := range tree.Filters {
		if f != tree.FilterAll && t.Keeps(r.Node, f) {
			dst = append(dst, ' ', 'f', byte('0'+f))
		}
	}
	if r.Active {
		dst = append(dst, " on"...)
	}
	dst = append(dst, "\"><a href=\"#"...)
	dst = anchor(dst, r.Node.ID)
	return append(dst, "\">"...)
}

// navRowEnd ends a row whose text is tree.txt's row from dst[start:]: it
// drops the tab and the id, cuts the text after maxNavRow bytes, escapes
// it and closes the markup.
func navRowEnd(dst []byte, start int) []byte {
	// The row as tree.txt has it, without its tab and id, escaped past
	// its end and moved back.
	end := len(dst) - 1
	if k := lastTab(dst[start:end]); k >= 0 {
		end = start + k
	}
	if end-start > maxNavRow {
		// A long row is cut at a character's start: the link leads to the
		// whole entry.
		end = start + maxNavRow
		for end > start && !utf8.RuneStart(dst[end]) {
			end--
		}
		dst = append(dst[:end], "…"...)
		end = len(dst)
	}
	rowEnd := len(dst)
	dst = escapeHTML(dst, dst[start:end])
	k := copy(dst[start:], dst[rowEnd:])
	return append(dst[:start+k], "</a></li>\n"...)
}

func lastTab(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\t' {
			return i
		}
	}
	return -1
}
