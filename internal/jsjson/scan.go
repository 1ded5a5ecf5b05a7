// Package jsjson reads and writes JSON the way JavaScript's JSON.parse and
// JSON.stringify do, which is how pi reads and writes its session files.
//
// pifs must accept exactly the lines pi accepts, produce byte-identical lines
// when it writes, and interpret values (truthiness, dates, numbers) with
// JavaScript's rules. The scanner works on raw bytes and never builds a value
// tree, so that a 100 MB session can be indexed without decoding message
// bodies.
//
// It is pifs's one JSON reader: the parser's validating walk (which also
// indents, AppendIndent), the iterators over members and elements that the
// renderers read parsed values with, and the string, number and skip
// scanners under both live here once.
package jsjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
)

// ErrSyntax is returned for input that JSON.parse would reject.
var ErrSyntax = errors.New("invalid JSON")

// errDepth is returned for a value that nests deeper than AppendIndent
// takes.
var errDepth = errors.New("JSON nested deeper than encoding/json takes")

// Kind is the type of a JSON value, told from its first byte.
type Kind byte

const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// KindOf reports the kind of the raw value v (which must be valid JSON).
func KindOf(v []byte) Kind {
	if len(v) == 0 {
		return Invalid
	}
	switch v[0] {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '[':
		return Array
	case '{':
		return Object
	default:
		return Number
	}
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipWS returns the index of the first non-whitespace byte at or after i.
func SkipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// TrimWS trims JSON whitespace from both ends.
func TrimWS(b []byte) []byte {
	i := SkipWS(b, 0)
	j := len(b)
	for j > i && isWS(b[j-1]) {
		j--
	}
	return b[i:j]
}

// Parse checks that line holds exactly one JSON value, surrounded only by
// whitespace, and returns that value's bytes.
func Parse(line []byte) ([]byte, error) {
	v := TrimWS(line)
	if len(v) == 0 {
		return nil, ErrSyntax
	}
	end, err := scanValue(v, 0, nil)
	if err != nil {
		return nil, err
	}
	if end != len(v) {
		return nil, ErrSyntax
	}
	return v, nil
}

// Valid reports whether b is exactly one JSON value with optional whitespace.
func Valid(b []byte) bool {
	_, err := Parse(b)
	return err == nil
}

// scanValue validates the value starting at b[i] (after optional
// whitespace) and returns the index just past it. It is iterative, so
// nesting depth costs heap, not stack. Given an indenter, it also writes
// the value indented to it as it reads (see AppendIndent); it is the one
// reading of JSON's grammar, for parsing and indenting alike.
func scanValue(b []byte, i int, w *indenter) (int, error) {
	var open [32]byte
	stack := open[:0] // '[' or '{' for each open container
	for {
		i = SkipWS(b, i)
		if i >= len(b) {
			return 0, ErrSyntax
		}
		// A value.
		switch c := b[i]; c {
		case '{', '[':
			if w != nil && w.base+len(stack) >= MaxDepth {
				return 0, errDepth
			}
			closer := c + 2 // '}' and ']' follow their openers by two
			i = SkipWS(b, i+1)
			if i < len(b) && b[i] == closer {
				i++
				if w != nil {
					w.empty(c)
				}
				break
			}
			stack = append(stack, c)
			if w != nil {
				w.open(c, len(stack))
			}
			if c == '{' {
				var err error
				if i, err = scanKeyColon(b, i, w); err != nil {
					return 0, err
				}
			}
			continue
		case '"':
			end, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			if w != nil {
				w.token(b, i, end)
			}
			i = end
		default:
			end, ok := 0, false
			switch c {
			case 't':
				end, ok = literalEnd(b, i, "true")
			case 'f':
				end, ok = literalEnd(b, i, "false")
			case 'n':
				end, ok = literalEnd(b, i, "null")
			default:
				end, ok = NumberEnd(b, i)
			}
			if !ok {
				return 0, ErrSyntax
			}
			if w != nil {
				w.token(b, i, end)
			}
			i = end
		}
		// After a value: close containers or expect a separator.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = SkipWS(b, i)
			if i >= len(b) {
				return 0, ErrSyntax
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				if w != nil {
					w.comma(len(stack))
				}
				i++
				if top == '{' {
					var err error
					if i, err = scanKeyColon(b, SkipWS(b, i), w); err != nil {
						return 0, err
					}
				}
				break
			}
			if b[i] == top+2 {
				stack = stack[:len(stack)-1]
				if w != nil {
					w.close(top+2, len(stack))
				}
				i++
				continue
			}
			return 0, ErrSyntax
		}
	}
}

