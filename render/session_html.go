package render

import (
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The session folder's transcript.html is the whole session in one page:
// the path to the leaf as a path's page shows it (head, one piece per
// entry, in <main>), then every entry off that path, in file order, in
// one section per branch (a run of entries each the child of the one
// before; the section says which entry it leaves from), then pi's /tree
// of the session, folded, a row per entry as pi's selector lists it with
// "all" as its filter, each a link to its entry's piece. Five radio
// buttons before the rows filter them as pi's five /tree filters do, with
// CSS only; the rows keep the indentation of "all". The page's foot, its
// totals, is the path's.

// SessionHTML is the session folder's transcript.html.
func SessionHTML(t *tree.Tree) []byte {
	path := t.LeafPath()
	return pageHTML(PageOf(t), path, t, partsFor(rawBytes(path), htmlMinBytes))
}

// SessionHTMLSize is len(SessionHTML(t)), counted without keeping it.
func SessionHTMLSize(t *tree.Tree) int64 {
	path := t.LeafPath()
	return pageHTMLSize(PageOf(t), path, t, partsFor(rawBytes(path), htmlMinBytes))
}

// sink takes a page's pieces: appended to b, or, counting, added up in n
// with b reused for the next piece.
type sink struct {
	b     []byte
	count bool
	n     int64
}

// done ends a piece.
func (s *sink) done() {
	if s.count {
		s.n += int64(len(s.b))
		s.b = s.b[:0]
	}
}

// appendRest appends what follows the path's pieces in a session's page:
// the end of <main>, the other branches and the tree. It depends on the
// whole tree.
func appendRest(s *sink, t *tree.Tree, path []*sessions.Entry) {
	s.b = append(s.b, "</main>\n"...)
	s.done()
	onPath := make(map[*sessions.Entry]bool, len(path))
	for _, e := range path {
		onPath[e] = true
	}
	var prev *sessions.Entry
	open := false
	for _, e := range t.Entries() {
		n := t.Node(e.ID)
		if onPath[e] || n == nil || n.Entry != e {
			continue // on the path, or not the tree's entry for its id
		}
		if prev == nil || n.Parent == nil || n.Parent.Entry != prev {
			if !open {
				s.b = append(s.b, "<section class=\"branches\" aria-label=\"Other branches\">\n<h2>Other branches</h2>\n"...)
				open = true
			} else {
				s.b = append(s.b, "</section>\n"...)
			}
			s.b = append(s.b, "<section class=\"branch\">\n<h3>branch"...)
			if n.Parent != nil {
				s.b = append(s.b, " from <a href=\"#"...)
				s.b = anchor(s.b, n.Parent.ID)
				s.b = append(s.b, "\">"...)
				s.b = escapeHTML(s.b, []byte(n.Parent.ID))
				s.b = append(s.b, "</a>"...)
			} else {
				s.b = append(s.b, " from no entry (a root)"...)
			}
			s.b = append(s.b, "</h3>\n"...)
		}
		s.b = AppendEntryHTML(s.b, e)
		s.done()
		prev = e
	}
	if open {
		s.b = append(s.b, "</section>\n</section>\n"...)
	}
	appendTreeNav(s, t)
}

// appendTreeNav appends pi's /tree of the session as a folded list of
// links, with its five filters as radio buttons.
func appendTreeNav(s *sink, t *tree.Tree) {
	leaf := t.FileLeafID()
	all := t.Selector(leaf, tree.FilterAll)
	// listed[f][seq]: filter f lists the entry.
	var listed [5][]bool
	for _, f := range tree.Filters {
		if f == tree.FilterAll {
			continue
		}
		on := make([]bool, maxSeq(t)+1)
		for _, r := range t.Selector(leaf, f).Rows {
			on[r.Node.Seq] = true
		}
		listed[f] = on
	}
	s.b = append(s.b, "<nav class=\"tree\" aria-label=\"Session tree\">\n<details><summary>tree: every entry and branch ("...)
	s.b = appendCount(s.b, float64(len(all.Rows)))
	s.b = append(s.b, " rows as pi's /tree lists them)</summary>\n"...)
	for _, f := range tree.Filters {
		s.b = append(s.b, "<input type=\"radio\" name=\"filter\" id=\"f-"...)
		s.b = append(s.b, f.String()...)
		s.b = append(s.b, '"')
		if f == tree.FilterDefault {
			s.b = append(s.b, " checked"...)
		}
		s.b = append(s.b, "><label for=\"f-"...)
		s.b = append(s.b, f.String()...)
		s.b = append(s.b, "\">"...)
		s.b = append(s.b, f.String()...)
		s.b = append(s.b, "</label>\n"...)
	}
	s.b = append(s.b, "<ol class=\"rows\">\n"...)
	s.done()
	for i := range all.Rows {
		r := &all.Rows[i]
		s.b = append(s.b, "<li class=\"r"...)
		for _, f := range tree.Filters {
			if f != tree.FilterAll && listed[f][r.Node.Seq] {
				s.b = append(s.b, ' ', 'f', byte('0'+f))
			}
		}
		if r.Active {
			s.b = append(s.b, " on"...)
		}
		s.b = append(s.b, "\"><a href=\"#"...)
		s.b = anchor(s.b, r.Node.ID)
		s.b = append(s.b, "\">"...)
		start := len(s.b)
		s.b = appendTreeRow(s.b, all, r, "")
		// The row as tree.txt has it, without its tab and id.
		row := s.b[start : len(s.b)-1]
		if k := lastTab(row); k >= 0 {
			row = row[:k]
		}
		text := append([]byte(nil), row...)
		s.b = escapeHTML(s.b[:start], text)
		s.b = append(s.b, "</a></li>\n"...)
		s.done()
	}
	s.b = append(s.b, "</ol>\n</details>\n</nav>\n"...)
	s.done()
}

func lastTab(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\t' {
			return i
		}
	}
	return -1
}

// maxSeq is the largest Seq of the tree's entries.
func maxSeq(t *tree.Tree) int {
	m := 0
	for _, e := range t.Entries() {
		m = max(m, e.Seq)
	}
	return m
}
