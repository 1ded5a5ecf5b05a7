package render

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// transcript.html is one self-contained page: inline CSS, no script, no
// URL outside the page (a Content-Security-Policy forbids loading any), and
// every text from the session HTML-escaped, so nothing a session holds can
// add markup or script.
//
// The page is three pieces, HTMLHead + one AppendEntryHTML per entry of
// the path + HTMLFoot. The head depends on the session only (its name, id
// and working directory), each entry's piece on that entry only, and the
// foot on the whole path: it closes the page with the path's models and
// token and cost totals, which the stylesheet shows at the top, under the
// head. How to serve a session that grows (issue 11): the page of a longer
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
	return transcriptHTML(p, path, partsFor(rawBytes(path), htmlMinBytes))
}

// transcriptHTML renders the page with the path cut into parts.
func transcriptHTML(p Page, path []*sessions.Entry, parts int) []byte {
	b := pathParts(path, parts)
	if len(b) <= 2 {
		dst := HTMLHead(make([]byte, 0, htmlCap(path)), p)
		var sum partSummary
		for _, e := range path {
			dst = appendSummed(dst, e, &sum)
		}
		return htmlFoot(dst, path, sumParts([]partSummary{sum}))
	}
	bufs := make([][]byte, len(b)+1)
	sums := make([]partSummary, len(b)-1)
	par.Each(len(sums), func(k int) {
		run := path[b[k]:b[k+1]]
		dst := make([]byte, 0, htmlCap(run))
		sums[k].keep = true
		for _, e := range run {
			dst = appendSummed(dst, e, &sums[k])
		}
		bufs[k+1] = dst
	})
	bufs[0] = HTMLHead(nil, p)
	bufs[len(bufs)-1] = htmlFoot(nil, path, sumParts(sums))
	return concat(bufs...)
}

// htmlCap is about the size of the entries' pieces of a page: one
// allocation avoids regrowing a 100 MB buffer several times.
func htmlCap(path []*sessions.Entry) int {
	n := 8 << 10
	for _, e := range path {
		n += len(e.Raw) + len(e.Raw)/8 + 256
	}
	return n
}

// HTMLHead appends the start of the page, up to where the entries go.
func HTMLHead(dst []byte, p Page) []byte {
	title := p.Name
	if title == "" {
		title = "pi session " + p.ID
	}
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"pifs\">\n<title>"...)
	dst = escapeHTML(dst, []byte(title))
	dst = append(dst, "</title>\n<style>"...)
	dst = append(dst, css...)
	dst = append(dst, "</style>\n</head>\n<body>\n<header class=\"session\">\n<h1>"...)
	if p.Name != "" {
		dst = escapeHTML(dst, []byte(p.Name))
	} else {
		dst = append(dst, "<span class=\"unnamed\">Unnamed session</span>"...)
	}
	dst = append(dst, "</h1>\n<dl>\n<dt>id</dt><dd><code>"...)
	dst = escapeHTML(dst, []byte(p.ID))
	dst = append(dst, "</code></dd>\n<dt>cwd</dt><dd><code>"...)
	dst = escapeHTML(dst, []byte(p.Cwd))
	return append(dst, "</code></dd>\n</dl>\n</header>\n<main>\n"...)
}

// HTMLFoot appends the end of the page: the path's models and totals.
func HTMLFoot(dst []byte, path []*sessions.Entry) []byte {
	return htmlFoot(dst, path, summarize(path))
}

// htmlFoot is HTMLFoot with the path's summary given.
func htmlFoot(dst []byte, path []*sessions.Entry, s pathSummary) []byte {
	dst = append(dst, "</main>\n<section class=\"summary\" aria-label=\"Totals\">\n<dl>\n<dt>entries</dt><dd>"...)
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
	return append(dst, "</td></tr>\n</table>\n</section>\n</body>\n</html>\n"...)
}

type modelCount struct {
	name  string
	count int
}

type pathSummary struct {
	usage    tree.Usage
	messages int
	models   []modelCount // in order of first use
}

// summarize totals a path's usage as tree.Usage counts a session's (pi's
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
	usage    tree.Usage
	usages   []tree.Usage
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
	case "usage":
		s.model(e.Get("provider"), e.Get("model"))
	case "message":
		s.messages++
		if e.Role == "assistant" {
			s.model(e.MsgProvider, e.MsgModel)
		}
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

func strValue(v []byte) (string, bool) {
	if jsjson.KindOf(v) != jsjson.String {
		return "", false
	}
	s, err := jsjson.Unquote(v)
	return s, err == nil
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
	u           tree.Usage
	hasCost, ok bool
}

