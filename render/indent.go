// Package render turns a session's data into the bytes of its computed
// files: indented JSON (entries, headers, context.json), transcript.md,
// transcript.html and info.json. Every rendering is a pure function of the
// parsed session (packages sessions and tree), so it is tested and
// benchmarked without a kernel; package nodes only serves the bytes.
//
// Transcripts are built from independent per-entry pieces
// (AppendEntryMarkdown, AppendEntryHTML): the rendering of a path is the
// rendering of its prefix followed by the pieces of the entries after it,
// so a view can grow as entries are appended under its leaf without
// rendering the prefix again.
package render

import (
	"slices"

	"github.com/pifs/pifs/internal/jsjson"
)

// maxDepth is encoding/json's nesting limit: json.Indent refuses deeper
// input, and so does Indent, to give the same bytes.
const maxDepth = 10000

// Indent appends raw indented with two spaces, then a newline. The result
// is byte-identical to encoding/json's Indent(raw, "", "  ") followed by a
// newline: whitespace between tokens is dropped, strings and numbers keep
// their bytes, empty objects and arrays stay "{}" and "[]", whitespace after
// the value is kept. When raw is not valid JSON (or nests deeper than
// encoding/json accepts) it appends raw itself and a newline.
func Indent(dst, raw []byte) []byte {
	start := len(dst)
	// Session JSON grows by about a third when indented; Grow keeps
	// append's amortized doubling when dst is a long transcript.
	dst = slices.Grow(dst, len(raw)+len(raw)/2+64)
	out, ok := appendIndent(dst, raw, 0)
	if !ok {
		out = append(out[:start], raw...)
	}
	return append(out, '\n')
}

// IndentSize is len(Indent(nil, raw)), computed without building it.
func IndentSize(raw []byte) int {
	n, ok := indentSize(raw, 0)
	if !ok {
		n = len(raw)
	}
	return n + 1
}

const spaces = "                                                                                                                                "

func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	n := 2 * depth
	for n > len(spaces) {
		dst = append(dst, spaces...)
		n -= len(spaces)
	}
	return append(dst, spaces[:n]...)
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// appendIndent is Indent without the newline; ok is false for input that
// encoding/json rejects. base is the depth of the value inside containers
// the caller writes around it (context.json's messages sit at 2): its
// lines are indented from there, it may nest maxDepth-base levels, and
// whitespace after it is dropped, as it is between tokens; at base 0 it is
// kept, as encoding/json keeps it after the top value.
func appendIndent(dst, b []byte, base int) (_ []byte, ok bool) {
	// stack[d-1] is '{' or '[' for each open container; a bit per level
	// would do, but depth is small in practice.
	var small [64]byte
	stack := small[:0]
	i := skipWS(b, 0)
	for {
		// A value at b[i].
		if i >= len(b) {
			return dst, false
		}
		switch c := b[i]; c {
		case '{', '[':
			if base+len(stack) >= maxDepth {
				return dst, false
			}
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == closer {
				dst = append(dst, c, closer)
				i++
				break
			}
			stack = append(stack, c)
			dst = append(dst, c)
			dst = newline(dst, base+len(stack))
			if c == '{' {
				var ok bool
				if dst, i, ok = appendKey(dst, b, i); !ok {
					return dst, false
				}
			}
			continue
		case '"':
			end, ok := scanString(b, i)
			if !ok {
				return dst, false
			}
			dst = append(dst, b[i:end]...)
			i = end
		case 't':
			if !hasLit(b, i, "true") {
				return dst, false
			}
			dst = append(dst, "true"...)
			i += 4
		case 'f':
			if !hasLit(b, i, "false") {
				return dst, false
			}
			dst = append(dst, "false"...)
			i += 5
		case 'n':
			if !hasLit(b, i, "null") {
				return dst, false
			}
			dst = append(dst, "null"...)
			i += 4
		default:
			end, ok := scanNumber(b, i)
			if !ok {
				return dst, false
			}
			dst = append(dst, b[i:end]...)
			i = end
		}
		// After a value: separators and closers.
		for {
			if len(stack) == 0 {
				// Only whitespace may follow, and encoding/json keeps it.
				if skipWS(b, i) != len(b) {
					return dst, false
				}
				if base > 0 {
					return dst, true
				}
				return append(dst, b[i:]...), true
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return dst, false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				dst = append(dst, ',')
				dst = newline(dst, base+len(stack))
				i = skipWS(b, i+1)
				if top == '{' {
					var ok bool
					if dst, i, ok = appendKey(dst, b, i); !ok {
						return dst, false
					}
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				dst = newline(dst, base+len(stack))
				dst = append(dst, b[i])
				i++
				continue
			}
			return dst, false
		}
		i = skipWS(b, i)
	}
}

// appendKey appends the key at b[i] and ": ", and returns the index of the
// value after the colon.
func appendKey(dst, b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return dst, 0, false
	}
	end, ok := scanString(b, i)
	if !ok {
		return dst, 0, false
	}
	dst = append(dst, b[i:end]...)
	i = skipWS(b, end)
	if i >= len(b) || b[i] != ':' {
		return dst, 0, false
	}
	dst = append(dst, ':', ' ')
	return dst, skipWS(b, i+1), true
}

// indentSize counts what appendIndent would append.
func indentSize(b []byte, base int) (n int, ok bool) {
	var small [64]byte
	stack := small[:0]
	i := skipWS(b, 0)
	key := func() bool {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end, ok := scanString(b, i)
		if !ok {
			return false
		}
		n += end - i + 2
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		return true
	}
	for {
		if i >= len(b) {
			return n, false
		}
		switch c := b[i]; c {
		case '{', '[':
			if base+len(stack) >= maxDepth {
				return n, false
			}
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == closer {
				n += 2
				i++
				break
			}
			stack = append(stack, c)
			n += 2 + 2*(base+len(stack))
			if c == '{' && !key() {
				return n, false
			}
			continue
		case '"':
			end, ok := scanString(b, i)
			if !ok {
				return n, false
			}
			n += end - i
			i = end
		case 't':
			if !hasLit(b, i, "true") {
				return n, false
			}
			n += 4
			i += 4
		case 'f':
			if !hasLit(b, i, "false") {
				return n, false
			}
			n += 5
			i += 5
		case 'n':
			if !hasLit(b, i, "null") {
				return n, false
			}
			n += 4
			i += 4
		default:
			end, ok := scanNumber(b, i)
			if !ok {
				return n, false
			}
			n += end - i
			i = end
		}
		for {
			if len(stack) == 0 {
				if skipWS(b, i) != len(b) {
					return n, false
				}
				if base > 0 {
					return n, true
				}
				return n + len(b) - i, true
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return n, false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				n += 2 + 2*(base+len(stack))
				i = skipWS(b, i+1)
				if top == '{' && !key() {
					return n, false
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				n += 2 + 2*(base+len(stack))
				i++
				continue
			}
			return n, false
		}
		i = skipWS(b, i)
	}
}

func hasLit(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// scanString validates the string starting at the quote b[i] and returns
// the index past its closing quote.
func scanString(b []byte, i int) (int, bool) {
	end, _, ok := jsjson.StringEnd(b, i)
	return end, ok
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return 0, false
		}
	}
	return i, true
}
