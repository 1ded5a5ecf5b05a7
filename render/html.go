package render

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/render/parts"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// transcript.html is one self-contained page: inline CSS, no script, no
// URL outside the page (a Content-Security-Policy forbids loading any), and
// every text from the session HTML-escaped, so nothing a session holds can
// add markup or script.
//
// The page is three pieces, HTMLHead + one AppendEntryHTML per entry of
// the path + appendFoot. The head depends on the session only (its name, id
// and working directory), each entry's piece on that entry only, and the
// foot on the whole path: it closes the page with the path's models and
// token and cost totals, which the stylesheet shows at the top, under the
// head. How to serve a session that grows: the page of a longer
// path is the same head, the old entries' pieces, the new entries' pieces
// and a new foot, so a renderer keeps head+pieces and re-appends only the
// foot. A reader holding the file open cannot follow it byte for byte (the
// old foot sits where the new pieces go); serve the whole page as a
// snapshot per open, or, to follow it, serve head+pieces without the foot
// while the file is open and growing (browsers close the open elements at
// the end of the file; the totals are then missing). Renaming the session
// changes the head: that is a new rendering, not an extension.

// Page is what the head of a transcript page shows.
type Page struct {
	Name string // the session's name, "" when unnamed
	ID   string // the session id
	Cwd  string // its working directory
}

// PageOf describes a session's tree for HTMLHead.
func PageOf(t *tree.Tree) Page {
	p := Page{Name: t.Name()}
	if t.Header != nil {
		p.ID, p.Cwd = t.Header.ID, t.Header.Cwd
	}
	return p
}

// TranscriptHTML is transcript.html for a root→entry path.
func TranscriptHTML(p Page, path []*sessions.Entry) []byte {
	return pageHTML(p, path, nil, partsFor(rawBytes(path), htmlMinBytes))
}

// transcriptHTML renders a path's page with the path cut into parts.
func transcriptHTML(p Page, path []*sessions.Entry, parts int) []byte {
	return pageHTML(p, path, nil, parts)
}

// pageHTML renders the page of path, cut into parts: a path's page, or
// with t the session's page (see SessionHTML).
func pageHTML(p Page, path []*sessions.Entry, t *tree.Tree, parts int) []byte {
	page, _ := renderPage(p, path, t, parts)
	return page
}

// renderPage is pageHTML, and the bytes it copied into a new buffer
// after rendering them (see fillRuns): 0 when the page's estimates held.
// With t, the page is the session's (see SessionHTML), cut into parts.
func renderPage(p Page, path []*sessions.Entry, t *tree.Tree, parts int) ([]byte, int) {
	if t != nil {
		return renderSessionPage(t, parts)
	}
	b := pathParts(path, parts)
	est := make([]int, len(b)-1)
	total := headCap(p)
	for k := range est {
		est[k] = htmlCap(path[b[k]:b[k+1]])
		total += est[k]
	}
	more := footCap
	dst := HTMLHead(hugemem.Bytes(0, total+more), p)
	start := dst
	sums := make([]partSummary, len(est))
	dst, copied := fillRuns(dst, est, more, func(k int, dst []byte) []byte {
		sums[k].keepOrder(len(sums) > 1, b[k+1]-b[k])
		for _, e := range path[b[k]:b[k+1]] {
			dst = appendSummed(dst, e, &sums[k])
		}
		return dst
	})
	dst = htmlFoot(dst, path, sumParts(sums))
	if copied == 0 && &dst[0] != &start[:1][0] {
		copied = len(dst) // an append outgrew the buffer
	}
	return fitted(dst, copied)
}

// htmlCap is about the size of the pieces of a run of entries: the
// entry's bytes in the file (text unquoted from JSON, escaped for HTML)
// and the markup around them.
func htmlCap(run []*sessions.Entry) int {
	n := 0
	for _, e := range run {
		n += len(e.Raw) + len(e.Raw)/16 + 192
	}
	return n
}

// headCap is about the size of the page's head; footCap of its foot.
func headCap(p Page) int {
	return 1024 + len(css) + len(codeCSS) + 12*(len(p.Name)+len(p.ID)+len(p.Cwd))
}

const footCap = 4 << 10

// HTMLHead appends the start of the page, up to where the entries go.
func HTMLHead(dst []byte, p Page) []byte {
	dst = append(pageStart(dst, p, ""), "<body>\n"...)
	return append(headerStart(dst, p), "</dl>\n</header>\n<main>\n"...)
}

// pageStart appends the page's document head, with more CSS after the
// page's own.
func pageStart(dst []byte, p Page, more string) []byte {
	title := p.Name
	if title == "" {
		title = "pi session " + p.ID
	}
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"pifs\">\n<title>"...)
	dst = escapeHTML(dst, []byte(title))
	dst = append(dst, "</title>\n<style>"...)
	dst = append(dst, css...)
	dst = append(dst, codeCSS...)
	dst = append(dst, more...)
	return append(dst, "</style>\n</head>\n"...)
}

