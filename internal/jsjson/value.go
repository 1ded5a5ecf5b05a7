package jsjson

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes a raw JSON string (with its quotes). Lone surrogates
// become U+FFFD, as they do when JavaScript text is written out as UTF-8,
// and so does each invalid UTF-8 sequence, as JavaScript reads the bytes
// (see invalidLen).
func Unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", ErrSyntax
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), nil
	}
	b, ok := appendUnquoted(make([]byte, 0, len(body)), body)
	if !ok {
		return "", ErrSyntax
	}
	return string(b), nil
}

// AppendUnquoted appends the value of the valid JSON string raw (quotes
// included), decoded as Unquote decodes it.
func AppendUnquoted(dst, raw []byte) []byte {
	dst, _ = appendUnquoted(dst, raw[1:len(raw)-1])
	return dst
}

// appendUnquoted appends the decoded body of a string; ok is false at a
// bad escape, where it stops.
func appendUnquoted(dst, body []byte) (_ []byte, ok bool) {
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		seg := body
		if k >= 0 {
			seg = body[:k]
		}
		dst = AppendValidText(dst, seg) // each invalid sequence one U+FFFD, as pi's decoder
		if k < 0 {
			break
		}
		body = body[k:]
		if len(body) < 2 {
			return dst, false
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
			var r rune
			if r, n, ok = escapeU(body, 0); !ok {
				return dst, false
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
		body = body[n:]
	}
	return dst, true
}

// DecodeRune decodes the character at body[i] of a JSON string's body
// (its text between the quotes) as JavaScript reads it, and returns it
// and where the next one starts: an escape, with a \u pair that spells a
// surrogate pair one character and a lone surrogate itself (a JavaScript
// string can hold one; utf16.IsSurrogate tells it); else a UTF-8
// sequence, an invalid one being U+FFFD for its maximal subpart, as
// Unquote reads it. ok is false at a bad escape: a backslash that ends
// the body, an unknown letter, \u without four hex digits.
func DecodeRune(body []byte, i int) (r rune, next int, ok bool) {
	c := body[i]
	switch {
	case c < utf8.RuneSelf && c != '\\':
		return rune(c), i + 1, true
	case c != '\\':
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n == 1 {
			n = invalidLen(body[i:])
		}
		return r, i + n, true
	case i+1 >= len(body):
		return 0, i, false
	}
	switch c := body[i+1]; c {
	case '"', '\\', '/':
		return rune(c), i + 2, true
	case 'b':
		return '\b', i + 2, true
	case 'f':
		return '\f', i + 2, true
	case 'n':
		return '\n', i + 2, true
	case 'r':
		return '\r', i + 2, true
	case 't':
		return '\t', i + 2, true
	case 'u':
		r, n, ok := escapeU(body, i)
		return r, i + n, ok
	}
	return 0, i, false
}

// escapeU decodes the \u escape at b[i], joined with a second one that
// follows when the two spell a surrogate pair, and returns the rune and
// the bytes the escapes take; ok is false for bad hex digits. A lone
// surrogate comes back as itself: JavaScript strings can hold one, and
// only their writers differ (U+FFFD in UTF-8, an escape in JSON).
func escapeU(b []byte, i int) (r rune, n int, ok bool) {
	if r, ok = hex4(b, i+2); !ok {
		return 0, 0, false
	}
	if r >= 0xD800 && r < 0xDC00 && i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
		if r2, ok := hex4(b, i+8); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
			return utf16.DecodeRune(r, r2), 12, true
		}
	}
	return r, 6, true
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

// Quote writes s as JSON.stringify does: only '"', '\\' and control
// characters are escaped, with the short escapes where JavaScript has them.
// Bytes of s that are not valid UTF-8 are written as the JavaScript string
// read from them holds them: each invalid sequence as one U+FFFD (see
// invalidLen), so that the result is always valid UTF-8 and valid JSON.
func Quote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	valid := utf8.ValidString(s)
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf && !valid {
			if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n != 1 {
				i += n - 1
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, replacement...)
			i += invalidLen(s[i:]) - 1
			start = i + 1
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = appendEscape(append(dst, s[start:i]...), c)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape writes the escape JSON.stringify writes for c, one of '"',
// '\\' and the control characters: the short form where JavaScript has
// one, else \u00XX.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hexd = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
}

// FormatNumber formats f as JavaScript's Number.prototype.toString does;
// NaN and infinities become null, as JSON.stringify writes them.
func FormatNumber(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(exps)
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for i := 0; i < n-k; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := 0; i < -n; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// NumberValue parses a raw JSON number as JavaScript does (overflow gives an
// infinity).
func NumberValue(raw []byte) float64 {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// Truthy reports JavaScript truthiness of a raw value; nil (absent) is
// undefined and so false.
func Truthy(raw []byte) bool {
	switch KindOf(raw) {
	case Invalid, Null:
		return false
	case Bool:
		return raw[0] == 't'
	case String:
		return len(raw) > 2
	case Number:
		f := NumberValue(raw)
		return f != 0 && !math.IsNaN(f)
	}
	return true
}

// ToNumber converts a raw value as JavaScript's Number() does for the kinds
// that can appear in a session header's version; others give NaN. nil is
// undefined (NaN).
func ToNumber(raw []byte) float64 {
	switch KindOf(raw) {
	case Null:
		return 0
	case Bool:
		if raw[0] == 't' {
			return 1
		}
		return 0
	case Number:
		return NumberValue(raw)
	case String:
		s, _ := Unquote(raw)
		s = strings.TrimSpace(s)
		if s == "" {
			return 0
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "_xXpP") && !strings.EqualFold(strings.TrimLeft(s, "+-"), "inf") && !strings.EqualFold(strings.TrimLeft(s, "+-"), "nan") {
			return f
		}
		return math.NaN()
	}
	return math.NaN()
}

// Trim removes leading and trailing white space as String.prototype.trim
// does (its set differs from Go's unicode.IsSpace: U+FEFF is trimmed, U+0085
// is not).
func Trim(s string) string {
	return strings.TrimFunc(s, isJSSpace)
}

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}
