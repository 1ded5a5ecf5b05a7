package render

import (
	"bytes"
	"math"
	"slices"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
)

// Transcript is transcript.md for a root→entry path: the concatenation of
// each entry's AppendEntryMarkdown. For each message, branch summary and
// compaction there is a heading with who, the entry id and the time, then
// the full text; code blocks use a fence longer than any backtick run they
// hold. Other entries (labels, model changes, …) show nothing.
func Transcript(path []*sessions.Entry) []byte {
	return transcript(path, partsFor(rawBytes(path), textMinBytes))
}

// transcript renders the path cut into parts.
func transcript(path []*sessions.Entry, parts int) []byte {
	b := pathParts(path, parts)
	bufs := make([][]byte, len(b)-1)
	par.Each(len(bufs), func(k int) {
		run := path[b[k]:b[k+1]]
		// The text of a session is most of its bytes: one allocation of
		// the raw size avoids regrowing a 100 MB buffer several times.
		dst := make([]byte, 0, rawBytes(run))
		for _, e := range run {
			dst = AppendEntryMarkdown(dst, e)
		}
		bufs[k] = dst
	})
	if len(bufs) == 1 {
		return bufs[0]
	}
	return concat(bufs...)
}

// AppendEntryMarkdown appends one entry's part of a transcript. It depends
// on that entry only, so the transcript of a path that grew is the old
// transcript followed by the new entries' parts.
func AppendEntryMarkdown(dst []byte, e *sessions.Entry) []byte {
	switch e.Type {
	case "message":
		return appendMessageMarkdown(dst, e)
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
		dst = append(dst, "## custom message "...)
		dst = appendStr(dst, customType)
		dst = headingTail(dst, e)
		return appendContent(dst, content)
	case "branch_summary", "compaction":
		var summary []byte
		for it := jsjson.IterMembers(e.Raw); ; {
			k, v, ok := it.Next()
			if !ok {
				break
			}
			if string(jsjson.KeyName(k)) == "summary" {
				summary = v
			}
		}
		if e.Type == "compaction" {
			dst = append(dst, "## compaction"...)
		} else {
			dst = append(dst, "## branch summary"...)
		}
		dst = headingTail(dst, e)
		return para(dst, len(dst), summary)
	}
	return dst
}

func appendMessageMarkdown(dst []byte, e *sessions.Entry) []byte {
	// One walk over the message's members; its content, located by the
	// parser, is jumped over rather than read.
	var errorMessage, toolName, isError, command, output, exitCode []byte
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
		}
	}
	switch e.Role {
	case "user", "assistant", "custom", "system":
		dst = append(dst, "## "...)
		dst = append(dst, e.Role...)
		dst = headingTail(dst, e)
		dst = appendContent(dst, e.MsgContent)
		start := len(dst)
		dst = append(dst, "*Error:* "...)
		n := len(dst)
		if dst = appendStr(dst, errorMessage); len(dst) == n {
			return dst[:start]
		}
		return append(dst, '\n', '\n')
	case "toolResult":
		dst = append(dst, "## tool result"...)
		start := len(dst)
		dst = append(dst, " `"...)
		n := len(dst)
		if dst = appendStr(dst, toolName); len(dst) == n {
			dst = dst[:start]
		} else {
			dst = append(dst, '`')
		}
		if jsjson.Truthy(isError) {
			dst = append(dst, " (error)"...)
		}
		dst = headingTail(dst, e)
		start = len(dst)
		dst = appendContent(dst, e.MsgContent)
		dst = trimNewlines(dst, start)
		return fenceTail(dst, start, "")
	case "bashExecution":
		dst = append(dst, "## bash"...)
		dst = headingTail(dst, e)
		start := len(dst)
		dst = append(dst, '$', ' ')
		dst = appendStr(dst, command)
		dst = fenceTail(dst, start, "sh")
		start = len(dst)
		dst = appendStr(dst, output)
		if exitCode != nil && jsjson.KindOf(exitCode) != jsjson.Null {
			dst = trimNewlines(dst, start)
			dst = append(dst, "\n[exit "...)
			dst = append(dst, exitCode...)
			dst = append(dst, ']')
		}
		return fenceTail(dst, start, "")
	}
	dst = append(dst, "## "...)
	dst = append(dst, e.Kind()...)
	dst = headingTail(dst, e)
	return appendContent(dst, e.MsgContent)
}

