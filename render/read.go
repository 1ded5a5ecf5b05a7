package render

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
)

// The readers below walk JSON that the session parser has already
// validated, once, taking each member's value as a slice. jsjson.Get scans
// an object once per field it is asked for; a renderer that needs five
// fields of a block would read a long text five times.

// skipValue returns the end of the valid value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the end of the valid string whose quote is b[i]. In
// valid JSON a quote ends the string unless an odd run of backslashes
// precedes it, so the search is IndexByte's, not a byte-by-byte scan; but
// most strings (keys, types, ids) are short, and end before a call to
// IndexByte pays off.
func skipString(b []byte, i int) int {
	i++
	for end := min(len(b), i+16); i < end; i++ {
		if c := b[i]; c == '"' {
			return i + 1
		} else if c == '\\' {
			break
		}
	}
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return len(b) // not valid input
		}
		j := i + k
		n := 0
		for b[j-1-n] == '\\' { // stops at the opening quote at the latest
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
}

// members iterates over the members of a valid object.
type members struct {
	b    []byte
	i    int
	done bool
	// known are values already located by the parser (a message's
	// content and usage): when a member's value starts where one does,
	// the walk jumps over it instead of reading it again.
	known [2][]byte
}

// newMembers iterates over obj, which need not be an object (then there
// are no members).
func newMembers(obj []byte) members {
	if jsjson.KindOf(obj) != jsjson.Object {
		return members{done: true}
	}
	return membersAt(obj, 0)
}

// membersAt iterates over the object whose brace is b[i]; once done, end
// tells where it ends.
func membersAt(b []byte, i int) members {
	i = jsjson.SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return members{b: b, i: i + 1, done: true}
	}
	return members{b: b, i: i}
}

// end is the index past the object, once next has reported the last
// member.
func (m *members) end() int { return m.i }

// next returns the next member's key (its name, unescaped) and raw value.
func (m *members) next() (key, val []byte, ok bool) {
	b, i := m.b, m.i
	if m.done || i >= len(b) || b[i] != '"' {
		m.done = true
		return nil, nil, false
	}
	kend := skipString(b, i)
	key = b[i+1 : kend-1]
	if hasBackslash(key) {
		s, _ := jsjson.Unquote(b[i:kend])
		key = []byte(s)
	}
	i = jsjson.SkipWS(b, kend) + 1 // past ':'
	i = jsjson.SkipWS(b, i)
	var vend int
	if k := m.known[0]; len(k) > 0 && len(b)-i >= len(k) && &b[i] == &k[0] {
		vend = i + len(k)
	} else if k := m.known[1]; len(k) > 0 && len(b)-i >= len(k) && &b[i] == &k[0] {
		vend = i + len(k)
	} else {
		vend = skipValue(b, i)
	}
	val = b[i:vend]
	i = jsjson.SkipWS(b, vend)
	if i < len(b) && b[i] == ',' {
		m.i = jsjson.SkipWS(b, i+1)
	} else {
		m.i = i + 1 // past '}'
		m.done = true
	}
	return key, val, true
}

// hasBackslash reports whether a key has an escape; keys are short, and a
// loop costs less than a call to IndexByte.
func hasBackslash(key []byte) bool {
	for _, c := range key {
		if c == '\\' {
			return true
		}
	}
	return false
}

// elements iterates over the elements of a valid array.
type elements struct {
	b []byte
	i int
}

func newElements(arr []byte) elements {
	if jsjson.KindOf(arr) != jsjson.Array {
		return elements{}
	}
	return elements{b: arr, i: jsjson.SkipWS(arr, 1)}
}

func (a *elements) next() ([]byte, bool) {
	b, i := a.b, a.i
	if i >= len(b) || b[i] == ']' {
		return nil, false
	}
	return b[i:a.skip(skipValue(b, i))], true
}

// object starts walking the next element when it is an object; the walk
// must be finished and its end handed to skip.
func (a *elements) object() (members, bool) {
	if a.i >= len(a.b) || a.b[a.i] != '{' {
		return members{}, false
	}
	return membersAt(a.b, a.i), true
}

// skip moves past the element that ends at end, returning end.
func (a *elements) skip(end int) int {
	b := a.b
	a.i = jsjson.SkipWS(b, end)
	if a.i < len(b) && b[a.i] == ',' {
		a.i = jsjson.SkipWS(b, a.i+1)
	}
	return end
}

// contentBlock is one block of a message's content array, with the
// members the transcripts show; raw is the whole block.
type contentBlock struct {
	typ, text, thinking, name, id, args, mime, raw []byte
}

// nextBlock reads the next block of a content array. An object block is
// walked once: its members' walk finds its end.
func (a *elements) nextBlock() (contentBlock, bool) {
	var c contentBlock
	it, ok := a.object()
	if !ok {
		c.raw, ok = a.next()
		return c, ok
	}
	start := a.i
	for {
		k, v, ok := it.next()
		if !ok {
			break
		}
		switch string(k) {
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
	c.raw = a.b[start:a.skip(it.end())]
	return c, true
}

// appendStr appends the text a value shows in a transcript: a string
// unquoted, nothing for null or absent, any other value's raw JSON.
func appendStr(dst, v []byte) []byte {
	switch jsjson.KindOf(v) {
	case jsjson.String:
		return appendUnquoted(dst, v)
	case jsjson.Invalid, jsjson.Null:
		return dst
	}
	return append(dst, v...)
}

// isString reports whether v is a JSON string with unquoted value s,
// without allocating.
func strIs(v []byte, s string) bool {
	if len(v) == len(s)+2 && v[0] == '"' && string(v[1:len(v)-1]) == s {
		return true
	}
	if jsjson.KindOf(v) != jsjson.String || bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	u, _ := jsjson.Unquote(v)
	return u == s
}

// appendUnquoted appends the value of the valid JSON string raw, as
// jsjson.Unquote decodes it: lone surrogates and invalid UTF-8 become
// U+FFFD.
func appendUnquoted(dst, raw []byte) []byte {
	body := raw[1 : len(raw)-1]
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		seg := body
		if k >= 0 {
			seg = body[:k]
		}
		dst = jsjson.AppendValidText(dst, seg)
		if k < 0 {
			break
		}
		body = body[k:]
		if len(body) < 2 {
			break // not valid input
		}
		n := 2
		switch c := body[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(body, 2)
			if !ok {
				return dst
			}
			n = 6
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && len(body) >= 12 && body[6] == '\\' && body[7] == 'u' {
					if r2, ok := hex4(body, 8); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
						dst = utf8.AppendRune(dst, utf16.DecodeRune(r, r2))
						body = body[12:]
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		}
		body = body[n:]
	}
	return dst
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		h := unhex(b[k])
		if h < 0 {
			return 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, true
}