// appendSummed appends an entry's piece of the page and adds the entry to
// the totals of s.
func appendSummed(dst []byte, e *sessions.Entry, s *partSummary) []byte {
	var pre decodedUsage
	if e.Type == "message" && e.Role == "assistant" {
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
	switch e.Type {
	case "message":
		return appendMessageHTML(dst, e, pre)
	case "custom_message":
		var customType, content []byte
		for it := jsjson.IterMembers(e.Raw); ; {
			k, v, ok := it.Next()
			if !ok {
				break
			}
			switch string(jsjson.KeyName(k)) {
			case "customType":
				customType = v
			case "content":
				content = v
			}
		}
		dst = entryStart(dst, e, "custom-message", "custom message")
		dst = appendLabel(dst, customType)
		dst = entryBody(dst, e)
		dst = appendContentHTML(dst, content, false)
		return entryEnd(dst)
	case "branch_summary", "compaction":
		var summary, ref []byte
		for it := jsjson.IterMembers(e.Raw); ; {
			k, v, ok := it.Next()
			if !ok {
				break
			}
			switch string(jsjson.KeyName(k)) {
			case "summary":
				summary = v
			case "fromId", "firstKeptEntryId":
				ref = v
			}
		}
		if e.Type == "compaction" {
			dst = entryStart(dst, e, "compaction", "compaction")
			dst = appendRef(dst, "kept from ", ref)
		} else {
			dst = entryStart(dst, e, "branch-summary", "branch summary")
			dst = appendRef(dst, "of the branch from ", ref)
		}
		dst = entryBody(dst, e)
		dst = appendText(dst, "text", summary)
		return entryEnd(dst)
	}
	return appendMetaHTML(dst, e)
}

// appendMetaHTML shows an entry that adds no message (a model or thinking
// level change, a label, a name, …) as one line.
func appendMetaHTML(dst []byte, e *sessions.Entry) []byte {
	var f [4][]byte
	var fields []string
	switch e.Type {
	case "model_change":
		fields = []string{"provider", "modelId"}
	case "thinking_level_change":
		fields = []string{"thinkingLevel"}
	case "label":
		fields = []string{"label", "targetId"}
	case "session_info":
		fields = []string{"name"}
	case "custom":
		fields = []string{"customType"}
	case "usage":
		fields = []string{"provider", "model", "usage"}
	case "context_edit":
		fields = []string{"targetId"}
	}
	for it := jsjson.IterMembers(e.Raw); len(fields) > 0; {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		key := jsjson.KeyName(k)
		for i, name := range fields {
			if string(key) == name {
				f[i] = v
			}
		}
	}
	kind := e.Type
	if kind == "" {
		kind = e.Kind()
	}
	dst = append(dst, "<div class=\"entry meta\""...)
	if e.ID != "" {
		dst = append(dst, " id=\""...)
		dst = anchor(dst, e.ID)
		dst = append(dst, '"')
	}
	dst = append(dst, "><span class=\"role\">"...)
	dst = escapeHTML(dst, []byte(strings.ReplaceAll(kind, "_", " ")))
	dst = append(dst, "</span> "...)
	switch e.Type {
	case "model_change":
		dst = append(dst, "→ <code>"...)
		if dst = appendTextInline(dst, f[0]); len(f[0]) > 0 {
			dst = append(dst, '/')
		}
		dst = appendTextInline(dst, f[1])
		dst = append(dst, "</code>"...)
	case "thinking_level_change":
		dst = append(dst, "→ <code>"...)
		dst = appendTextInline(dst, f[0])
		dst = append(dst, "</code>"...)
	case "label":
		if n := len(dst); len(appendLabel(dst, f[0])) == n {
			dst = append(dst, "cleared"...)
		} else {
			dst = appendLabel(dst, f[0])
		}
		dst = appendRef(dst, " on ", f[1])
	case "session_info":
		if n := len(dst); len(appendTextInline(dst, f[0])) == n {
			dst = append(dst, "name cleared"...)
		} else {
			dst = append(dst, "name → <b>"...)
			dst = appendTextInline(dst, f[0])
			dst = append(dst, "</b>"...)
		}
	case "custom":
		dst = append(dst, "<code>"...)
		dst = appendTextInline(dst, f[0])
		dst = append(dst, "</code>"...)
	case "usage":
		dst = append(dst, "<code>"...)
		dst = appendTextInline(dst, f[1])
		dst = append(dst, "</code>"...)
		dst = appendUsage(dst, f[2], decodedUsage{})
	case "context_edit":
		dst = appendRef(dst, "of ", f[0])
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
	id, ok := strValue(v)
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

func appendMessageHTML(dst []byte, e *sessions.Entry, pre decodedUsage) []byte {
	var errorMessage, toolName, isError, command, output, exitCode, summary []byte
	it := jsjson.IterMembers(e.Msg)
	it.Known(e.MsgContent, e.MsgUsage)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		switch string(jsjson.KeyName(k)) {
		case "errorMessage":
			errorMessage = v
		case "toolName":
			toolName = v
		case "isError":
			isError = v
		case "command":
			command = v
		case "output":
			output = v
		case "exitCode":
			exitCode = v
		case "summary":
			summary = v
		}
	}
	switch e.Role {
	case "user", "assistant", "custom", "system":
		dst = entryStart(dst, e, e.Role, e.Role)
		if e.Role == "assistant" {
			if m := e.MsgModel; jsjson.KindOf(m) == jsjson.String {
				dst = append(dst, " <span class=\"model\">"...)
				dst = appendTextInline(dst, m)
				dst = append(dst, "</span>"...)
			}
			dst = appendUsage(dst, e.MsgUsage, pre)
		}
		dst = entryBody(dst, e)
		dst = appendContentHTML(dst, e.MsgContent, false)
		dst = appendText(dst, "text error", errorMessage)
		return entryEnd(dst)
	case "toolResult":
		class, bad := "tool-result", jsjson.Truthy(isError)
		if bad {
			class = "tool-result failed"
		}
		dst = entryStart(dst, e, class, "tool result")
		dst = appendLabel(dst, toolName)
		if bad {
			dst = append(dst, " <span class=\"badge\">error</span>"...)
		}
		dst = entryBody(dst, e)
		dst = append(dst, "<details class=\"output\" open><summary>output</summary>\n"...)
		dst = appendContentHTML(dst, e.MsgContent, true)
		dst = append(dst, "</details>\n"...)
		return entryEnd(dst)
	case "bashExecution":
		dst = entryStart(dst, e, "bash", "bash")
		if exitCode != nil && jsjson.KindOf(exitCode) != jsjson.Null {
			dst = append(dst, " <span class=\"exit\">exit "...)
			dst = escapeHTML(dst, exitCode)
			dst = append(dst, "</span>"...)
		}
		dst = entryBody(dst, e)
		dst = append(dst, "<pre class=\"command\">$ "...)
		dst = appendTextInline(dst, command)
		dst = append(dst, "</pre>\n<details class=\"output\" open><summary>output</summary>\n"...)
		dst = appendText(dst, "pre", output)
		dst = append(dst, "</details>\n"...)
		return entryEnd(dst)
	case "branchSummary", "compactionSummary":
		dst = entryStart(dst, e, "branch-summary", e.Role)
		dst = entryBody(dst, e)
		dst = appendText(dst, "text", summary)
		dst = appendContentHTML(dst, e.MsgContent, false)
		return entryEnd(dst)
	}
	dst = entryStart(dst, e, "other", string(escapeHTML(nil, []byte(e.Kind()))))
	dst = entryBody(dst, e)
	dst = appendContentHTML(dst, e.MsgContent, false)
	return entryEnd(dst)
}

// appendContentHTML appends a message's content: a string, or blocks of
// text, thinking, tool calls and images. pre shows text as program output.
func appendContentHTML(dst, c []byte, pre bool) []byte {
	textClass := "text"
	if pre {
		textClass = "pre"
	}
	if jsjson.KindOf(c) != jsjson.Array {
		return appendText(dst, textClass, c)
	}
	for blocks := jsjson.IterElements(c); ; {
		b, ok := nextBlock(&blocks)
		if !ok {
			return dst
		}
		switch {
		case jsjson.StringIs(b.typ, "text"):
			dst = appendText(dst, textClass, b.text)
		case jsjson.StringIs(b.typ, "thinking"):
			dst = append(dst, "<details class=\"thinking\"><summary>thinking</summary>\n"...)
			dst = appendText(dst, "text", b.thinking)
			dst = append(dst, "</details>\n"...)
		case jsjson.StringIs(b.typ, "toolCall"):
			dst = append(dst, "<details class=\"tool-call\"><summary>tool call <code>"...)
			dst = appendTextInline(dst, b.name)
			dst = append(dst, "</code> <span class=\"call-id\">"...)
			dst = appendTextInline(dst, b.id)
			dst = append(dst, "</span></summary>\n<pre>"...)
			if b.args == nil {
				b.args = []byte("{}")
			}
			dst = escapeIndented(dst, b.args)
			dst = append(dst, "</pre>\n</details>\n"...)
		case jsjson.StringIs(b.typ, "image"):
			dst = append(dst, "<p class=\"image\">[image "...)
			dst = appendTextInline(dst, b.mime)
			dst = append(dst, "]</p>\n"...)
		default:
			dst = append(dst, "<pre class=\"block\">"...)
			dst = escapeIndented(dst, b.raw)
			dst = append(dst, "</pre>\n"...)
		}
	}
}

// escapeIndented appends raw JSON indented and escaped.
func escapeIndented(dst, raw []byte) []byte {
	n := len(dst)
	dst = Indent(dst, raw)
	m := len(dst)
	dst = escapeHTML(dst, dst[n:m])
	k := copy(dst[n:], dst[m:])
	return dst[:n+k]
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
		// Unescape past the end of dst, escape after that, move it back.
		n := len(dst)
		dst = jsjson.AppendUnquoted(dst, v)
		m := len(dst)
		dst = escapeHTML(dst, dst[n:m])
		k := copy(dst[n:], dst[m:])
		return dst[:n+k]
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
	valid := utf8.Valid(s)
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
