package render

import (
	"bytes"
	"math"
	"runtime"
	"strconv"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// tree.txt and its filter variants: pi's /tree selector as text. A row is
// what the selector draws for an entry (its indentation and connectors,
// "• " on the active path, "[label] ", pi's text for the entry), then a tab
// and the entry's id, so that `cut -f2` or `awk '{print $NF}'` gives ids to
// write to leaf. A file has no terminal width: rows are never cut to one,
// and the line feeds, carriage returns and tabs that pi leaves in some
// texts become spaces, so that a row is one line. A filter that lists nothing
// gives pi's one line for it, "No entries found", without a tab or an id.
// tree-times.txt is tree.txt's rows with the label timestamps pi shows on
// its T key.

// textUnits is how much of a message's text a row shows, in UTF-16 code
// units (pi's extractContent).
const textUnits = 200

// noEntries is what the selector draws when a filter lists nothing; a
// view then holds it as its one line (with no tab and no id).
const noEntries = "No entries found"

// TreeText is the selector's view of t with filter f and leaf as the
// active leaf (t.FileLeafID() for the session's own view, a branch's tip
// for that branch's). home is the user's home directory, which pi writes
// as "~" in the paths of tool calls ("" for none).
func TreeText(t *tree.Tree, leaf string, f tree.Filter, home string) []byte {
	return treeText(t, leaf, f, home, nil)
}

// TimesFileName is the view of tree.txt's rows with the label timestamps
// pi shows when its T key is on (see TreeTimesText).
const TimesFileName = "tree-times.txt"

// TreeTimesText is TreeText with the label timestamps shown, as pi's
// selector draws its rows when its T key is on: after a label, the time
// its label entry was written, in loc, as pi's formatLabelTimestamp
// writes it relative to now: "15:04" on now's day, "5/12 15:04" earlier
// in now's year, "24/5/12 15:04" before. A rendering at now holds until
// LabelTimesExpire(now, loc).
func TreeTimesText(t *tree.Tree, leaf string, f tree.Filter, home string, loc *time.Location, now time.Time) []byte {
	return treeText(t, leaf, f, home, newLabelClock(loc, now))
}

// LabelTimesExpire is when a view of label timestamps made at now may
// read differently: the next midnight in loc, when "today" (and maybe the
// year) changes.
func LabelTimesExpire(now time.Time, loc *time.Location) time.Time {
	n := now.In(loc)
	return time.Date(n.Year(), n.Month(), n.Day()+1, 0, 0, 0, 0, loc)
}

func treeText(t *tree.Tree, leaf string, f tree.Filter, home string, clock *labelClock) []byte {
	s := t.Selector(leaf, f)
	if len(s.Rows) == 0 {
		return []byte(noEntries + "\n")
	}
	b := rowParts(len(s.Rows))
	bufs := make([][]byte, len(b)-1)
	par.Each(len(bufs), func(k int) {
		est := 0
		for i := b[k]; i < b[k+1]; i++ {
			est += s.Rows[i].Indent*5 + rowBytes
		}
		buf := make([]byte, 0, est)
		for i := b[k]; i < b[k+1]; i++ {
			r := &s.Rows[i]
			buf = appendRowBodyAt(r.AppendPrefix(buf), len(buf), s, r, home, clock)
		}
		bufs[k] = buf
	})
	return concat(bufs...)
}

// TreeTextSizes are the sizes of the five views of t with leaf as the
// active leaf, by filter mode (tree.Filters' order): len(TreeText(t, leaf,
// f, home)) for each f, counted together without keeping a view. A row is
// its indentation, which the mode lays out, then a text that is the same
// in every mode that lists the entry; the selectors share one walk, and
// each entry's text is counted once, in the mode that lists every entry
// any mode lists (FilterAll), together with the session page's tree (see
// rowSizes).
func TreeTextSizes(t *tree.Tree, leaf string, home string) []int64 {
	return TreeViewSizes(t, leaf, home, nil, time.Time{}).Filters
}

// TreeSizes are the sizes of the six /tree views of one active leaf.
type TreeSizes struct {
	// Filters are len(TreeText(t, leaf, f, home)), by filter mode.
	Filters []int64
	// Times is len(TreeTimesText(t, leaf, tree.FilterDefault, home, loc,
	// now)): tree-times.txt.
	Times int64
}

// TreeViewSizes counts the five views of TreeTextSizes and tree-times.txt
// (tree.txt's rows with label timestamps at now in loc) in the same pass:
// the times view is tree.txt's size and the time of each labelled row. A
// nil loc counts no times view (Times is 0).
func TreeViewSizes(t *tree.Tree, leaf string, home string, loc *time.Location, now time.Time) TreeSizes {
	sels := t.Selectors(leaf)
	body := sizesOfRows(sels[tree.FilterAll], home).body
	sizes := make([]int64, len(sels))
	var times int64
	var clock *labelClock
	if loc != nil {
		clock = newLabelClock(loc, now)
	}
	count := func(f int) {
		rows := sels[f].Rows
		if len(rows) == 0 {
			sizes[f] = int64(len(noEntries) + 1)
			if f == int(tree.FilterDefault) {
				times = sizes[f]
			}
			return
		}
		bp := getScratch()
		defer putScratch(bp)
		var n, stamps int64
		for i := range rows {
			r := &rows[i]
			*bp = r.AppendPrefix((*bp)[:0])
			n += int64(len(*bp)) + body[r.Node.Seq]
			if f == int(tree.FilterDefault) && clock != nil {
				*bp = clock.appendLabelTime((*bp)[:0], t, r.Node.ID)
				stamps += int64(len(*bp))
			}
		}
		sizes[f] = n
		if f == int(tree.FilterDefault) {
			times = n + stamps
		}
	}
	if len(sels[tree.FilterAll].Rows) < parRows {
		for f := range sels {
			count(f)
		}
	} else {
		par.Each(len(sels), count)
	}
	if clock == nil {
		times = 0
	}
	return TreeSizes{Filters: sizes, Times: times}
}

// rowSizes are what the rows of one selector of mode all count to: each
// entry's row past its indentation as tree.txt writes it with the user's
// home, by Seq, and the rows of the session page's tree (appendNavRow's,
// which writes paths whole) all together. The five tree views and the
// page count the same rows for one active leaf, so a row's text is made
// once for all of them, made again only where pi wrote a path from "~".
type rowSizes struct {
	body []int64
	nav  int64
	navs []int64 // nav's parts', cut as rowParts cuts the rows
}

// rowSizesKey is the key of rowSizes in a selector's Memo.
type rowSizesKey struct{ home string }

// sizesOfRows is the rowSizes of all (a FilterAll selector) with home,
// counted the first time they are asked for on it.
func sizesOfRows(all *tree.Selector, home string) *rowSizes {
	return all.Memo(rowSizesKey{home}, func() any { return countRows(all, home) }).(*rowSizes)
}

func countRows(all *tree.Selector, home string) *rowSizes {
	t := all.Tree()
	rs := &rowSizes{}
	if ents := t.Entries(); len(ents) > 0 {
		rs.body = make([]int64, ents[len(ents)-1].Seq+1)
	}
	b := rowParts(len(all.Rows))
	navs := make([]int64, len(b)-1)
	par.Each(len(navs), func(k int) {
		bp, np := getScratch(), getScratch()
		defer putScratch(bp)
		defer putScratch(np)
		for i := b[k]; i < b[k+1]; i++ {
			r := &all.Rows[i]
			*bp = appendRowBody((*bp)[:0], 0, all, r, home)
			rs.body[r.Node.Seq] = int64(len(*bp))
			if home != "" && bytes.IndexByte(*bp, '~') >= 0 {
				// A path pi writes from "~" with home: the page's is whole.
				*bp = appendRowBody((*bp)[:0], 0, all, r, "")
			}
			*np = navRowOf((*np)[:0], t, r, *bp)
			navs[k] += int64(len(*np))
		}
	})
	for _, n := range navs {
		rs.nav += n
	}
	rs.navs = navs
	return rs
}

// A view of fewer rows than parRows is done on the caller's goroutine.
// A part's buffer is made for rowBytes a row besides its indentation (at
// most five bytes a level): most rows show 200 units of text.
const (
	parRows  = 4096
	rowBytes = 240
)

// rowParts cuts n rows into runs, one per part.
func rowParts(n int) []int {
	parts := 1
	if n >= parRows {
		parts = runtime.GOMAXPROCS(0) * partsPerCore
	}
	return par.Ranges(n, parts, func(int) int { return 1 })
}

// appendTreeRow appends one row and its line feed.
func appendTreeRow(dst []byte, s *tree.Selector, r *tree.Row, home string) []byte {
	return appendRowBody(r.AppendPrefix(dst), len(dst), s, r, home)
}

// appendRowBody appends what follows a row's indentation, which row
// start begins: the same in every filter mode's view for one active leaf.
func appendRowBody(dst []byte, start int, s *tree.Selector, r *tree.Row, home string) []byte {
	return appendRowBodyAt(dst, start, s, r, home, nil)
}

// appendRowBodyAt is appendRowBody with the label's time shown after the
// label when clock is not nil (pi's T key).
func appendRowBodyAt(dst []byte, start int, s *tree.Selector, r *tree.Row, home string, clock *labelClock) []byte {
	if r.Active {
		dst = append(dst, "• "...)
	}
	if lab, ok := s.Tree().LabelValue(r.Node.ID); ok {
		dst = append(dst, '[')
		dst = appendJSString(dst, lab)
		dst = append(dst, "] "...)
		if clock != nil {
			dst = clock.appendLabelTime(dst, s.Tree(), r.Node.ID)
		}
	}
	dst = AppendEntryText(dst, s, r.Node, home)
	return appendID(dst, start, r.Node.ID)
}

// labelClock writes label timestamps as pi's formatLabelTimestamp does, in
// loc, relative to now there.
type labelClock struct {
	loc *time.Location
	now time.Time
}

func newLabelClock(loc *time.Location, now time.Time) *labelClock {
	return &labelClock{loc: loc, now: now.In(loc)}
}

// appendLabelTime appends the time of an entry's label and a space, when
// it is labelled and its label entry has a timestamp (a truthy one, as pi
// asks); nothing otherwise. An invalid date is written as JavaScript
// writes its parts: "aN/NaN/NaN NaN:NaN".
func (c *labelClock) appendLabelTime(dst []byte, t *tree.Tree, id string) []byte {
	l, ok := t.Label(id)
	if !ok || !jsjson.Truthy(l.Timestamp) {
		return dst
	}
	ms := jsjson.DateValue(l.Timestamp)
	if math.IsNaN(ms) {
		return append(dst, "aN/NaN/NaN NaN:NaN "...)
	}
	d := time.UnixMilli(int64(ms)).In(c.loc)
	if d.Year() == c.now.Year() && d.YearDay() == c.now.YearDay() {
		return append(appendClock(dst, d), ' ')
	}
	if d.Year() != c.now.Year() {
		y := strconv.Itoa(d.Year())
		dst = append(append(dst, y[max(0, len(y)-2):]...), '/')
	}
	dst = strconv.AppendInt(dst, int64(d.Month()), 10)
	dst = append(dst, '/')
	dst = strconv.AppendInt(dst, int64(d.Day()), 10)
	return append(appendClock(append(dst, ' '), d), ' ')
}

// appendClock appends "HH:MM".
func appendClock(dst []byte, d time.Time) []byte {
	h, m := d.Hour(), d.Minute()
	return append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}

// appendID ends the row that starts at dst[start]: its line feeds, carriage
// returns and tabs become spaces, then a tab, the id and a line feed.
func appendID(dst []byte, start int, id string) []byte {
	oneLine(dst[start:])
	dst = append(dst, '\t')
	k := len(dst)
	dst = append(dst, id...)
	oneLine(dst[k:])
	return append(dst, '\n')
}

// oneLine turns line feeds, carriage returns and tabs into spaces.
func oneLine(b []byte) {
	for i, c := range b {
		if c == '\n' || c == '\r' || c == '\t' {
			b[i] = ' '
		}
	}
}

// AppendEntryText appends what pi's /tree selector shows for an entry
// (getEntryDisplayText): "user: " or "assistant: " and the first 200 UTF-16
// units of the text, normalized; a tool result as its call
// ("[read: ~/src/a.go:10-20]"); a setting or bookkeeping entry in brackets.
// Where pi throws on a value of an unexpected type, pifs takes it as
// JavaScript's String() would, or takes tool-call arguments as {}.
func AppendEntryText(dst []byte, s *tree.Selector, n *tree.Node, home string) []byte {
	e := n.Entry
	switch e.Type {
	case schema.TypeMessage:
		m := e.Msg
		// The parse gives the role when it is a string other than "";
		// anything else is shown as JavaScript's String() shows it.
		if e.Role == "" {
			if role := jsjson.Get(m, "role"); jsjson.KindOf(role) != jsjson.String {
				return append(appendJSString(append(dst, '['), role), ']')
			}
		}
		switch e.Role {
		case schema.RoleUser:
			dst = append(dst, "user: "...)
			return normalizeFrom(appendContentStart(dst, e.MsgContent, textUnits), len(dst))
		case schema.RoleAssistant:
			dst = append(dst, "assistant: "...)
			k := len(dst)
			if dst = normalizeFrom(appendContentStart(dst, e.MsgContent, textUnits), k); len(dst) > k {
				return dst
			}
			if stop := jsjson.Get(m, "stopReason"); jsjson.KindOf(stop) == jsjson.String && jsjson.KeyIs(stop, "aborted") {
				return append(dst, "(aborted)"...)
			}
			if em := jsjson.Get(m, "errorMessage"); jsjson.Truthy(em) {
				return cutFrom(normalizeFrom(appendJSString(dst, em), k), k, 80)
			}
			return append(dst, "(no content)"...)
		case schema.RoleToolResult:
			if id := jsjson.Get(m, "toolCallId"); jsjson.Truthy(id) {
				if call := s.ToolCall(id); call != nil {
					return appendToolCall(dst, jsjson.Get(call, "name"), jsjson.Get(call, "arguments"), home)
				}
			}
			name := jsjson.Get(m, "toolName")
			if k := jsjson.KindOf(name); k == jsjson.Null || k == jsjson.Invalid {
				name = []byte(`"tool"`)
			}
			return append(appendJSString(append(dst, '['), name), ']')
		case schema.RoleBashExecution:
			cmd := jsjson.Get(m, "command")
			if k := jsjson.KindOf(cmd); k == jsjson.Null || k == jsjson.Invalid {
				cmd = []byte(`""`)
			}
			dst = append(dst, "[bash]: "...)
			return normalizeFrom(appendJSString(dst, cmd), len(dst))
		}
		return append(append(append(dst, '['), e.Role...), ']')
	case schema.TypeCustomMessage:
		dst = append(appendJSString(append(dst, '['), e.Get("customType")), "]: "...)
		return normalizeFrom(appendCustomContent(dst, e.Get("content")), len(dst))
	case schema.TypeCompaction:
		k := jsRound(jsjson.ToNumber(e.Get("tokensBefore")) / 1000)
		return append(appendJSNumber(append(dst, "[compaction: "...), k), "k tokens]"...)
	case schema.TypeBranchSummary:
		dst = append(dst, "[branch summary]: "...)
		return normalizeFrom(appendJSString(dst, e.Get("summary")), len(dst))
	case schema.TypeModelChange:
		return append(appendJSString(append(dst, "[model: "...), e.Get("modelId")), ']')
	case schema.TypeThinkingLevelChange:
		return append(appendJSString(append(dst, "[thinking: "...), e.Get("thinkingLevel")), ']')
	case schema.TypeCustom:
		return append(appendJSString(append(dst, "[custom: "...), e.Get("customType")), ']')
	case schema.TypeContextEdit:
		what := "[context replace: "
		if jsjson.KindOf(e.Get("replacement")) == jsjson.Null {
			what = "[context omit: "
		}
		return append(appendJSString(append(dst, what...), e.Get("targetId")), ']')
	case schema.TypeLabel:
		lab := e.Get("label")
		if k := jsjson.KindOf(lab); k == jsjson.Null || k == jsjson.Invalid {
			lab = []byte(`"(cleared)"`)
		}
		return append(appendJSString(append(dst, "[label: "...), lab), ']')
	case schema.TypeSessionInfo:
		if name := e.Get("name"); jsjson.Truthy(name) {
			return append(appendJSString(append(dst, "[title: "...), name), ']')
		}
		return append(dst, "[title: empty]"...)
	}
	return dst
}

// appendContentStart appends the first n UTF-16 units of a message's
// text: a string content, or its text blocks run together (pi's
// extractContent). Only as much of the text as is shown is decoded.
func appendContentStart(dst, content []byte, n int) []byte {
	switch jsjson.KindOf(content) {
	case jsjson.String:
		dst, _ = appendStringStart(dst, content, n)
		return dst
	case jsjson.Array:
	default:
		return dst
	}
	units := 0
	jsjson.Elements(content, func(block []byte) bool {
		text, ok := tree.BlockText(block)
		if !ok {
			return true
		}
		var u int
		if jsjson.KindOf(text) == jsjson.String {
			dst, u = appendStringStart(dst, text, n-units)
		} else {
			k := len(dst)
			dst = cutFrom(appendJSString(dst, text), k, n-units)
			u = utf16Len(string(dst[k:]))
		}
		units += u
		return units < n
	})
	return dst
}

// appendCustomContent appends a custom_message's text: a string content,
// or its text blocks joined (elements that are not objects are skipped,
// and a text that is null or missing adds nothing).
func appendCustomContent(dst, content []byte) []byte {
	switch jsjson.KindOf(content) {
	case jsjson.String:
		return appendJSString(dst, content)
	case jsjson.Array:
	default:
		return dst
	}
	jsjson.Elements(content, func(b []byte) bool {
		if t, ok := tree.BlockText(b); ok && jsjson.KindOf(t) != jsjson.Null && t != nil {
			dst = appendJSString(dst, t)
		}
		return true
	})
	return dst
}

// appendToolCall appends pi's summary of a tool call (formatToolCall):
// the tool and its path or command, or for other tools their arguments as
// JSON, cut at 40 units.
func appendToolCall(dst, name, args []byte, home string) []byte {
	arg := func(key string) []byte {
		if jsjson.KindOf(args) == jsjson.Object {
			return jsjson.Get(args, key)
		}
		return nil
	}
	// or is `a || b || def` of String()s.
	or := func(def string, keys ...string) string {
		for _, k := range keys {
			if v := arg(k); jsjson.Truthy(v) {
				return jsString(v)
			}
		}
		return def
	}
	n := ""
	if jsjson.KindOf(name) == jsjson.String {
		n, _ = jsjson.Unquote(name)
	}
	switch n {
	case "read":
		dst = append(append(dst, "[read: "...), shortenHome(or("", "path", "file_path"), home)...)
		return append(appendReadRange(dst, arg("offset"), arg("limit")), ']')
	case "write", "edit":
		return append(append(append(append(dst, '['), n...), ": "...), shortenHome(or("", "path", "file_path"), home)+"]"...)
	case "bash":
		raw := or("", "command")
		dst = append(append(dst, "[bash: "...), utf16Cut(normalize(raw), 50)...)
		if utf16Len(raw) > 50 {
			dst = append(dst, "..."...)
		}
		return append(dst, ']')
	case "grep":
		return append(dst, "[grep: /"+or("", "pattern")+"/ in "+shortenHome(or(".", "path"), home)+"]"...)
	case "find":
		return append(dst, "[find: "+or("", "pattern")+" in "+shortenHome(or(".", "path"), home)+"]"...)
	case "ls":
		return append(dst, "[ls: "+shortenHome(or(".", "path"), home)+"]"...)
	}
	js := "{}"
	if args != nil {
		js = string(jsjson.AppendCanonical(nil, args))
	}
	dst = append(appendJSString(append(dst, '['), name), ": "...)
	dst = append(dst, utf16Cut(js, 40)...)
	if utf16Len(js) > 40 {
		dst = append(dst, "..."...)
	}
	return append(dst, ']')
}

// appendReadRange appends pi's formatReadLineRange: ":start" or
// ":start-end" from a read's offset and limit (numbers or numeric
// strings); nothing when both are missing or one is malformed.
func appendReadRange(dst, offset, limit []byte) []byte {
	none := func(v []byte) bool { k := jsjson.KindOf(v); return k == jsjson.Null || k == jsjson.Invalid }
	if none(offset) && none(limit) {
		return dst
	}
	start := 1.0
	if !none(offset) {
		v, ok := lineNumber(offset)
		if !ok {
			return dst
		}
		start = v
	}
	if none(limit) {
		return appendJSNumber(append(dst, ':'), start)
	}
	count, ok := lineNumber(limit)
	if !ok {
		return dst
	}
	dst = appendJSNumber(append(dst, ':'), start)
	if end := start + count - 1; end != 0 {
		dst = appendJSNumber(append(dst, '-'), end)
	}
	return dst
}

// lineNumber is a finite number, or a string that is one.
func lineNumber(v []byte) (float64, bool) {
	switch jsjson.KindOf(v) {
	case jsjson.Number:
	case jsjson.String:
		if s, _ := jsjson.Unquote(v); jsjson.Trim(s) == "" {
			return 0, false
		}
	default:
		return 0, false
	}
	f := jsjson.ToNumber(v)
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