// headerStart opens the page's header: the session's name, and its id
// and working directory in a list left open.
func headerStart(dst []byte, p Page) []byte {
	dst = append(dst, "<header class=\"session\">\n<h1>"...)
	if p.Name != "" {
		dst = escapeHTML(dst, []byte(p.Name))
	} else {
		dst = append(dst, "<span class=\"unnamed\">Unnamed session</span>"...)
	}
	dst = append(dst, "</h1>\n<dl>\n<dt>id</dt><dd><code>"...)
	dst = escapeHTML(dst, []byte(p.ID))
	dst = append(dst, "</code></dd>\n<dt>cwd</dt><dd><code>"...)
	dst = escapeHTML(dst, []byte(p.Cwd))
	return append(dst, "</code></dd>\n"...)
}

// appendFoot appends the end of the page: the path's models and totals.
func appendFoot(dst []byte, path []*sessions.Entry) []byte {
	return htmlFoot(dst, path, summarize(path))
}

// htmlFoot is appendFoot with the path's summary given.
func htmlFoot(dst []byte, path []*sessions.Entry, s pathSummary) []byte {
	return footTotals(append(dst, "</main>\n"...), path, s)
}

// footTotals appends the totals of the path and closes the page.
func footTotals(dst []byte, path []*sessions.Entry, s pathSummary) []byte {
	return append(pathTotals(dst, path, s), "</body>\n</html>\n"...)
}

// pathTotals appends the section of the path's totals.
func pathTotals(dst []byte, path []*sessions.Entry, s pathSummary) []byte {
	dst = append(dst, "<section class=\"summary\" aria-label=\"Totals\">\n<dl>\n<dt>entries</dt><dd>"...)
	dst = strconv.AppendInt(dst, int64(len(path)), 10)
	dst = append(dst, "</dd>\n<dt>messages</dt><dd>"...)
	dst = strconv.AppendInt(dst, int64(s.messages), 10)
	dst = append(dst, "</dd>\n"...)
	if len(path) > 0 {
		dst = append(dst, "<dt>last entry</dt><dd><a href=\"#"...)
		dst = anchor(dst, path[len(path)-1].ID)
		dst = append(dst, "\">"...)
		dst = escapeHTML(dst, []byte(path[len(path)-1].ID))
		dst = append(dst, "</a></dd>\n"...)
	}
	dst = append(dst, "<dt>models</dt><dd>"...)
	if len(s.models) == 0 {
		dst = append(dst, "none"...)
	}
	for i, m := range s.models {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = append(dst, "<code>"...)
		dst = escapeHTML(dst, []byte(m.name))
		dst = append(dst, "</code> ×"...)
		dst = strconv.AppendInt(dst, int64(m.count), 10)
	}
	dst = append(dst, "</dd>\n</dl>\n<table>\n<tr><th>input</th><th>output</th><th>cache read</th><th>cache write</th><th>total tokens</th><th>cost</th></tr>\n<tr>"...)
	u := s.usage
	for _, v := range []float64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Total} {
		dst = append(dst, "<td>"...)
		dst = appendCount(dst, v)
		dst = append(dst, "</td>"...)
	}
	dst = append(dst, "<td>$"...)
	dst = strconv.AppendFloat(dst, u.Cost, 'f', 4, 64)
	return append(dst, "</td></tr>\n</table>\n</section>\n"...)
}

type modelCount struct {
	name  string
	count int
}

type pathSummary struct {
	usage    schema.Usage
	messages int
	models   []modelCount // in order of first use
}

// summarize totals a path's usage as tree.Tree.Usage counts a session's (pi's
// /session): assistant and tool-result messages, usage entries, and the
// usage of compactions and branch summaries; and lists the models that
// answered.
func summarize(path []*sessions.Entry) pathSummary {
	var s partSummary
	for _, e := range path {
		s.add(e, decodedUsage{})
	}
	return sumParts([]partSummary{s})
}

// partSummary is what a run of a path's entries adds to the path's
// summary. With keep, the usages are kept in order, to be added up with
// those of the other runs in the path's order; without, they are added up
// at once.
type partSummary struct {
	keep     bool
	usage    schema.Usage
	usages   []schema.Usage
	messages int
	models   []modelCount // in order of first use
	seen     map[string]int
	key      []byte // scratch for a model's name
}

// add adds an entry; pre is its usage when decoded already.
func (s *partSummary) add(e *sessions.Entry, pre decodedUsage) {
	u, ok := pre.u, pre.ok
	if !ok {
		u, ok = tree.EntryUsage(e)
	}
	if ok {
		if s.keep {
			s.usages = append(s.usages, u)
		} else {
			s.usage.Add(u)
		}
	}
	switch e.Type {
	case schema.TypeUsage:
		s.model(e.Get("provider"), e.Get("model"))
	case schema.TypeMessage:
		s.messages++
		if e.Role == schema.RoleAssistant {
			s.model(e.MsgProvider, e.MsgModel)
		}
	}
}

