package render

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
)

// JavaScript's text conversions, for views whose text pi builds with
// String(), template literals, slice() and trim(): pifs must turn a JSON
// value into the same text.

// appendJSString appends String(v) of a raw JSON value (nil is undefined):
// a string as itself, a number as JavaScript prints it, an array as its
// elements joined with ",", an object as "[object Object]".
func appendJSString(dst, v []byte) []byte {
	switch jsjson.KindOf(v) {
	case jsjson.Invalid:
		return append(dst, "undefined"...)
	case jsjson.Null:
		return append(dst, "null"...)
	case jsjson.Bool:
		return append(dst, v...)
	case jsjson.Number:
		return appendJSNumber(dst, jsjson.NumberValue(v))
	case jsjson.String:
		return appendStringText(dst, v)
	case jsjson.Array:
		first := true
		jsjson.Elements(v, func(el []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			if k := jsjson.KindOf(el); k != jsjson.Null && k != jsjson.Invalid {
				dst = appendJSString(dst, el)
			}
			return true
		})
		return dst
	}
	return append(dst, "[object Object]"...)
}

// jsString is String(v) of a raw JSON value.
func jsString(v []byte) string { return string(appendJSString(nil, v)) }

// appendJSNumber appends a number as JavaScript prints it.
func appendJSNumber(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return jsjson.FormatNumber(dst, f)
}

// jsRound is Math.round: halves round up.
func jsRound(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return r
}

// utf16Len is a string's length in JavaScript: UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// utf16Cut is JavaScript's s.slice(0, n). A surrogate pair cut in half
// leaves its first half, which becomes U+FFFD when the text is written out
// as UTF-8.
func utf16Cut(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n {
				return s[:i] + string(utf8.RuneError)
			}
			return s[:i]
		}
		units += w
	}
	return s
}

// normalize is the /tree selector's text normalization: each line feed and
// tab becomes a space, then white space is trimmed (String.prototype.trim).
func normalize(s string) string {
	b := normalizeFrom([]byte(s), 0)
	return string(b)
}

// normalizeFrom normalizes dst[start:] in place.
func normalizeFrom(dst []byte, start int) []byte {
	text := dst[start:]
	for i, c := range text {
		if c == '\n' || c == '\t' {
			text[i] = ' '
		}
	}
	i, j := trimBounds(text)
	n := copy(text, text[i:j])
	return dst[:start+n]
}

// trimBounds is where text trimmed as String.prototype.trim trims it
// starts and ends: JavaScript's white space and line terminators (line
// feeds and tabs among them) at either end are left out.
func trimBounds(text []byte) (i, j int) {
	i, j = 0, len(text)
	for i < j {
		r, size := utf8.DecodeRune(text[i:])
		if !isJSSpace(r) {
			break
		}
		i += size
	}
	for j > i {
		r, size := utf8.DecodeLastRune(text[i:j])
		if !isJSSpace(r) {
			break
		}
		j -= size
	}
	return i, j
}

// isJSSpace is the white space String.prototype.trim removes.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// cutFrom is JavaScript's slice(0, n) of dst[start:], in place.
func cutFrom(dst []byte, start, n int) []byte {
	units := 0
	for i := start; i < len(dst); {
		r, size := utf8.DecodeRune(dst[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n {
				return utf8.AppendRune(dst[:i], utf8.RuneError)
			}
			return dst[:i]
		}
		units += w
		i += size
	}
	return dst
}

// shortenHome is pi's shortenHomePath: an absolute path inside home is
// written from "~" ("~" for home itself); anything else as it is.
func shortenHome(path, home string) string {
	if home == "" || !filepath.IsAbs(path) || !filepath.IsAbs(home) {
		return path
	}
	if rest, ok := strings.CutPrefix(path, home); ok && len(rest) > 1 && rest[0] == '/' && !strings.HasSuffix(home, "/") && filepath.Clean(home) == home && filepath.Clean(rest) == rest {
		return "~" + rest // already clean: the common case
	}
	h, p := filepath.Clean(home), filepath.Clean(path)
	if p == h {
		return "~"
	}
	prefix := h
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if rel, ok := strings.CutPrefix(p, prefix); ok {
		return "~/" + rel
	}
	return path
}

// appendStringText appends a raw JSON string's whole text as
// appendStringStart does with no bound: escapes decoded (a lone surrogate
// is U+FFFD), each invalid UTF-8 sequence U+FFFD as pi reads the file
// (jsjson.AppendValidText). Runs between escapes that are valid UTF-8,
// most text, are copied whole.
func appendStringText(dst, raw []byte) []byte {
	if len(raw) < 2 {
		return dst
	}
	body := raw[1 : len(raw)-1]
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		if k < 0 {
			k = len(body)
		}
		// A backslash is never part of a UTF-8 sequence, valid or not, so
		// the run decodes as it would with what follows it.
		dst = jsjson.AppendValidText(dst, body[:k])
		if body = body[k:]; len(body) > 0 {
			r, i := textRune(body, 0)
			dst = utf8.AppendRune(dst, r)
			body = body[i:]
		}
	}
	return dst
}

// appendStringStart appends the start of a raw JSON string's text, at most
// n UTF-16 units of it, decoding only that much, and returns how many units
// it appended. A surrogate pair that does not fit leaves its first half,
// as slice() does, which is U+FFFD in UTF-8; so does a lone surrogate.
func appendStringStart(dst, raw []byte, n int) ([]byte, int) {
	if len(raw) < 2 {
		return dst, 0
	}
	body := raw[1 : len(raw)-1]
	// Most text is ASCII without escapes: copied as it is.
	k := 0
	for k < len(body) && k < n && body[k] < utf8.RuneSelf && body[k] != '\\' {
		k++
	}
	dst = append(dst, body[:k]...)
	units := k
	for i := k; i < len(body) && units < n; {
		var r rune
		r, i = textRune(body, i)
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			return utf8.AppendRune(dst, utf8.RuneError), n
		}
		dst = utf8.AppendRune(dst, r)
		units += w
	}
	return dst, units
}

// textRune is the character at body[i] of a JSON string's body as pi's
// text holds it once written out as UTF-8 (jsjson.DecodeRune, a lone
// surrogate U+FFFD), and where the next one starts. A bad escape, which a
// parsed entry never holds, is a backslash.
func textRune(body []byte, i int) (rune, int) {
	r, next, ok := jsjson.DecodeRune(body, i)
	switch {
	case !ok:
		return '\\', i + 1
	case utf16.IsSurrogate(r):
		return utf8.RuneError, next
	}
	return r, next
}
