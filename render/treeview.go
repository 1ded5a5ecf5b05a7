package render

import (
	"math"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/tree"
)

// tree.txt and its filter variants: pi's /tree selector as text. A row is
// what the selector draws for an entry (its indentation and connectors,
// "• " on the active path, "[label] ", pi's text for the entry), then a tab
// and the entry's id, so that `cut -f2` or `awk '{print $NF}'` gives ids to
// write to leaf. A file has no terminal width: rows are never cut to one,
// and the line feeds, carriage returns and tabs that pi leaves in some
// texts become spaces, so that a row is one line.

// textUnits is how much of a message's text a row shows, in UTF-16 code
// units (pi's extractContent).
const textUnits = 200

// TreeText is the selector's view of t with filter f and leaf as the
// active leaf (t.FileLeafID() for the session's own view, a branch's tip
// for that branch's). home is the user's home directory, which pi writes
// as "~" in the paths of tool calls ("" for none).
func TreeText(t *tree.Tree, leaf string, f tree.Filter, home string) []byte {
	s := t.Selector(leaf, f)
	var out []byte
	for i := range s.Rows {
		out = appendTreeRow(out, s, &s.Rows[i], home)
	}
	return out
}

// TreeTextSize is len(TreeText(...)), counted a row at a time.
func TreeTextSize(t *tree.Tree, leaf string, f tree.Filter, home string) int64 {
	s := t.Selector(leaf, f)
	bp := getScratch()
	defer putScratch(bp)
	var n int64
	for i := range s.Rows {
		*bp = appendTreeRow((*bp)[:0], s, &s.Rows[i], home)
		n += int64(len(*bp))
	}
	return n
}

// appendTreeRow appends one row and its line feed.
func appendTreeRow(dst []byte, s *tree.Selector, r *tree.Row, home string) []byte {
	start := len(dst)
	dst = r.AppendPrefix(dst)
	if r.Active {
		dst = append(dst, "• "...)
	}
	if lab, ok := s.Tree().LabelValue(r.Node.ID); ok {
		dst = append(dst, '[')
		dst = appendJSString(dst, lab)
		dst = append(dst, "] "...)
	}
	dst = AppendEntryText(dst, s, r.Node, home)
	return appendID(dst, start, r.Node.ID)
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
	case "message":
		m := e.Msg
		switch jsjson.KindOf(jsjson.Get(m, "role")) {
		case jsjson.String:
		default:
			return append(appendJSString(append(dst, '['), jsjson.Get(m, "role")), ']')
		}
		switch e.Role {
		case "user":
			return append(append(dst, "user: "...), normalize(contentStart(e.MsgContent, textUnits))...)
		case "assistant":
			dst = append(dst, "assistant: "...)
			if text := normalize(contentStart(e.MsgContent, textUnits)); text != "" {
				return append(dst, text...)
			}
			if stop, _ := jsjson.Str(m, "stopReason"); stop == "aborted" {
				return append(dst, "(aborted)"...)
			}
			if em := jsjson.Get(m, "errorMessage"); jsjson.Truthy(em) {
				return append(dst, utf16Cut(normalize(jsString(em)), 80)...)
			}
			return append(dst, "(no content)"...)
		case "toolResult":
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
		case "bashExecution":
			cmd := jsjson.Get(m, "command")
			if k := jsjson.KindOf(cmd); k == jsjson.Null || k == jsjson.Invalid {
				cmd = []byte(`""`)
			}
			return append(append(dst, "[bash]: "...), normalize(jsString(cmd))...)
		}
		return append(append(append(dst, '['), e.Role...), ']')
	case "custom_message":
		dst = append(appendJSString(append(dst, '['), e.Get("customType")), "]: "...)
		return append(dst, normalize(customContent(e.Get("content")))...)
	case "compaction":
		k := jsRound(jsjson.ToNumber(e.Get("tokensBefore")) / 1000)
		return append(appendJSNumber(append(dst, "[compaction: "...), k), "k tokens]"...)
	case "branch_summary":
		return append(append(dst, "[branch summary]: "...), normalize(jsString(e.Get("summary")))...)
	case "model_change":
		return append(appendJSString(append(dst, "[model: "...), e.Get("modelId")), ']')
	case "thinking_level_change":
		return append(appendJSString(append(dst, "[thinking: "...), e.Get("thinkingLevel")), ']')
	case "custom":
		return append(appendJSString(append(dst, "[custom: "...), e.Get("customType")), ']')
	case "context_edit":
		what := "[context replace: "
		if jsjson.KindOf(e.Get("replacement")) == jsjson.Null {
			what = "[context omit: "
		}
		return append(appendJSString(append(dst, what...), e.Get("targetId")), ']')
	case "label":
		lab := e.Get("label")
		if k := jsjson.KindOf(lab); k == jsjson.Null || k == jsjson.Invalid {
			lab = []byte(`"(cleared)"`)
		}
		return append(appendJSString(append(dst, "[label: "...), lab), ']')
	case "session_info":
		if name := e.Get("name"); jsjson.Truthy(name) {
			return append(appendJSString(append(dst, "[title: "...), name), ']')
		}
		return append(dst, "[title: empty]"...)
	}
	return dst
}

// contentStart is the first n UTF-16 units of a message's text: a string
// content, or its text blocks run together (pi's extractContent).
func contentStart(content []byte, n int) string {
	switch jsjson.KindOf(content) {
	case jsjson.String:
		s, _ := jsjson.Unquote(content)
		return utf16Cut(s, n)
	case jsjson.Array:
	default:
		return ""
	}
	var sb []byte
	units := 0
	jsjson.Elements(content, func(b []byte) bool {
		if jsjson.KindOf(b) != jsjson.Object {
			return true
		}
		if typ, _ := jsjson.Str(b, "type"); typ != "text" {
			return true
		}
		k := len(sb)
		sb = appendJSString(sb, jsjson.Get(b, "text"))
		units += utf16Len(string(sb[k:]))
		return units < n
	})
	return utf16Cut(string(sb), n)
}

// customContent is a custom_message's text: a string content, or its text
// blocks joined (elements that are not objects are skipped, and a text
// that is null or missing adds nothing).
func customContent(content []byte) string {
	switch jsjson.KindOf(content) {
	case jsjson.String:
		s, _ := jsjson.Unquote(content)
		return s
	case jsjson.Array:
	default:
		return ""
	}
	var sb []byte
	jsjson.Elements(content, func(b []byte) bool {
		if typ, _ := jsjson.Str(b, "type"); typ == "text" {
			if t := jsjson.Get(b, "text"); jsjson.KindOf(t) != jsjson.Null && t != nil {
				sb = appendJSString(sb, t)
			}
		}
		return true
	})
	return string(sb)
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
		dst = append(append(dst, "[bash: "...), utf16Cut(jsjson.Trim(strings.NewReplacer("\n", " ", "\t", " ").Replace(raw)), 50)...)
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