// scanKeyColon validates a member's key and the colon after it, and
// returns the index past the colon.
func scanKeyColon(b []byte, i int, w *indenter) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, ErrSyntax
	}
	end, err := scanString(b, i)
	if err != nil {
		return 0, err
	}
	if w != nil {
		w.key(b, i, end)
	}
	i = SkipWS(b, end)
	if i >= len(b) || b[i] != ':' {
		return 0, ErrSyntax
	}
	return i + 1, nil
}

func literalEnd(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

// scanString validates the string starting at the quote b[i].
func scanString(b []byte, i int) (int, error) {
	end, _, ok := StringEnd(b, i)
	if !ok {
		return 0, ErrSyntax
	}
	return end, nil
}

// StringEnd validates the string whose opening quote is b[i], as
// JSON.parse would, and returns the index just past its closing quote, and
// whether it holds escapes; ok is false for an invalid or unterminated
// string.
//
// The quote that may end the string and the backslashes before it are
// found with bytes.IndexByte, which looks at many bytes an instruction,
// and control characters eight bytes at a time; each byte is looked at a
// bounded number of times, however many escapes the string holds.
func StringEnd(b []byte, i int) (end int, escaped, ok bool) {
	i++
	q := -1 // the first quote at or after i, once looked for
	for {
		// Most strings are short (keys, ids, dates): a few words at a
		// time first, each telling where its first quote, backslash or
		// control character is.
		for n := 0; n < 4 && i+8 <= len(b); n++ {
			m := special8(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
			goto found
		}
		// A long run: the quote that may end it, then what comes before.
		if q < i {
			k := bytes.IndexByte(b[i:], '"')
			if k < 0 {
				return 0, false, false
			}
			q = i + k
		}
		if k := bytes.IndexByte(b[i:q], '\\'); k < 0 {
			if hasControl(b[i:q]) {
				return 0, false, false
			}
			return q + 1, escaped, true
		} else {
			if hasControl(b[i : i+k]) {
				return 0, false, false
			}
			i += k
		}
	found:
		if i >= len(b) {
			return 0, false, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+5 >= len(b) {
					return 0, false, false
				}
				for k := i + 2; k < i+6; k++ {
					if unhex(b[k]) < 0 {
						return 0, false, false
					}
				}
				i += 6
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		default:
			i++ // a plain byte the words before the end of b left
		}
	}
}

// special8 has the high bit of each byte of x that is a quote, a
// backslash or below 0x20 set, and possibly of bytes above the first such
// (a borrow carries): the lowest set bit is exact.
func special8(x uint64) uint64 {
	less := (x - 0x20*lsb) &^ x
	q := x ^ ('"' * lsb)
	q = (q - lsb) &^ q
	bs := x ^ ('\\' * lsb)
	bs = (bs - lsb) &^ bs
	return (less | q | bs) & msb
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasControl reports whether s holds a byte below 0x20, which a string
// may not (the classic has-less-than byte trick, four words at a time).
func hasControl(s []byte) bool {
	const lo = 0x20 * lsb
	for len(s) >= 32 {
		a := binary.LittleEndian.Uint64(s)
		b := binary.LittleEndian.Uint64(s[8:])
		c := binary.LittleEndian.Uint64(s[16:])
		d := binary.LittleEndian.Uint64(s[24:])
		if ((a-lo)&^a|(b-lo)&^b|(c-lo)&^c|(d-lo)&^d)&msb != 0 {
			return true
		}
		s = s[32:]
	}
	for len(s) >= 8 {
		a := binary.LittleEndian.Uint64(s)
		if (a-lo)&^a&msb != 0 {
			return true
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// ScanValue validates the value starting at b[i] (after optional
// whitespace) and returns the index just past it.
func ScanValue(b []byte, i int) (int, error) {
	if i < len(b) && b[i] == '"' {
		// Most values of a session's lines are strings.
		return scanString(b, i)
	}
	return scanValue(b, i, nil)
}

// ScanObject validates the object starting at b[i] (after optional
// whitespace). For each member it calls val with the raw key and the index
// where the value starts; val must scan and validate the value (ScanValue,
// or ScanObject for a nested object it wants to look into) and return the
// index past it. It returns the index past the object.
func ScanObject(b []byte, i int, val func(key, b []byte, i int) (int, error)) (int, error) {
	i = SkipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, ErrSyntax
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, ErrSyntax
		}
		kend, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i:kend]
		i = SkipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, ErrSyntax
		}
		i = SkipWS(b, i+1)
		if i, err = val(key, b, i); err != nil {
			return 0, err
		}
		i = SkipWS(b, i)
		if i >= len(b) {
			return 0, ErrSyntax
		}
		switch b[i] {
		case ',':
			i = SkipWS(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, ErrSyntax
		}
	}
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

// NumberEnd validates the number starting at b[i], as JSON.parse reads
// one, and returns the index past it.
func NumberEnd(b []byte, i int) (int, bool) {
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
		i = digitsEnd(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		start := i + 1
		if i = digitsEnd(b, start); i == start {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		if i = digitsEnd(b, start); i == start {
			return 0, false
		}
	}
	return i, true
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// The readers below walk JSON that has been validated already (by Parse,
// ScanValue or ScanObject), taking each value as a slice of its bytes
// without checking it again.

// skip returns the end of the valid value starting at b[i].
func skip(b []byte, i int) int {
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

// MemberIter reads the members of a valid object, one at a time:
//
//	for it := jsjson.IterMembers(obj); it.Next(); {
//		switch string(it.Name()) {
//		case "role":
//			role = it.Value()
//		}
//	}
type MemberIter struct {
	b    []byte
	i    int // where the next member starts
	done bool
	// The member Next moved to: b[ks:ke] is its key, b[vs:ve] its
	// value; esc tells that the key holds an escape. Bounds, not
	// slices: storing a slice costs a write barrier's check.
	ks, ke, vs, ve int
	esc            bool
	// known are values located already: when a member's value starts
	// where one does, Next jumps over it instead of reading it again.
	known [2][]byte
}

// IterMembers reads the members of obj, which need not be an object (then
// there are none).
func IterMembers(obj []byte) MemberIter {
	if KindOf(obj) != Object {
		return MemberIter{done: true}
	}
	return membersAt(obj, 0)
}

// membersAt reads the object whose brace is b[i].
func membersAt(b []byte, i int) MemberIter {
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return MemberIter{b: b, i: i + 1, done: true}
	}
	return MemberIter{b: b, i: i}
}

// Known gives values of the object located already (slices of the same
// bytes, as the session parser keeps a message's content): a member whose
// value starts where one of them does is jumped over, not read again.
func (m *MemberIter) Known(a, b []byte) { m.known = [2][]byte{a, b} }

// Next moves to the next member; it reports false past the last.
func (m *MemberIter) Next() bool {
	b, i := m.b, m.i
	if m.done || i >= len(b) || b[i] != '"' {
		m.done = true
		m.ks, m.ke, m.vs, m.ve = 0, 0, 0, 0
		return false
	}
	kend := skipString(b, i)
	m.ks, m.ke, m.esc = i, kend, false
	for _, c := range b[i+1 : kend-1] {
		if c == '\\' {
			m.esc = true
			break
		}
	}
	i = SkipWS(b, kend) + 1 // past ':'
	i = SkipWS(b, i)
	var vend int
	if k := m.known[0]; len(k) > 0 && len(b)-i >= len(k) && &b[i] == &k[0] {
		vend = i + len(k)
	} else if k := m.known[1]; len(k) > 0 && len(b)-i >= len(k) && &b[i] == &k[0] {
		vend = i + len(k)
	} else {
		vend = skip(b, i)
	}
	m.vs, m.ve = i, vend
	i = SkipWS(b, vend)
	if i < len(b) && b[i] == ',' {
		m.i = SkipWS(b, i+1)
	} else {
		m.i = i + 1 // past '}'
		m.done = true
	}
	return true
}

// Key is the member's raw key, quotes included.
func (m *MemberIter) Key() []byte { return m.b[m.ks:m.ke] }

// Name is the member's name: KeyName of its key.
func (m *MemberIter) Name() []byte {
	if m.esc {
		return m.decodedName()
	}
	return m.b[m.ks+1 : m.ke-1]
}

// decodedName is Name's rare path, kept out of line so that Name is
// inlined.
//
//go:noinline
func (m *MemberIter) decodedName() []byte { return AppendUnquoted(nil, m.Key()) }

// Value is the member's raw value.
func (m *MemberIter) Value() []byte { return m.b[m.vs:m.ve] }

// KeyName is a raw key's name: the bytes between its quotes, decoded only
// when it holds an escape.
func KeyName(key []byte) []byte {
	for _, c := range key {
		if c == '\\' {
			return decodedKey(key)
		}
	}
	return key[1 : len(key)-1]
}

// decodedKey is KeyName's rare path, kept out of line so that KeyName is
// inlined.
//
//go:noinline
func decodedKey(key []byte) []byte { return AppendUnquoted(nil, key) }

// ElementIter reads the elements of a valid array, one at a time.
type ElementIter struct {
	b []byte
	i int
}

// IterElements reads the elements of arr, which need not be an array (then
// there are none).
func IterElements(arr []byte) ElementIter {
	if KindOf(arr) != Array {
		return ElementIter{}
	}
	return ElementIter{b: arr, i: SkipWS(arr, 1)}
}

// Next returns the next element; ok is false past the last one.
func (a *ElementIter) Next() (val []byte, ok bool) {
	b, i := a.b, a.i
	if i >= len(b) || b[i] == ']' {
		return nil, false
	}
	return b[i:a.past(skip(b, i))], true
}

// Object starts reading the next element's members when it is an object,
// so that a caller reads a block once: it reads every member (until Next
// reports false), then EndObject moves past the element and returns it.
func (a *ElementIter) Object() (MemberIter, bool) {
	if a.i >= len(a.b) || a.b[a.i] != '{' {
		return MemberIter{}, false
	}
	return membersAt(a.b, a.i), true
}

// EndObject moves past the element whose members m, from Object, has read
// to the end, and returns the element.
func (a *ElementIter) EndObject(m *MemberIter) []byte {
	start := a.i
	return a.b[start:a.past(m.i)]
}

// past moves past the element that ends at end, returning end.
func (a *ElementIter) past(end int) int {
	b := a.b
	a.i = SkipWS(b, end)
	if a.i < len(b) && b[a.i] == ',' {
		a.i = SkipWS(b, a.i+1)
	}
	return end
}

// Members calls fn for each member of the valid object obj, in order, with the
// key's raw bytes (quotes included) and the value's bytes. It stops when fn
// returns false.
func Members(obj []byte, fn func(key, val []byte) bool) {
	for it := IterMembers(obj); it.Next() && fn(it.Key(), it.Value()); {
	}
}

// Elements calls fn for each element of the valid array arr.
func Elements(arr []byte, fn func(val []byte) bool) {
	for it := IterElements(arr); ; {
		v, ok := it.Next()
		if !ok || !fn(v) {
			return
		}
	}
}

// KeyIs reports whether the raw key (with quotes) spells name, without
// allocating unless the key holds an escape.
func KeyIs(key []byte, name string) bool {
	if len(key) == len(name)+2 && string(key[1:len(key)-1]) == name {
		return true
	}
	if bytes.IndexByte(key, '\\') < 0 {
		return false
	}
	s, _ := Unquote(key)
	return s == name
}

// StringIs reports whether the raw value v is a string whose value is s.
func StringIs(v []byte, s string) bool { return KindOf(v) == String && KeyIs(v, s) }

// Get returns the value of the last member named name (JSON.parse keeps the
// last of duplicate keys), or nil when obj has none or is not an object.
func Get(obj []byte, name string) []byte {
	var found []byte
	Members(obj, func(k, v []byte) bool {
		if KeyIs(k, name) {
			found = v
		}
		return true
	})
	return found
}

// Has reports whether obj has a member named name.
func Has(obj []byte, name string) bool { return Get(obj, name) != nil }

// Str returns the string value of obj[name] and whether it is a string.
func Str(obj []byte, name string) (string, bool) { return StringValue(Get(obj, name)) }

// StringValue returns the value of the raw string v and whether v is a
// string.
func StringValue(v []byte) (string, bool) {
	if KindOf(v) != String {
		return "", false
	}
	s, err := Unquote(v)
	return s, err == nil
}
