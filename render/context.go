package render

import "github.com/pifs/pifs/tree"

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
// in one allocation of the exact size.
func ContextJSON(c *tree.Context) []byte {
	n, ok := contextSize(c)
	if !ok {
		return Indent(nil, c.JSON())
	}
	dst, ok := appendContext(make([]byte, 0, n), c)
	if !ok || len(dst) != n {
		// contextSize and appendContext check the same things; this
		// only keeps a disagreement from serving wrong bytes.
		return Indent(nil, c.JSON())
	}
	return dst
}

// ContextSize is len(ContextJSON(c)), counted without building it.
func ContextSize(c *tree.Context) int64 {
	if n, ok := contextSize(c); ok {
		return int64(n)
	}
	return int64(IndentSize(c.JSON()))
}

// contextSize counts what appendContext appends; ok is false when a piece
// does not indent on its own where it sits.
func contextSize(c *tree.Context) (int, bool) {
	n := len(ctxOpen)
	if len(c.Messages) == 0 {
		n += len("[]")
	} else {
		n += len(ctxMsgsOpen) + len(ctxMsgSep)*(len(c.Messages)-1) + len(ctxMsgsEnd)
		for _, m := range c.Messages {
			k, ok := indentSize(m, 2)
			if !ok {
				return 0, false
			}
			n += k
		}
	}
	if c.ThinkingLevel != nil {
		k, ok := indentSize(c.ThinkingLevel, 1)
		if !ok {
			return 0, false
		}
		n += len(ctxLevel) + k
	}
	if c.Model != nil {
		k, ok := indentSize(c.Model, 1)
		if !ok {
			return 0, false
		}
		n += len(ctxModel) + k
	}
	return n + len(ctxEnd), true
}

// appendContext appends context.json written from its pieces.
func appendContext(dst []byte, c *tree.Context) ([]byte, bool) {
	dst = append(dst, ctxOpen...)
	if len(c.Messages) == 0 {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, ctxMsgsOpen...)
		for i, m := range c.Messages {
			if i > 0 {
				dst = append(dst, ctxMsgSep...)
			}
			var ok bool
			if dst, ok = appendIndent(dst, m, 2); !ok {
				return dst, false
			}
		}
		dst = append(dst, ctxMsgsEnd...)
	}
	if c.ThinkingLevel != nil {
		var ok bool
		if dst, ok = appendIndent(append(dst, ctxLevel...), c.ThinkingLevel, 1); !ok {
			return dst, false
		}
	}
	if c.Model != nil {
		var ok bool
		if dst, ok = appendIndent(append(dst, ctxModel...), c.Model, 1); !ok {
			return dst, false
		}
	}
	return append(dst, ctxEnd...), true
}
