package render

import (
	"bytes"
	"math"
	"slices"
	"time"

	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/render/parts"
	"github.com/pifs/pifs/sessions"
)

// Transcript is transcript.md for a root→entry path: the concatenation of
// each entry's AppendEntryMarkdown. For each message, branch summary and
// compaction there is a heading with who, the entry id and the time, then
// the full text; code blocks use a fence longer than any backtick run they
// hold. Images are links to their files in images/, which the session
// folder and each branches/<id>/ folder hold. Other entries (labels,
// model changes, …) show nothing.
func Transcript(path []*sessions.Entry) []byte {
	return transcript(path, partsFor(rawBytes(path), textMinBytes))
}

// transcript renders the path cut into parts. Each part is counted first
// (as TranscriptSize counts, into a small buffer that stays in the
// processor's cache), then rendered straight into its place in one buffer
// of the exact size: a transcript of 85 MB rendered into buffers of its
// own parts and copied into one touched twice as many new pages, and the
// copy alone took more time than counting.
func transcript(path []*sessions.Entry, parts int) []byte {
	md, _ := transcriptApart(path, parts)
	return md
}

// TranscriptCount is how a path's transcript is cut into parts and each
// part's length, as TranscriptSize counts them: TranscriptCounted renders
// it without counting again what stat counted.
type TranscriptCount struct {
	bounds []int
	sizes  []int64 // nil: one part, not counted
}

// CountTranscript counts path's transcript.
func CountTranscript(path []*sessions.Entry) TranscriptCount {
	return countTranscript(path, partsFor(rawBytes(path), textMinBytes))
}

func countTranscript(path []*sessions.Entry, parts int) TranscriptCount {
	b := pathParts(path, parts)
	return TranscriptCount{b, partSizes(path, b)}
}

// Size is the transcript's length.
func (c TranscriptCount) Size() int64 {
	var n int64
	for _, k := range c.sizes {
		n += k
	}
	return n
}

// Bytes is about what the count holds, for a cache.
func (c TranscriptCount) Bytes() int64 { return int64(16*len(c.bounds) + 64) }

// TranscriptCounted is Transcript(path), given path's count.
func TranscriptCounted(path []*sessions.Entry, c TranscriptCount) []byte {
	md, _ := transcriptParts(path, c.bounds, c.sizes)
	return md
}

// transcriptApart is transcript, and the number of parts that did not
// render into their place (0 unless a part's rendering outgrew its count,
// or an append reserved more room than its part had left).
func transcriptApart(path []*sessions.Entry, parts int) ([]byte, int) {
	b := pathParts(path, parts)
	if len(b) == 2 {
		return transcriptParts(path, b, nil)
	}
	return transcriptParts(path, b, partSizes(path, b))
}

// transcriptParts is transcriptApart for the parts that b cuts, of the
// given sizes.
func transcriptParts(path []*sessions.Entry, b []int, sizes []int64) ([]byte, int) {
	if len(b) == 2 {
		// The text of a session is most of its bytes: one allocation of
		// the raw size avoids regrowing a buffer several times.
		dst := hugemem.Bytes(0, rawBytes(path))
		for _, e := range path {
			dst = AppendEntryMarkdown(dst, e)
		}
		return dst, 0
	}
	offs := make([]int, len(sizes)+1)
	for k, n := range sizes {
		offs[k+1] = offs[k] + int(n)
	}
	out := hugemem.Bytes(offs[len(sizes)], offs[len(sizes)])
	// A part whose count and rendering differ (there should be none) is
	// rendered into a buffer of its own instead, and the parts joined.
	apart := make([][]byte, len(sizes))
	par.Each(len(sizes), func(k int) {
		at := out[offs[k]:offs[k]:offs[k+1]]
		dst := at
		for _, e := range path[b[k]:b[k+1]] {
			dst = AppendEntryMarkdown(dst, e)
		}
		if len(dst) != len(at[:cap(at)]) || (len(dst) > 0 && &dst[0] != &out[offs[k]]) {
			apart[k] = dst
		}
	})
	joined := 0
	for k, a := range apart {
		if a == nil {
			apart[k] = out[offs[k]:offs[k+1]]
		} else {
			joined++
		}
	}
	if joined > 0 {
		return concat(apart...), joined
	}
	return out, 0
}

// AppendEntryMarkdown appends one entry's part of a transcript. It depends
// on that entry only, so the transcript of a path that grew is the old
// transcript followed by the new entries' parts.
func AppendEntryMarkdown(dst []byte, e *sessions.Entry) []byte {
	w := parts.Of(e)
	h := &w.Head
	if h.Shape == parts.Meta {
		return dst
	}
	dst = append(dst, "## "...)
	dst = append(dst, h.Who...)
	switch h.Shape {
	case parts.CustomMessage:
		dst = append(dst, ' ')
		dst = appendStr(dst, h.CustomType)
	case parts.ToolResult:
		dst = appendWrapped(dst, " `", h.ToolName, "`")
		if h.IsError {
			dst = append(dst, " (error)"...)
		}
	}
	dst = headingTail(dst, e)
	body := len(dst)
	if h.Shape != parts.ToolResult {
		n := 0
		for w.Next() {
			if w.Part.Kind == parts.Image {
				n++
				dst = appendImageLink(dst, e, n, &w.Part)
				continue
			}
			dst = appendPartMarkdown(dst, h, &w.Part)
		}
		return dst
	}
	// A tool's output is one code block; its images follow as links, and
	// an edit's diff as a diff.
	n := 0
	for w.Next() {
		if w.Part.Kind == parts.Image {
			n++
			continue
		}
		dst = appendPartMarkdown(dst, h, &w.Part)
	}
	dst = trimNewlines(dst, body)
	dst = fenceTail(dst, body, "")
	if n > 0 {
		n = 0
		for w = parts.Of(e); w.Next(); {
			if w.Part.Kind == parts.Image {
				n++
				dst = appendImageLink(dst, e, n, &w.Part)
			}
		}
	}
	if diff := diffOf(h.Details); diff != nil {
		start := len(dst)
		dst = jsjson.AppendUnquoted(dst, diff)
		dst = fenceTail(dst, start, "diff")
	}
	return dst
}