// keepOrder makes s keep its usages in order (see partSummary) when
// apart, with room for those of n entries.
func (s *partSummary) keepOrder(apart bool, n int) {
	s.keep = apart
	if apart {
		s.usages = make([]schema.Usage, 0, n)
	}
}

// model counts an answer of the model id of provider: "provider/id", or
// the id alone when there is no provider.
func (s *partSummary) model(provider, id []byte) {
	if jsjson.KindOf(id) != jsjson.String {
		return
	}
	key := s.key[:0]
	if jsjson.KindOf(provider) == jsjson.String {
		if key = jsjson.AppendUnquoted(key, provider); len(key) > 0 {
			key = append(key, '/')
		}
	}
	n := len(key)
	key = jsjson.AppendUnquoted(key, id)
	s.key = key
	if len(key) > n {
		s.countModel(key, 1)
	}
}

func (s *partSummary) countModel(m []byte, n int) {
	if k, ok := s.seen[string(m)]; ok {
		s.models[k].count += n
		return
	}
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	name := string(m)
	s.seen[name] = len(s.models)
	s.models = append(s.models, modelCount{name, n})
}

// sumParts is the summary of the runs of a path, given in order.
func sumParts(parts []partSummary) pathSummary {
	var all partSummary
	for _, p := range parts {
		if p.keep {
			for _, u := range p.usages {
				all.usage.Add(u)
			}
		} else {
			// Only a single run is added up as it goes.
			all.usage.Add(p.usage)
		}
		all.messages += p.messages
		for _, m := range p.models {
			all.countModel([]byte(m.name), m.count)
		}
	}
	return pathSummary{usage: all.usage.Finish(), messages: all.messages, models: all.models}
}

// appendCount writes a token count with thousands separators.
func appendCount(dst []byte, v float64) []byte {
	if v != math.Trunc(v) || math.Abs(v) >= 1e15 {
		return strconv.AppendFloat(dst, v, 'g', -1, 64)
	}
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], int64(v), 10)
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, d)
	}
	return dst
}

// anchor appends the fragment id of an entry: "e-" and the id with every
// byte outside [A-Za-z0-9._-] written as ~XX, so that any id gives a valid,
// distinct HTML id that needs no escaping in a URL.
func anchor(dst []byte, id string) []byte {
	const hexd = "0123456789ABCDEF"
	dst = append(dst, 'e', '-')
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			dst = append(dst, c)
		} else {
			dst = append(dst, '~', hexd[c>>4], hexd[c&15])
		}
	}
	return dst
}

// AppendEntryHTML appends one entry's part of the page. It depends on that
// entry only.
func AppendEntryHTML(dst []byte, e *sessions.Entry) []byte {
	return entryHTML(dst, e, decodedUsage{})
}

// decodedUsage is an answer's usage decoded once for both its piece of
// the page and the page's totals (ok tells it is set).
type decodedUsage struct {
	u           schema.Usage
	hasCost, ok bool
}

// appendSummed appends an entry's piece of the page and adds the entry to
// the totals of s.
func appendSummed(dst []byte, e *sessions.Entry, s *partSummary) []byte {
	var pre decodedUsage
	if e.Type == schema.TypeMessage && e.Role == schema.RoleAssistant {
		// tree.EntryUsage of an answer is its message's usage, decoded.
		pre.u, pre.hasCost = tree.DecodeUsage(e.MsgUsage)
		pre.ok = true
	}
	s.add(e, pre)
	return entryHTML(dst, e, pre)
}

