package render

import (
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// reply.md: what pi's /copy copies (AgentSession.getLastAssistantText)
// from the context a path resumes with: the text blocks of its last
// assistant message, joined and trimmed, then a line feed; empty where
// /copy has nothing to copy ("No agent messages to copy yet"). The last
// assistant message is the last one that ended normally (stopReason
// "stop") or has a text that is not blank: a turn that was aborted,
// failed or only called tools is passed over.

// Reply is reply.md for the context c (a leaf's, tree.ContextAt).
func Reply(c *tree.Context) []byte {
	text := appendReply(nil, c)
	if len(text) == 0 {
		return text
	}
	return append(text, '\n')
}

// ReplySize is len(Reply(c)), counted in a scratch buffer.
func ReplySize(c *tree.Context) int64 {
	bp := getScratch()
	defer putScratch(bp)
	*bp = appendReply((*bp)[:0], c)
	if len(*bp) == 0 {
		return 0
	}
	return int64(len(*bp)) + 1
}

// appendReply appends the text /copy copies from c, without a line feed.
// Where pi throws (content that is not an array, a text that is not a
// string), the message counts as one without text.
func appendReply(dst []byte, c *tree.Context) []byte {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		m := c.Messages[i]
		var role, stop, content []byte
		jsjson.Members(m, func(k, v []byte) bool {
			switch {
			case jsjson.KeyIs(k, "role"):
				role = v
			case jsjson.KeyIs(k, "stopReason"):
				stop = v
			case jsjson.KeyIs(k, "content"):
				content = v
			}
			return true
		})
		if !isStr(role, schema.RoleAssistant) {
			continue
		}
		if !isStr(stop, "stop") && !hasCopyText(content) {
			continue
		}
		start := len(dst)
		if jsjson.KindOf(content) == jsjson.Array {
			jsjson.Elements(content, func(b []byte) bool {
				if text, ok := tree.BlockText(b); ok {
					// text += block.text: String() of what is there.
					dst = appendJSString(dst, text)
				}
				return true
			})
		}
		i, j := trimBounds(dst[start:])
		n := copy(dst[start:], dst[start+i:start+j])
		return dst[:start+n]
	}
	return dst
}

// hasCopyText tells whether content has a text block whose text is a
// string that is not blank.
func hasCopyText(content []byte) bool {
	found := false
	if jsjson.KindOf(content) == jsjson.Array {
		jsjson.Elements(content, func(b []byte) bool {
			if text, ok := tree.BlockText(b); ok && jsjson.KindOf(text) == jsjson.String {
				found = !isBlank(text)
			}
			return !found
		})
	}
	return found
}

// isBlank tells whether a raw JSON string is only JavaScript white space.
func isBlank(raw []byte) bool {
	bp := getScratch()
	defer putScratch(bp)
	*bp = appendStringText((*bp)[:0], raw)
	i, j := trimBounds(*bp)
	return i == j
}

// isStr reports whether a raw JSON value is the string s.
func isStr(v []byte, s string) bool {
	return jsjson.KindOf(v) == jsjson.String && jsjson.KeyIs(v, s)
}
