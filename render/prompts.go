package render

import (
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// prompts.txt: the user messages pi's /fork offers (getUserMessagesForForking):
// every user message of the session that has text, on any branch, in file
// order. A row is the text on one line (line feeds, carriage returns and
// tabs become spaces, then it is trimmed, as the fork selector shows it,
// but never cut to a terminal's width), a tab and the entry's id, so
// `echo ID^ > fork` is pi's /fork from that prompt.

// Prompts is prompts.txt of t.
func Prompts(t *tree.Tree) []byte {
	ents := t.Entries()
	b := promptParts(ents)
	bufs := make([][]byte, len(b)-1)
	par.Each(len(bufs), func(k int) {
		est := 0 // a prompt's raw JSON is about as long as its row
		for _, e := range ents[b[k]:b[k+1]] {
			if e.Role == "user" {
				est += len(e.MsgContent) + len(e.ID) + 2
			}
		}
		buf := make([]byte, 0, est)
		for _, e := range ents[b[k]:b[k+1]] {
			buf = appendPrompt(buf, e.Type, e.Role, e.ID, e.MsgContent)
		}
		bufs[k] = buf
	})
	return concat(bufs...)
}

// PromptsSize is len(Prompts(t)), counted a row at a time.
func PromptsSize(t *tree.Tree) int64 {
	ents := t.Entries()
	b := promptParts(ents)
	sizes := make([]int64, len(b)-1)
	par.Each(len(sizes), func(k int) {
		bp := getScratch()
		defer putScratch(bp)
		for _, e := range ents[b[k]:b[k+1]] {
			var n int
			*bp, n = promptSize((*bp)[:0], e.Type, e.Role, e.ID, e.MsgContent)
			sizes[k] += int64(n)
		}
	})
	var n int64
	for _, k := range sizes {
		n += k
	}
	return n
}

// promptParts cuts a session's entries into runs of about equal raw
// bytes, one per part: many when the session is big.
func promptParts(ents []*sessions.Entry) []int {
	return pathParts(ents, partsFor(rawBytes(ents), textMinBytes))
}

// appendPrompt appends the row of an entry if /fork offers it. An entry
// without an id, which cannot be named, is left out.
func appendPrompt(dst []byte, typ, role, id string, content []byte) []byte {
	if !offered(typ, role, id) {
		return dst
	}
	start := len(dst)
	if dst = appendPromptText(dst, content); len(dst) == start {
		return dst
	}
	oneLine(dst[start:])
	// Trimmed as the fork selector trims it, once breaks are spaces.
	return appendID(normalizeFrom(dst, start), start, id)
}

// offered tells whether /fork offers an entry: a user message, with an id
// to name it by.
func offered(typ, role, id string) bool {
	return typ == "message" && role == "user" && id != ""
}

// promptSize is the length of the row appendPrompt appends, counted with
// the text decoded into scratch but neither broken nor trimmed there: line
// breaks become spaces byte for byte, and the trim only cuts the ends. It
// returns scratch for reuse.
func promptSize(scratch []byte, typ, role, id string, content []byte) ([]byte, int) {
	if !offered(typ, role, id) {
		return scratch, 0
	}
	text := appendPromptText(scratch[:0], content)
	if len(text) == 0 {
		return text, 0
	}
	i, j := trimBounds(text)
	return text, j - i + 1 + len(id) + 1
}

// appendPromptText appends pi-ai's contentText(content, ""): a string
// content, or its text blocks' texts joined. pi throws on content that is
// neither (null content in a hand-edited file); pifs offers no text then.
func appendPromptText(dst, content []byte) []byte {
	if jsjson.KindOf(content) == jsjson.String || jsjson.KindOf(content) == jsjson.Array {
		return appendCustomContent(dst, content)
	}
	return dst
}