// entryHTML is AppendEntryHTML with an answer's usage decoded already
// (pre.ok) or not.
func entryHTML(dst []byte, e *sessions.Entry, pre decodedUsage) []byte {
	w := parts.Of(e)
	h := &w.Head
	switch h.Shape {
	case parts.Meta:
		return appendMetaHTML(dst, h)
	case parts.Message:
		dst = entryStart(dst, e, e.Role, h.Who)
		if e.Role == schema.RoleAssistant {
			if jsjson.KindOf(h.Model) == jsjson.String {
				dst = append(dst, " <span class=\"model\">"...)
				dst = appendTextInline(dst, h.Model)
				dst = append(dst, "</span>"...)
			}
			dst = appendUsage(dst, h.Usage, pre)
		}
	case parts.ToolResult:
		class := "tool-result"
		if h.IsError {
			class = "tool-result failed"
		}
		dst = entryStart(dst, e, class, h.Who)
		dst = appendLabel(dst, h.ToolName)
		if h.IsError {
			dst = append(dst, " <span class=\"badge\">error</span>"...)
		}
	case parts.Bash:
		dst = entryStart(dst, e, "bash", h.Who)
		if h.ExitCode != nil {
			dst = append(dst, " <span class=\"exit\">exit "...)
			dst = escapeHTML(dst, h.ExitCode)
			dst = append(dst, "</span>"...)
		}
	case parts.SummaryMessage:
		dst = entryStart(dst, e, "branch-summary", h.Who)
	case parts.OtherMessage:
		dst = entryStart(dst, e, "other", string(escapeHTML(nil, []byte(h.Who))))
	case parts.CustomMessage:
		class := "custom-message"
		if h.Hidden {
			class = "custom-message hidden"
		}
		dst = entryStart(dst, e, class, h.Who)
		dst = appendLabel(dst, h.CustomType)
	case parts.BranchSummary:
		dst = entryStart(dst, e, "branch-summary", h.Who)
		dst = appendRef(dst, "of the branch from ", h.Ref)
	case parts.Compaction:
		dst = entryStart(dst, e, "compaction", h.Who)
		dst = appendRef(dst, "kept from ", h.Ref)
	}
	if h.Hidden {
		dst = append(dst, " <span class=\"badge muted\">display: false</span>"...)
	}
	dst = entryBody(dst, e)
	switch {
	case h.Shape == parts.ToolResult:
		dst = appendToolResultHTML(dst, &w)
	case e.Role == schema.RoleSystem && h.Shape == parts.Message:
		dst = appendSystemHTML(dst, &w)
	case h.Hidden:
		// pi keeps the message out of its terminal: folded, marked.
		dst = append(dst, "<details class=\"hidden-message\"><summary>hidden in pi's terminal</summary>\n"...)
		dst = appendPartsHTML(dst, &w)
		dst = append(dst, "</details>\n"...)
	default:
		dst = appendPartsHTML(dst, &w)
	}
	return entryEnd(dst)
}

// appendPartsHTML appends the parts of an entry that is not a tool
// result: text as Markdown, the n-th image inline.
func appendPartsHTML(dst []byte, w *parts.Walk) []byte {
	n := 0
	for w.Next() {
		if w.Part.Kind == parts.Image {
			n++
			dst = appendImageHTML(dst, w.Head.Entry, n, &w.Part)
			continue
		}
		dst = appendPartHTML(dst, &w.Part)
	}
	return dst
}

// Outputs longer than these fold.
const (
	foldBytes = 4000
	foldLines = 25
)

// appendToolResultHTML appends a tool result's parts: its output as
// program output, folded when long, its images after it, and an edit's
// diff.
func appendToolResultHTML(dst []byte, w *parts.Walk) []byte {
	h := &w.Head
	e := h.Entry
	dst = appendCallRef(dst, h.ToolCallID)
	// The output's size, from its raw parts, decides whether it folds.
	size, lines, images := 0, 0, 0
	body := len(dst)
	for w.Next() {
		p := &w.Part
		if p.Kind == parts.Image {
			images++
			continue
		}
		if p.Kind == parts.Text {
			size += len(p.Value)
			lines += bytes.Count(p.Value, []byte(`\n`))
		}
		dst = appendOutputPart(dst, p)
	}
	out := len(dst) - body
	open := "<details class=\"output\" open><summary>output</summary>\n"
	if size > foldBytes || lines > foldLines {
		open = "<details class=\"output\"><summary>output (long, folded)</summary>\n"
	}
	if out > 0 {
		dst = slices.Insert(dst, body, []byte(open)...)
		dst = append(dst, "</details>\n"...)
	}
	if images > 0 {
		n := 0
		for w2 := parts.Of(e); w2.Next(); {
			if w2.Part.Kind == parts.Image {
				n++
				dst = appendImageHTML(dst, e, n, &w2.Part)
			}
		}
	}
	if diff := diffOf(h.Details); diff != nil {
		dst = appendDiffHTML(dst, diff)
	}
	return dst
}

// appendOutputPart appends one part of a tool's output.
func appendOutputPart(dst []byte, p *parts.Part) []byte {
	if p.Kind == parts.Text {
		return appendText(dst, "pre", p.Value)
	}
	return appendPartHTML(dst, p)
}

// appendCallRef links a tool result to the tool call it answers, and
// gives it the anchor its call links to.
func appendCallRef(dst, callID []byte) []byte {
	id, ok := jsjson.StringValue(callID)
	if !ok || id == "" {
		return dst
	}
	dst = append(dst, "<p class=\"call-ref\" id=\""...)
	dst = callAnchor(dst, "r-", id)
	dst = append(dst, "\">result of <a href=\"#"...)
	dst = callAnchor(dst, "c-", id)
	dst = append(dst, "\">"...)
	dst = escapeHTML(dst, []byte(id))
	return append(dst, "</a></p>\n"...)
}

