// Package jsjson reads and writes JSON the way JavaScript's JSON.parse and
// JSON.stringify do, which is how pi reads and writes its session files.
//
// pifs must accept exactly the lines pi accepts, produce byte-identical lines
// when it writes, and interpret values (truthiness, dates, numbers) with
// JavaScript's rules. The scanner works on raw bytes and never builds a value
// tree, so that a 100 MB session can be indexed without decoding message
// bodies.
package jsjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
)

// ErrSyntax is returned for input that JSON.parse would reject.
var ErrSyntax = errors.New("invalid JSON")

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
	end, err := scanValue(v, 0)
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

// scanValue validates the value starting at b[i] and returns the index just
// past it. It is iterative, so nesting depth costs heap, not stack.
func scanValue(b []byte, i int) (int, error) {
	var open [32]byte
	stack := open[:0] // '[' or '{' for each open container
	for {
		i = SkipWS(b, i)
		if i >= len(b) {
			return 0, ErrSyntax
		}
		// A value.
		switch c := b[i]; {
		case c == '{':
			i = SkipWS(b, i+1)
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			stack = append(stack, '{')
			// Expect key.
			var err error
			if i, err = scanKeyColon(b, i); err != nil {
				return 0, err
			}
			continue
		case c == '[':
			i = SkipWS(b, i+1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			stack = append(stack, '[')
			continue
		case c == '"':
			end, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		case c == 't':
			if !bytes.HasPrefix(b[i:], []byte("true")) {
				return 0, ErrSyntax
			}
			i += 4
		case c == 'f':
			if !bytes.HasPrefix(b[i:], []byte("false")) {
				return 0, ErrSyntax
			}
			i += 5
		case c == 'n':
			if !bytes.HasPrefix(b[i:], []byte("null")) {
				return 0, ErrSyntax
			}
			i += 4
		case c == '-' || (c >= '0' && c <= '9'):
			end, err := scanNumber(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		default:
			return 0, ErrSyntax
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
				i++
				if top == '{' {
					var err error
					if i, err = scanKeyColon(b, SkipWS(b, i)); err != nil {
						return 0, err
					}
				}
				break
			}
			if (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return 0, ErrSyntax
		}
	}
}

func scanKeyColon(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, ErrSyntax
	}
	end, err := scanString(b, i)
	if err != nil {
		return 0, err
	}
	i = SkipWS(b, end)
	if i >= len(b) || b[i] != ':' {
		return 0, ErrSyntax
	}
	return i + 1, nil
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
func ScanValue(b []byte, i int) (int, error) { return scanValue(b, i) }

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

func scanNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return 0, ErrSyntax
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return 0, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return 0, ErrSyntax
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
			return 0, ErrSyntax
		}
	}
	return i, nil
}

// skip returns the end of the (already validated) value starting at b[i].
func skip(b []byte, i int) int {
	switch b[i] {
	case '"':
		// The string is valid: it ends at the first quote with an even
		// number of backslashes before it.
		for i++; ; {
			q := i + bytes.IndexByte(b[i:], '"')
			k := q
			for k > i && b[k-1] == '\\' {
				k--
			}
			if (q-k)%2 == 0 {
				return q + 1
			}
			i = q + 1
		}
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skip(b, i)
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

// Members calls fn for each member of the valid object obj, in order, with the
// key's raw bytes (quotes included) and the value's bytes. It stops when fn
// returns false.
func Members(obj []byte, fn func(key, val []byte) bool) {
	if KindOf(obj) != Object {
		return
	}
	i := SkipWS(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		kend := skip(obj, i)
		key := obj[i:kend]
		i = SkipWS(obj, kend) + 1 // past ':'
		i = SkipWS(obj, i)
		vend := skip(obj, i)
		if !fn(key, obj[i:vend]) {
			return
		}
		i = SkipWS(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = SkipWS(obj, i+1)
			continue
		}
		return
	}
}

// Elements calls fn for each element of the valid array arr.
func Elements(arr []byte, fn func(val []byte) bool) {
	if KindOf(arr) != Array {
		return
	}
	i := SkipWS(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := skip(arr, i)
		if !fn(arr[i:end]) {
			return
		}
		i = SkipWS(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = SkipWS(arr, i+1)
		}
	}
}

// KeyIs reports whether the raw key (with quotes) spells name.
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
func Str(obj []byte, name string) (string, bool) {
	v := Get(obj, name)
	if KindOf(v) != String {
		return "", false
	}
	s, err := Unquote(v)
	return s, err == nil
}
