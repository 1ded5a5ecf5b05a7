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
// writes them indented, or, counting, only adds up how many bytes it
// would write: the writer and the counter are one walk, so their results
// cannot disagree.
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
		w.token(v, end, len(v))
	}
	return true
}

// The events of a walk, each written or counted. A token (a string, a
// number, a literal) is written as it is, a key with ": " after it; an
// empty object or array as "{}" or "[]"; a container opens and its
// members or elements are separated with a newline at their depth, and it
// closes on a line at its own.

func (w *indenter) token(b []byte, i, end int) {
	if w.count {
		w.n += end - i
		return
	}
	w.dst = append(w.dst, b[i:end]...)
}

func (w *indenter) key(b []byte, i, end int) {
	if w.count {
		w.n += end - i + 2
		return
	}
	w.dst = append(append(w.dst, b[i:end]...), ':', ' ')
}

func (w *indenter) empty(opener byte) {
	if w.count {
		w.n += 2
		return
	}
	w.dst = append(w.dst, opener, opener+2)
}

func (w *indenter) open(opener byte, depth int) {
	if w.count {
		w.n += 2 + 2*(w.base+depth)
		return
	}
	w.dst = w.newline(append(w.dst, opener), depth)
}

func (w *indenter) comma(depth int) {
	if w.count {
		w.n += 2 + 2*(w.base+depth)
		return
	}
	w.dst = w.newline(append(w.dst, ','), depth)
}

func (w *indenter) close(closer byte, depth int) {
	if w.count {
		w.n += 2 + 2*(w.base+depth)
		return
	}
	w.dst = append(w.newline(w.dst, depth), closer)
}

const spaces = "                                                                                                                                "

// newline appends a newline and the indentation of depth.
func (w *indenter) newline(dst []byte, depth int) []byte {
	n := 2 * (w.base + depth)
	dst = append(dst, '\n')
	for n > len(spaces) {
		dst = append(dst, spaces...)
		n -= len(spaces)
	}
	return append(dst, spaces[:n]...)
}
