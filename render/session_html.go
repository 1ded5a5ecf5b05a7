package render

import (
	"unicode/utf8"

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

// SessionHTMLSize is len(SessionHTML(t)), counted without keeping it. Its
// tree's rows are counted with those of tree.txt's views with home as
// the user's home (TreeTextSizes), whichever is asked first.
func SessionHTMLSize(t *tree.Tree, home string) int64 {
	path := t.LeafPath()
	return pageHTMLSize(PageOf(t), path, t, home, partsFor(rawBytes(path), htmlMinBytes))
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
func appendRest(s *sink, t *tree.Tree, path []*sessions.Entry, all *tree.Selector) {
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
	appendTreeNav(s, t, all)
}

// restCap is about the size of what appendRest appends: the entries off
// a path of n entries and the tree's rows.
func restCap(t *tree.Tree, n int, all *tree.Selector) int {
	c := 1024
	if off := len(t.Entries()) - n; off > 0 {
		// The entries off the path, at the average size of the file's.
		c += htmlCap(t.Entries()) / len(t.Entries()) * off
	}
	for i := range all.Rows {
		c += navRowCap(&all.Rows[i])
	}
	return c
}

// navRowCap is about the size of a row of the tree: its indentation (at
// most five bytes a level), its text (cut after maxNavRow bytes) and
// markup.
func navRowCap(r *tree.Row) int { return r.Indent*5 + maxNavRow + 80 }

// appendTreeNav appends pi's /tree of the session as a folded list of
// links, with its five filters as radio buttons. The rows are rendered on
// every core, as tree.txt's are.
func appendTreeNav(s *sink, t *tree.Tree, all *tree.Selector) {
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
	if s.count {
		s.n += sizesOfRows(all, s.home).nav
	} else {
		b := rowParts(len(all.Rows))
		est := make([]int, len(b)-1)
		for k := range est {
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
	s.b = append(s.b, "</ol>\n</details>\n</nav>\n"...)
	s.done()
}

// maxNavRow is the most bytes of a row's text the tree shows.
const maxNavRow = 160

// appendNavRow appends one row of the tree: a link to its entry, its
// classes the filters that keep it (f0… in tree.Filters' order), "on"
// on the active path, its text tree.txt's row without the id, cut after
// maxNavRow bytes.
func appendNavRow(dst []byte, t *tree.Tree, all *tree.Selector, r *tree.Row) []byte {
	dst = navRowStart(dst, t, r)
	start := len(dst)
	return navRowEnd(appendRowBody(r.AppendPlainPrefix(dst), start, all, r, ""), start)
}

// navRowOf is appendNavRow of a row whose body (appendRowBody's bytes,
// home "") is made already.
func navRowOf(dst []byte, t *tree.Tree, r *tree.Row, body []byte) []byte {
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
