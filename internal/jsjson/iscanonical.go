package jsjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// maxCanonicalKeys is the most members an object may have for IsCanonical
// to tell that it has no duplicate keys (it compares each key with those
// before it).
const maxCanonicalKeys = 32

// IsCanonical tells that the valid value v is already what AppendCanonical
// would write (JSON.stringify(JSON.parse(v))), in one pass that allocates
// nothing, so that a value pi wrote costs a scan, not a copy. It may say
// false of a canonical value that would take more to prove (an escaped
// surrogate, an object of more than maxCanonicalKeys members); never true
// of one that is not.
func IsCanonical(v []byte) bool {
	// keys holds the keys of the open objects, as offsets into v; frames
	// where each open object's keys start.
	var keysBuf [2 * maxCanonicalKeys]int
	var framesBuf [16]int
	keys, frames := keysBuf[:0], framesBuf[:0]
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == '{':
			frames = append(frames, len(keys))
			i++
		case c == '}':
			keys = keys[:frames[len(frames)-1]]
			frames = frames[:len(frames)-1]
			i++
		case c == '[' || c == ']' || c == ',' || c == ':':
			i++
		case c == '"':
			end, ok := canonicalString(v, i)
			if !ok {
				return false
			}
			if end < len(v) && v[end] == ':' {
				// A key: not integer-like (those come first, in
				// ascending order), not one the object has already.
				k := v[i+1 : end-1]
				if isArrayIndexBytes(k) {
					return false
				}
				from := frames[len(frames)-1]
				if (len(keys)-from)/2 >= maxCanonicalKeys {
					return false
				}
				for j := from; j < len(keys); j += 2 {
					if bytes.Equal(v[keys[j]:keys[j+1]], k) {
						return false
					}
				}
				keys = append(keys, i+1, end-1)
			}
			i = end
		case c == '-' || c >= '0' && c <= '9':
			end := i + 1
			for end < len(v) && isNumberByte(v[end]) {
				end++
			}
			if !canonicalNumber(v[i:end]) {
				return false
			}
			i = end
		case c == 't' || c == 'n':
			i += 4
		case c == 'f':
			i += 5
		default:
			return false // white space
		}
	}
	return true
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// canonicalString tells that the string starting at v[i] is spelled as
// JSON.stringify spells it, and where it ends.
func canonicalString(v []byte, i int) (end int, ok bool) {
	i++
	run := i
	for {
		// A word at a time to the next quote, backslash or control
		// character (special8 tells the first exactly), then byte by
		// byte for the last few.
		for i+8 <= len(v) {
			if m := special8(binary.LittleEndian.Uint64(v[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				goto found
			}
			i += 8
		}
		for i < len(v) && v[i] >= 0x20 && v[i] != '"' && v[i] != '\\' {
			i++
		}
		if i >= len(v) {
			return 0, false
		}
	found:
		switch c := v[i]; {
		case c == '"':
			return i + 1, utf8.Valid(v[run:i])
		case c < 0x20:
			return 0, false
		}
		// A backslash.
		if !utf8.Valid(v[run:i]) || i+1 >= len(v) {
			return 0, false
		}
		switch v[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			// Only a control character without a short escape,
			// in lowercase hex.
			if i+5 >= len(v) || v[i+2] != '0' || v[i+3] != '0' || (v[i+4] != '0' && v[i+4] != '1') || !isLowerHex(v[i+5]) {
				return 0, false
			}
			switch (v[i+4]-'0')<<4 | hexVal(v[i+5]) {
			case 0x08, 0x09, 0x0a, 0x0c, 0x0d:
				return 0, false
			}
			i += 6
		default:
			return 0, false
		}
		run = i
	}
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// canonicalNumber tells that a number is spelled as JavaScript writes it.
func canonicalNumber(n []byte) bool {
	digits := n
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	plain := len(digits) > 0 && len(digits) <= 15 && (digits[0] != '0' || len(digits) == 1)
	for _, c := range digits {
		if c < '0' || c > '9' {
			plain = false
			break
		}
	}
	if plain {
		return string(n) != "-0"
	}
	var buf [32]byte
	return bytes.Equal(FormatNumber(buf[:0], NumberValue(n)), n)
}

// isArrayIndexBytes is isArrayIndex of a key's raw text.
func isArrayIndexBytes(k []byte) bool {
	if len(k) == 0 || len(k) > 10 || k[0] < '0' || k[0] > '9' {
		return false
	}
	for _, c := range k {
		if c < '0' || c > '9' {
			return false
		}
	}
	return isArrayIndex(string(k))
}