// callAnchor appends the fragment id of a tool call (prefix "c-") or of
// its result ("r-"), spelled as anchor spells entry ids.
func callAnchor(dst []byte, prefix, id string) []byte {
	n := len(dst)
	dst = anchor(dst, id)
	copy(dst[n:], prefix) // anchor writes "e-" first
	return dst
}

// appendDiffHTML shows an edit's diff, a line per row, additions and
// removals marked.
func appendDiffHTML(dst, diff []byte) []byte {
	dst = append(dst, "<pre class=\"diff\">"...)
	start := len(dst)
	dst = jsjson.AppendUnquoted(dst, diff)
	text := bytes.Clone(dst[start:])
	dst = dst[:start]
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		class := "ctx"
		if len(line) > 0 {
			switch line[0] {
			case '+':
				class = "add"
			case '-':
				class = "del"
			}
		}
		dst = append(dst, "<span class=\""...)
		dst = append(dst, class...)
		dst = append(dst, "\">"...)
		dst = escapeHTML(dst, line)
		dst = append(dst, "</span>\n"...)
	}
	return append(dst, "</pre>\n"...)
}

// appendSystemHTML shows a system message folded: its instructions, its
// named prompt sections, the tools it adds and removes.
func appendSystemHTML(dst []byte, w *parts.Walk) []byte {
	h := &w.Head
	dst = append(dst, "<details class=\"system-prompt\"><summary>system prompt"...)
	var names []byte
	jsjson.Members(h.Sections, func(k, v []byte) bool {
		names = append(names, ", "...)
		if jsjson.KindOf(v) == jsjson.Null {
			names = append(names, '-')
		}
		names = escapeHTML(names, jsjson.AppendUnquoted(nil, k))
		return true
	})
	if len(names) > 0 {
		dst = append(dst, " · sections "...)
		dst = append(dst, names[2:]...)
	}
	tools := appendToolNames(appendToolNames(nil, h.ToolsAdded, '+'), h.ToolsRemoved, '-')
	if len(tools) > 0 {
		dst = append(dst, " · tools"...)
		dst = append(dst, tools...)
	}
	dst = append(dst, "</summary>\n"...)
	for w.Next() {
		if w.Part.Kind == parts.Text {
			dst = appendText(dst, "pre", w.Part.Value)
			continue
		}
		dst = appendPartHTML(dst, &w.Part)
	}
	jsjson.Members(h.Sections, func(k, v []byte) bool {
		dst = append(dst, "<h4>section <code>"...)
		dst = escapeHTML(dst, jsjson.AppendUnquoted(nil, k))
		dst = append(dst, "</code>"...)
		if jsjson.KindOf(v) == jsjson.Null {
			dst = append(dst, " removed</h4>\n"...)
			return true
		}
		dst = append(dst, "</h4>\n"...)
		dst = appendText(dst, "pre", v)
		return true
	})
	if jsjson.KindOf(h.ToolsAdded) == jsjson.Array {
		dst = append(dst, "<h4>tools added</h4>\n<dl class=\"tools\">\n"...)
		jsjson.Elements(h.ToolsAdded, func(t []byte) bool {
			dst = append(dst, "<dt><code>"...)
			dst = appendTextInline(dst, jsjson.Get(t, "name"))
			dst = append(dst, "</code></dt><dd>"...)
			dst = appendTextInline(dst, jsjson.Get(t, "description"))
			dst = appendToolParams(dst, jsjson.Get(t, "parameters"))
			dst = append(dst, "</dd>\n"...)
			return true
		})
		dst = append(dst, "</dl>\n"...)
	}
	if jsjson.KindOf(h.ToolsRemoved) == jsjson.Array {
		dst = append(dst, "<h4>tools removed</h4>\n<p>"...)
		dst = append(dst, appendToolNames(nil, h.ToolsRemoved, 0)...)
		dst = append(dst, "</p>\n"...)
	}
	return append(dst, "</details>\n"...)
}

// appendToolParams lists a tool's parameters as pi's page does: each
// property's name, type ("any" without one), whether it is required, and
// its description; nothing for a schema without properties.
func appendToolParams(dst, schema []byte) []byte {
	props := jsjson.Get(schema, "properties")
	if jsjson.KindOf(props) != jsjson.Object || !hasMembers(props) {
		return dst
	}
	required := map[string]bool{}
	jsjson.Elements(jsjson.Get(schema, "required"), func(v []byte) bool {
		if s, ok := jsjson.StringValue(v); ok {
			required[s] = true
		}
		return true
	})
	dst = append(dst, "<ul class=\"params\">\n"...)
	jsjson.Members(props, func(k, v []byte) bool {
		dst = append(dst, "<li><code>"...)
		name := jsjson.AppendUnquoted(nil, k)
		dst = escapeHTML(dst, name)
		dst = append(dst, "</code> "...)
		if typ := jsjson.Get(v, "type"); jsjson.Truthy(typ) {
			dst = escapeHTML(dst, appendJSString(nil, typ))
		} else {
			dst = append(dst, "any"...)
		}
		if required[string(name)] {
			dst = append(dst, " <span class=\"req\">required</span>"...)
		} else {
			dst = append(dst, " <span class=\"opt\">optional</span>"...)
		}
		if d := jsjson.Get(v, "description"); jsjson.Truthy(d) {
			dst = append(dst, ": "...)
			dst = appendTextInline(dst, d)
		}
		dst = append(dst, "</li>\n"...)
		return true
	})
	return append(dst, "</ul>\n"...)
}

