package jsjson

// MaxDepth is encoding/json's nesting limit: its Indent refuses deeper
// input, and so does AppendIndent, to give the same bytes.
const MaxDepth = 10000

// AppendIndent appends the value v indented with two spaces, as
// encoding/json's Indent(dst, v, "", "  ") does: whitespace between tokens
// dropped, strings and numbers as they are, empty objects and arrays kept
// as "{}" and "[]". base is the depth of the value inside containers the
// caller writes around it (0 for a value alone): its lines are indented
// from there, it may nest MaxDepth-base levels, and whitespace after it is
// dropped, as it is between tokens; at base 0 it is kept, as encoding/json
// keeps it after the top value. ok is false when v is not one valid JSON
// value or nests too deep; dst then holds part of the value after its
// original length.
func AppendIndent(dst, v []byte, base int) (_ []byte, ok bool) {
	w := indenter{dst: dst, base: base}
	ok = w.value(v)
	return w.dst, ok
}

// IndentSize is the number of bytes AppendIndent appends, counted by the
// same walk without writing them.
func IndentSize(v []byte, base int) (n int, ok bool) {
	w := indenter{count: true, base: base}
	ok = w.value(v)
	return w.n, ok
}

// An indenter is told a value's tokens by scanValue as it reads them, and
// writes them indented, or, counting, adds up how many bytes it would
// write: the writer and the counter are one walk, so their results cannot
// disagree.
type indenter struct {
	dst   []byte
	n     int // the bytes counted
	count bool
	base  int
}

// value indents the whole of v, which may have whitespace around it.
func (w *indenter) value(v []byte) bool {
	end, err := scanValue(v, 0, w)
	if err != nil || SkipWS(v, end) != len(v) {
		return false
	}
	if w.base == 0 {
		w.write(v[end:])
	}
	return true
}

func (w *indenter) write(p []byte) {
	if w.count {
		w.n += len(p)
		return
	}
	w.dst = append(w.dst, p...)
}

func (w *indenter) writeByte(c byte) {
	if w.count {
		w.n++
		return
	}
	w.dst = append(w.dst, c)
}

// pair writes an empty object or array.
func (w *indenter) pair(opener, closer byte) {
	if w.count {
		w.n += 2
		return
	}
	w.dst = append(w.dst, opener, closer)
}

const spaces = "                                                                                                                                "

// newline starts a line at depth levels inside the value.
func (w *indenter) newline(depth int) {
	n := 2 * (w.base + depth)
	if w.count {
		w.n += 1 + n
		return
	}
	w.dst = append(w.dst, '\n')
	for n > len(spaces) {
		w.dst = append(w.dst, spaces...)
		n -= len(spaces)
	}
	w.dst = append(w.dst, spaces[:n]...)
}
