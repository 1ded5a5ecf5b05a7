package render

import (
	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/tree"
)

// context.json is Indent(nil, c.JSON()): the context as JSON.stringify
// writes it, indented. Its shape is fixed, so it is written directly from
// the messages, each indented at its depth, without the compact JSON in
// between:
//
//	{
//	  "messages": [
//	    <message, indented from depth 2>,
//	    …
//	  ],
//	  "thinkingLevel": <value, from depth 1>,
//	  "model": <value, from depth 1>
//	}
//
// That is Indent's output whenever every piece is one valid JSON value that
// nests no deeper than Indent allows where it sits. Otherwise (a message too
// deep inside the context though not alone, or pieces that are not whole
// values) the compact JSON is built and given to Indent, which decides.
const (
	ctxOpen     = "{\n  \"messages\": "
	ctxMsgsOpen = "[\n    "
	ctxMsgSep   = ",\n    "
	ctxMsgsEnd  = "\n  ]"
	ctxLevel    = ",\n  \"thinkingLevel\": "
	ctxModel    = ",\n  \"model\": "
	ctxEnd      = "\n}\n"
)

// ContextJSON is context.json for c: Indent(nil, c.JSON()), byte for byte,
// in one allocation of the exact size. Many messages are counted, then
// written in place, on every core.
func ContextJSON(c *tree.Context) []byte {
	return contextJSON(c, partsFor(messageBytes(c), textMinBytes))
}

func contextJSON(c *tree.Context, parts int) []byte {
	b := messageParts(c, parts)
	sizes := make([]int, len(b)-1)
	n, ok := contextSize(c, b, sizes)
	if !ok {
		return Indent(nil, c.JSON())
	}
	out := hugemem.Bytes(n, n)
	dst := appendMessagesOpen(out[:0], c)
	oks := make([]bool, len(sizes))
	offs := make([]int, len(sizes))
	for k, size := range sizes {
		offs[k] = len(dst)
		dst = dst[:len(dst)+size]
	}
	par.Each(len(sizes), func(k int) {
		o := offs[k]
		part, ok := appendMessages(out[o:o:o+sizes[k]], c.Messages[b[k]:b[k+1]], b[k] == 0)
		oks[k] = ok && len(part) == sizes[k]
	})
	dst, ok = appendContextEnd(dst, c)
	// contextSize and the appends check the same things; this only keeps
	// a disagreement from serving wrong bytes. A part that outgrew its
	// place was written elsewhere, and its length says so: appends only
	// grow.
	for _, ok1 := range oks {
		ok = ok && ok1
	}
	if !ok || len(dst) != n || &dst[0] != &out[0] {
		return Indent(nil, c.JSON())
	}
	return dst
}

// ContextSize is len(ContextJSON(c)), counted without building it.
func ContextSize(c *tree.Context) int64 {
	return contextSizeIn(c, partsFor(messageBytes(c), textMinBytes))
}

func contextSizeIn(c *tree.Context, parts int) int64 {
	b := messageParts(c, parts)
	if n, ok := contextSize(c, b, make([]int, len(b)-1)); ok {
		return int64(n)
	}
	return int64(IndentSize(c.JSON()))
}

// messageBytes is the compact size of the context's messages.
func messageBytes(c *tree.Context) int {
	n := 0
	for _, m := range c.Messages {
		n += len(m)
	}
	return n
}

// messageParts cuts the messages into runs of about equal size.
func messageParts(c *tree.Context, parts int) []int {
	return par.Ranges(len(c.Messages), parts, func(i int) int { return len(c.Messages[i]) })
}

// contextSize counts what contextJSON writes, the messages cut into the
// runs bounded by b, and sets sizes[k] to what run k's messages write; ok is
// false when a piece does not indent on its own where it sits.
func contextSize(c *tree.Context, b, sizes []int) (int, bool) {
	n := len(ctxOpen)
	if len(c.Messages) == 0 {
		n += len("[]")
	} else {
		n += len(ctxMsgsOpen) + len(ctxMsgsEnd)
		oks := make([]bool, len(sizes))
		par.Each(len(sizes), func(k int) {
			sizes[k], oks[k] = messagesSize(c.Messages[b[k]:b[k+1]], b[k] == 0)
		})
		for k, size := range sizes {
			if !oks[k] {
				return 0, false
			}
			n += size
		}
	}
	if c.ThinkingLevel != nil {
		k, ok := jsjson.IndentSize(c.ThinkingLevel, 1)
		if !ok {
			return 0, false
		}
		n += len(ctxLevel) + k
	}
	if c.Model != nil {
		k, ok := jsjson.IndentSize(c.Model, 1)
		if !ok {
			return 0, false
		}
		n += len(ctxModel) + k
	}
	return n + len(ctxEnd), true
}

// messagesSize counts what appendMessages appends.
func messagesSize(msgs [][]byte, first bool) (int, bool) {
	n := len(ctxMsgSep) * len(msgs)
	if first && len(msgs) > 0 {
		n -= len(ctxMsgSep)
	}
	for _, m := range msgs {
		k, ok := jsjson.IndentSize(m, 2)
		if !ok {
			return 0, false
		}
		n += k
	}
	return n, true
}

// appendMessagesOpen appends context.json up to its first message.
func appendMessagesOpen(dst []byte, c *tree.Context) []byte {
	dst = append(dst, ctxOpen...)
	if len(c.Messages) == 0 {
		return append(dst, "[]"...)
	}
	return append(dst, ctxMsgsOpen...)
}

// appendMessages appends a run of messages, each indented at its depth and
// after a separator unless it is the first of all.
func appendMessages(dst []byte, msgs [][]byte, first bool) ([]byte, bool) {
	for i, m := range msgs {
		if i > 0 || !first {
			dst = append(dst, ctxMsgSep...)
		}
		var ok bool
		if dst, ok = jsjson.AppendIndent(dst, m, 2); !ok {
			return dst, false
		}
	}
	return dst, true
}

// appendContextEnd appends context.json from after its last message.
func appendContextEnd(dst []byte, c *tree.Context) ([]byte, bool) {
	if len(c.Messages) > 0 {
		dst = append(dst, ctxMsgsEnd...)
	}
	if c.ThinkingLevel != nil {
		var ok bool
		if dst, ok = jsjson.AppendIndent(append(dst, ctxLevel...), c.ThinkingLevel, 1); !ok {
			return dst, false
		}
	}
	if c.Model != nil {
		var ok bool
		if dst, ok = jsjson.AppendIndent(append(dst, ctxModel...), c.Model, 1); !ok {
			return dst, false
		}
	}
	return append(dst, ctxEnd...), true
}
