package jsjson

import "unicode/utf8"

// replacement is U+FFFD in UTF-8.
const replacement = "\uFFFD"

// invalidLen is the length of the invalid UTF-8 sequence s starts with:
// its maximal subpart, the longest prefix that a valid sequence could
// start with, or one byte. A UTF-8 decoder as the WHATWG Encoding Standard
// specifies it (Node's TextDecoder, Buffer.toString and StringDecoder, with
// which pi reads session files) replaces each such subpart with one
// U+FFFD: "\xe2\x82m" is "\uFFFDm", "\xff\xfe" two of them.
func invalidLen[T string | []byte](s T) int {
	lo, hi := byte(0x80), byte(0xBF)
	need := 0
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	}
	n := 1
	for ; n <= need && n < len(s); n++ {
		if c := s[n]; c < lo || c > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// ValidText is the JavaScript string that a UTF-8 decoder makes of the
// bytes of s, as pi holds them once read: s itself when it is valid UTF-8,
// else s with each invalid sequence replaced by U+FFFD (see invalidLen).
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(AppendValidText(make([]byte, 0, len(s)+8), []byte(s)))
}

// AppendValidText appends b with each invalid UTF-8 sequence replaced by
// U+FFFD, as ValidText.
func AppendValidText(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			dst = append(dst, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, replacement...)
			i += invalidLen(b[i:])
			continue
		}
		dst = append(dst, b[i:i+n]...)
		i += n
	}
	return dst
}