// headingTail ends a heading begun with "## who": the entry id and time.
func headingTail(dst []byte, e *sessions.Entry) []byte {
	dst = append(dst, " · "...)
	dst = append(dst, e.ID...)
	if ms := dateValue(e.Timestamp); !math.IsNaN(ms) {
		dst = append(dst, " · "...)
		dst = appendISO(dst, ms)
	}
	return append(dst, '\n', '\n')
}

// para appends the text of v as a paragraph (nothing when it is empty);
// start is len(dst).
func para(dst []byte, start int, v []byte) []byte {
	dst = appendStr(dst, v)
	if len(dst) == start {
		return dst
	}
	if dst[len(dst)-1] != '\n' {
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}

func trimNewlines(dst []byte, start int) []byte {
	for len(dst) > start && dst[len(dst)-1] == '\n' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// fenceTail turns dst[start:] into a code block: a fence of backticks
// longer than any run in the text (three at least), the text, a newline
// if it lacks one, the fence again.
func fenceTail(dst []byte, start int, lang string) []byte {
	n := 3
	for run, text := 0, dst[start:]; ; {
		k := bytes.IndexByte(text, '`')
		if k < 0 {
			break
		}
		if k == 0 {
			run++
		} else {
			run = 1
		}
		if run >= n {
			n = run + 1
		}
		text = text[k+1:]
	}
	if len(dst) == start || dst[len(dst)-1] != '\n' {
		dst = append(dst, '\n')
	}
	open := n + len(lang) + 1
	end := len(dst)
	dst = slices.Grow(dst, open+n+2)[:end+open]
	copy(dst[start+open:], dst[start:end])
	for k := start; k < start+n; k++ {
		dst[k] = '`'
	}
	copy(dst[start+n:], lang)
	dst[start+open-1] = '\n'
	for k := 0; k < n; k++ {
		dst = append(dst, '`')
	}
	return append(dst, '\n', '\n')
}

// appendContent appends a message's content: a string, or blocks of text,
// thinking, tool calls and images.
func appendContent(dst, c []byte) []byte {
	if jsjson.KindOf(c) != jsjson.Array {
		return para(dst, len(dst), c)
	}
	for blocks := jsjson.IterElements(c); ; {
		b, ok := nextBlock(&blocks)
		if !ok {
			return dst
		}
		switch {
		case jsjson.StringIs(b.typ, "text"):
			dst = para(dst, len(dst), b.text)
		case jsjson.StringIs(b.typ, "thinking"):
			dst = append(dst, "*Thinking:*\n\n"...)
			dst = para(dst, len(dst), b.thinking)
		case jsjson.StringIs(b.typ, "toolCall"):
			dst = append(dst, "**Tool call** `"...)
			dst = appendStr(dst, b.name)
			dst = append(dst, "` ("...)
			dst = appendStr(dst, b.id)
			dst = append(dst, ")\n\n"...)
			if b.args == nil {
				b.args = []byte("{}")
			}
			start := len(dst)
			dst = Indent(dst, b.args)
			dst = fenceTail(dst, start, "json")
		case jsjson.StringIs(b.typ, "image"):
			dst = append(dst, "*[image "...)
			dst = appendStr(dst, b.mime)
			dst = append(dst, "]*\n\n"...)
		default:
			start := len(dst)
			dst = Indent(dst, b.raw)
			dst = fenceTail(dst, start, "json")
		}
	}
}

// appendISO appends jsjson.FormatISO(ms) without its layout parsing and
// allocation (a transcript writes one per entry).
func appendISO(dst []byte, ms float64) []byte {
	t := time.UnixMilli(int64(ms)).UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return append(dst, jsjson.FormatISO(ms)...)
	}
	hour, min, sec := t.Clock()
	milli := t.Nanosecond() / 1e6
	d := func(dst []byte, v, n int) []byte {
		var buf [4]byte
		for k := n - 1; k >= 0; k-- {
			buf[k] = byte('0' + v%10)
			v /= 10
		}
		return append(dst, buf[:n]...)
	}
	dst = d(dst, year, 4)
	dst = append(dst, '-')
	dst = d(dst, int(month), 2)
	dst = append(dst, '-')
	dst = d(dst, day, 2)
	dst = append(dst, 'T')
	dst = d(dst, hour, 2)
	dst = append(dst, ':')
	dst = d(dst, min, 2)
	dst = append(dst, ':')
	dst = d(dst, sec, 2)
	dst = append(dst, '.')
	dst = d(dst, milli, 3)
	return append(dst, 'Z')
}