// hasMembers tells whether a JSON object has a member.
func hasMembers(obj []byte) bool {
	found := false
	jsjson.Members(obj, func(_, _ []byte) bool { found = true; return false })
	return found
}

// appendToolNames appends " <sign><name>" for each tool of a list,
// escaped.
func appendToolNames(dst, list []byte, sign byte) []byte {
	jsjson.Elements(list, func(t []byte) bool {
		dst = append(dst, ' ')
		if sign != 0 {
			dst = append(dst, sign)
		}
		dst = appendTextInline(dst, jsjson.Get(t, "name"))
		return true
	})
	return dst
}

// appendCallPreview appends what a tool call does, in a line, as pi's
// page heads it: a bash call's command ("$ command"), another call's
// path; nothing for others.
func appendCallPreview(dst, name, args []byte) []byte {
	v, prefix := jsjson.Get(args, "path"), ""
	if jsjson.StringIs(name, "bash") {
		v, prefix = jsjson.Get(args, "command"), "$ "
	}
	if jsjson.KindOf(v) != jsjson.String {
		return dst
	}
	dst = append(dst, "<code class=\"preview\">"...)
	dst = append(dst, prefix...)
	dst = appendTextInline(dst, v)
	return append(dst, "</code> "...)
}

// appendImageHTML shows the n-th image block of entry e: inline, as a
// data: URI, when its type is PNG, JPEG, GIF or WebP and its first bytes
// are that format's; else (an SVG, a type its bytes belie, broken data)
// as a note naming its file.
func appendImageHTML(dst []byte, e *sessions.Entry, n int, p *parts.Part) []byte {
	mime, ok := sniffImage(p.Mime, p.Data)
	if ok {
		dst = append(dst, "<figure class=\"image\"><img src=\"data:"...)
		dst = append(dst, mime...)
		dst = append(dst, ";base64,"...)
		dst = appendImageText(dst, p.Data)
		dst = append(dst, "\" alt=\"image "...)
		dst = append(dst, mime...)
		return append(dst, "\"></figure>\n"...)
	}
	dst = append(dst, "<p class=\"image\">[image "...)
	dst = appendTextInline(dst, p.Mime)
	if _, valid := ImageSize(p.Data); !valid {
		dst = append(dst, ": not valid base64"...)
	} else if e.ID != "" {
		dst = append(dst, ": not shown inline, see <code>images/"...)
		dst = escapeHTML(dst, []byte(ImageName(e.ID, n, p.Mime)))
		dst = append(dst, "</code>"...)
	}
	return append(dst, "]</p>\n"...)
}

// appendPartHTML appends one part of an entry (not an image).
func appendPartHTML(dst []byte, p *parts.Part) []byte {
	switch p.Kind {
	case parts.Text:
		return appendMarkdown(dst, p.Value)
	case parts.Thinking:
		dst = append(dst, "<details class=\"thinking\"><summary>thinking</summary>\n"...)
		dst = appendText(dst, "text", p.Value)
		return append(dst, "</details>\n"...)
	case parts.ToolCall:
		dst = append(dst, "<details class=\"tool-call\""...)
		if id, ok := jsjson.StringValue(p.ID); ok && id != "" {
			dst = append(dst, " id=\""...)
			dst = callAnchor(dst, "c-", id)
			dst = append(dst, '"')
		}
		dst = append(dst, "><summary>tool call <code>"...)
		dst = appendTextInline(dst, p.Name)
		dst = append(dst, "</code> "...)
		dst = appendCallPreview(dst, p.Name, p.Args)
		dst = append(dst, "<span class=\"call-id\">"...)
		dst = appendTextInline(dst, p.ID)
		dst = append(dst, "</span>"...)
		if id, ok := jsjson.StringValue(p.ID); ok && id != "" {
			dst = append(dst, " <a href=\"#"...)
			dst = callAnchor(dst, "r-", id)
			dst = append(dst, "\">result</a>"...)
		}
		dst = append(dst, "</summary>\n<pre>"...)
		dst = escapeIndented(dst, p.Args)
		return append(dst, "</pre>\n</details>\n"...)
	case parts.Block:
		dst = append(dst, "<pre class=\"block\">"...)
		dst = escapeIndented(dst, p.Block)
		return append(dst, "</pre>\n"...)
	case parts.Error:
		return appendText(dst, "text error", p.Value)
	case parts.Command:
		dst = append(dst, "<pre class=\"command\">$ "...)
		dst = appendTextInline(dst, p.Value)
		return append(dst, "</pre>\n"...)
	case parts.Output:
		dst = append(dst, "<details class=\"output\" open><summary>output</summary>\n"...)
		dst = appendText(dst, "pre", p.Value)
		return append(dst, "</details>\n"...)
	case parts.Summary:
		return appendMarkdown(dst, p.Value)
	}
	return dst
}