// diffOf is the diff a tool result's details hold (an edit's): its diff
// member when that is a non-empty string, else nil.
func diffOf(details []byte) []byte {
	if v := jsjson.Get(details, "diff"); jsjson.KindOf(v) == jsjson.String && len(v) > 2 {
		return v
	}
	return nil
}

// appendImageLink shows the n-th image block of e as a Markdown image
// whose path leads to its file in images/; an image without a file
// (broken data, or an entry without an id) as its type and why.
func appendImageLink(dst []byte, e *sessions.Entry, n int, p *parts.Part) []byte {
	if _, ok := ImageSize(p.Data); !ok || e.ID == "" {
		dst = append(dst, "*[image "...)
		dst = appendStr(dst, p.Mime)
		if e.ID != "" {
			dst = append(dst, ": not valid base64, no file"...)
		}
		return append(dst, "]*\n\n"...)
	}
	dst = append(dst, "![image "...)
	start := len(dst)
	dst = appendStr(dst, p.Mime)
	for i := start; i < len(dst); i++ {
		// The alt text stays one line of plain text.
		switch dst[i] {
		case '[', ']', '\\', '\n', '\r', '`', '*', '_', '<', '>':
			dst[i] = ' '
		}
	}
	dst = append(dst, "]("...)
	dst = append(dst, "images/"...)
	dst = appendURLPath(dst, ImageName(e.ID, n, p.Mime))
	return append(dst, ")\n\n"...)
}

// appendURLPath appends a relative path as a URL path: bytes other than
// letters, digits, "-._~/" percent-encoded, so that a Markdown link
// destination holds no space, parenthesis or angle bracket, and a "%"
// of a file name is the file's.
func appendURLPath(dst []byte, p string) []byte {
	const hexd = "0123456789ABCDEF"
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/' {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', hexd[c>>4], hexd[c&15])
		}
	}
	return dst
}

// appendPartMarkdown appends one part of the entry whose head is h.
func appendPartMarkdown(dst []byte, h *parts.Head, p *parts.Part) []byte {
	switch p.Kind {
	case parts.Text:
		return para(dst, len(dst), p.Value)
	case parts.Thinking:
		dst = append(dst, "*Thinking:*\n\n"...)
		return para(dst, len(dst), p.Value)
	case parts.ToolCall:
		dst = append(dst, "**Tool call** `"...)
		dst = appendStr(dst, p.Name)
		dst = append(dst, "` ("...)
		dst = appendStr(dst, p.ID)
		dst = append(dst, ")\n\n"...)
		start := len(dst)
		dst = Indent(dst, p.Args)
		return fenceTail(dst, start, "json")
	case parts.Block:
		start := len(dst)
		dst = Indent(dst, p.Block)
		return fenceTail(dst, start, "json")
	case parts.Error:
		return appendWrapped(dst, "*Error:* ", p.Value, "\n\n")
	case parts.Command:
		start := len(dst)
		dst = append(dst, '$', ' ')
		dst = appendStr(dst, p.Value)
		return fenceTail(dst, start, "sh")
	case parts.Output:
		start := len(dst)
		dst = appendStr(dst, p.Value)
		if h.ExitCode != nil {
			dst = trimNewlines(dst, start)
			dst = append(dst, "\n[exit "...)
			dst = append(dst, h.ExitCode...)
			dst = append(dst, ']')
		}
		return fenceTail(dst, start, "")
	case parts.Summary:
		// A summary message shows its content, as messages of other
		// roles do; summary entries show their summary.
		if h.Shape != parts.SummaryMessage {
			return para(dst, len(dst), p.Value)
		}
	}
	return dst
}

// appendWrapped appends open, the text of v (as appendStr) and close, or
// nothing when v shows no text. A value known to show none (null, absent,
// "") is not written and taken back: that would need more room than the
// result, and a transcript is rendered into a buffer of its exact size.
func appendWrapped(dst []byte, open string, v []byte, close string) []byte {
	switch k := jsjson.KindOf(v); {
	case k == jsjson.Invalid, k == jsjson.Null, k == jsjson.String && len(v) == 2:
		return dst
	}
	start := len(dst)
	dst = append(dst, open...)
	n := len(dst)
	if dst = appendStr(dst, v); len(dst) == n {
		return dst[:start] // a string whose text is empty after all
	}
	return append(dst, close...)
}

// appendStr appends the text a value shows in a transcript: a string
// unquoted, nothing for null or absent, any other value's raw JSON.
func appendStr(dst, v []byte) []byte {
	switch jsjson.KindOf(v) {
	case jsjson.String:
		return jsjson.AppendUnquoted(dst, v)
	case jsjson.Invalid, jsjson.Null:
		return dst
	}
	return append(dst, v...)
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
