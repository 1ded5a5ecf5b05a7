package render

import (
	"github.com/pifs/pifs/internal/jsjson"
)

// The renderers read JSON that the session parser has already validated,
// once, with jsjson's iterators, taking each member's value as a slice:
// jsjson.Get scans an object once per field it is asked for, and a
// renderer that needs five fields of a block would read a long text five
// times.

// contentBlock is one block of a message's content array, with the
// members the transcripts show; raw is the whole block.
type contentBlock struct {
	typ, text, thinking, name, id, args, mime, raw []byte
}

// nextBlock reads the next block of a content array. An object block is
// walked once: its members' walk finds its end.
func nextBlock(a *jsjson.ElementIter) (contentBlock, bool) {
	var c contentBlock
	it, ok := a.Object()
	if !ok {
		c.raw, ok = a.Next()
		return c, ok
	}
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		switch string(jsjson.KeyName(k)) {
		case "type":
			c.typ = v
		case "text":
			c.text = v
		case "thinking":
			c.thinking = v
		case "name":
			c.name = v
		case "id":
			c.id = v
		case "arguments":
			c.args = v
		case "mimeType":
			c.mime = v
		}
	}
	c.raw = a.EndObject(&it)
	return c, true
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