// appendMetaHTML shows an entry that adds no message (a model or thinking
// level change, a label, a name, …) as one line.
func appendMetaHTML(dst []byte, h *parts.Head) []byte {
	e := h.Entry
	dst = append(dst, "<div class=\"entry meta\""...)
	if e.ID != "" {
		dst = append(dst, " id=\""...)
		dst = anchor(dst, e.ID)
		dst = append(dst, '"')
	}
	dst = append(dst, "><span class=\"role\">"...)
	dst = escapeHTML(dst, []byte(h.Who))
	dst = append(dst, "</span> "...)
	switch e.Type {
	case schema.TypeModelChange:
		dst = append(dst, "→ <code>"...)
		if dst = appendTextInline(dst, h.Provider); len(h.Provider) > 0 {
			dst = append(dst, '/')
		}
		dst = appendTextInline(dst, h.ModelID)
		dst = append(dst, "</code>"...)
	case schema.TypeThinkingLevelChange:
		dst = append(dst, "→ "...)
		dst = appendCode(dst, h.ThinkingLevel)
	case schema.TypeLabel:
		if n := len(dst); len(appendLabel(dst, h.Label)) == n {
			dst = append(dst, "cleared"...)
		} else {
			dst = appendLabel(dst, h.Label)
		}
		dst = appendRef(dst, " on ", h.Ref)
	case schema.TypeSessionInfo:
		if n := len(dst); len(appendTextInline(dst, h.Name)) == n {
			dst = append(dst, "name cleared"...)
		} else {
			dst = append(dst, "name → <b>"...)
			dst = appendTextInline(dst, h.Name)
			dst = append(dst, "</b>"...)
		}
	case schema.TypeCustom:
		dst = appendCode(dst, h.CustomType)
	case schema.TypeUsage:
		dst = appendCode(dst, h.Model)
		dst = appendUsage(dst, h.Usage, decodedUsage{})
	case schema.TypeContextEdit:
		dst = appendRef(dst, "of ", h.Ref)
	}
	dst = appendLink(dst, e)
	return append(dst, "</div>\n"...)
}

// entryStart opens an entry's article and its heading line.
func entryStart(dst []byte, e *sessions.Entry, class, who string) []byte {
	dst = append(dst, "<article class=\"entry "...)
	dst = append(dst, class...)
	dst = append(dst, '"')
	if e.ID != "" {
		dst = append(dst, " id=\""...)
		dst = anchor(dst, e.ID)
		dst = append(dst, '"')
	}
	dst = append(dst, ">\n<div class=\"who\"><span class=\"role\">"...)
	dst = append(dst, who...)
	return append(dst, "</span>"...)
}

// entryBody ends the heading line with the entry's link and time.
func entryBody(dst []byte, e *sessions.Entry) []byte {
	dst = appendLink(dst, e)
	return append(dst, "</div>\n"...)
}

func entryEnd(dst []byte) []byte { return append(dst, "</article>\n"...) }

// appendLink writes the entry's id as a link to itself, and its time.
func appendLink(dst []byte, e *sessions.Entry) []byte {
	if e.ID != "" {
		dst = append(dst, " <a class=\"id\" href=\"#"...)
		dst = anchor(dst, e.ID)
		dst = append(dst, "\">"...)
		dst = escapeHTML(dst, []byte(e.ID))
		dst = append(dst, "</a>"...)
	}
	if ms := dateValue(e.Timestamp); !math.IsNaN(ms) {
		dst = append(dst, " <time datetime=\""...)
		n := len(dst)
		dst = appendISO(dst, ms)
		dst = append(dst, "\">"...)
		dst = append(dst, dst[n:len(dst)-2]...)
		dst = append(dst, "</time>"...)
	}
	return dst
}

// appendCode appends "<code>text</code>".
func appendCode(dst, v []byte) []byte {
	dst = append(dst, "<code>"...)
	dst = appendTextInline(dst, v)
	return append(dst, "</code>"...)
}

// appendLabel appends " <code>text</code>" when v has text.
func appendLabel(dst, v []byte) []byte {
	start := len(dst)
	dst = append(dst, " <code>"...)
	n := len(dst)
	if dst = appendTextInline(dst, v); len(dst) == n {
		return dst[:start]
	}
	return append(dst, "</code>"...)
}

// appendRef links to the entry whose id is the string v.
func appendRef(dst []byte, before string, v []byte) []byte {
	id, ok := jsjson.StringValue(v)
	if !ok || id == "" {
		return dst
	}
	dst = append(dst, before...)
	dst = append(dst, "<a href=\"#"...)
	dst = anchor(dst, id)
	dst = append(dst, "\">"...)
	dst = escapeHTML(dst, []byte(id))
	return append(dst, "</a>"...)
}

// appendUsage shows one message's tokens and cost.
func appendUsage(dst, v []byte, pre decodedUsage) []byte {
	if jsjson.KindOf(v) != jsjson.Object {
		return dst
	}
	u, hasCost := pre.u, pre.hasCost
	if !pre.ok {
		u, hasCost = tree.DecodeUsage(v)
	}
	dst = append(dst, " <span class=\"usage\">"...)
	dst = appendCount(dst, u.Total)
	dst = append(dst, " tokens"...)
	if hasCost {
		dst = append(dst, " · $"...)
		dst = strconv.AppendFloat(dst, u.Cost, 'f', 4, 64)
	}
	return append(dst, "</span>"...)
}

// escapeIndented appends raw JSON indented and escaped.
func escapeIndented(dst, raw []byte) []byte {
	bp := getScratch()
	defer putScratch(bp)
	*bp = Indent((*bp)[:0], raw)
	return escapeHTML(dst, *bp)
}

// appendText appends the text of a value (see appendStr) as a
// <div class="class">, nothing when it is empty.
func appendText(dst []byte, class string, v []byte) []byte {
	start := len(dst)
	dst = append(dst, "<div class=\""...)
	dst = append(dst, class...)
	dst = append(dst, "\">"...)
	n := len(dst)
	if dst = appendTextInline(dst, v); len(dst) == n {
		return dst[:start]
	}
	return append(dst, "</div>\n"...)
}

// appendTextInline appends the text of a value, escaped.
func appendTextInline(dst, v []byte) []byte {
	switch jsjson.KindOf(v) {
	case jsjson.Invalid, jsjson.Null:
		return dst
	case jsjson.String:
		body := v[1 : len(v)-1]
		if bytes.IndexByte(body, '\\') < 0 {
			return escapeHTML(dst, body)
		}
		// Unescaped into scratch, escaped into dst: a long text is not
		// held twice at the end of the page.
		bp := getScratch()
		defer putScratch(bp)
		*bp = jsjson.AppendUnquoted((*bp)[:0], v)
		return escapeHTML(dst, *bp)
	}
	return escapeHTML(dst, v)
}

// htmlSpecial marks the ASCII bytes escapeHTML replaces: markup
// characters and controls other than tab, newline and carriage return.
var htmlSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = c != '\t' && c != '\n' && c != '\r'
	}
	t['&'], t['<'], t['>'], t['"'], t[0x7f] = true, true, true, true, true
	return t
}()

// escapeHTML appends s as HTML text (fit for attribute values too):
// markup characters as entities, control characters as their Unicode
// pictures (␀, ␛, …) so they stay visible without making the page invalid,
// and invalid UTF-8 as U+FFFD.
func escapeHTML(dst, s []byte) []byte {
	return escapeHTMLIn(dst, s, utf8.Valid(s))
}

// escapeValidHTML is escapeHTML of s known to be valid UTF-8.
func escapeValidHTML(dst, s []byte) []byte { return escapeHTMLIn(dst, s, true) }

// escapeHTMLIn is escapeHTML with s's validity as UTF-8 known.
func escapeHTMLIn(dst, s []byte, valid bool) []byte {
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs escaping.
		if valid {
			for i+8 <= len(s) && htmlPlain8(binary.LittleEndian.Uint64(s[i:])) {
				i += 8
			}
			if i >= len(s) {
				break
			}
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			if valid {
				i++
				continue
			}
			r, n := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || n != 1 {
				i += n
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		if !htmlSpecial[c] {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&quot;"...)
		case 0x7f:
			dst = append(dst, "\u2421"...)
		default:
			dst = utf8.AppendRune(dst, 0x2400+rune(c))
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// htmlPlain8 reports whether none of the eight bytes in x is one that
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// escapeHTML replaces (bytes from 0x80 up count as plain: the caller has
// checked that the text is valid UTF-8). "Has a byte less than n" and "has
// a zero byte" are the classic word tricks; '<' and '>' differ in one bit,
// and so do '"' and '&', so that setting that bit tests each pair at once.
func htmlPlain8(x uint64) bool {
	less := (x - 0x20*lsb) &^ x
	angle := (x | 0x02*lsb) ^ ('>' * lsb)
	amp := (x | 0x04*lsb) ^ ('&' * lsb)
	del := x ^ (0x7f * lsb)
	return (less|(angle-lsb)&^angle|(amp-lsb)&^amp|(del-lsb)&^del)&msb == 0
}
