package render

import (
	"math"
	"path/filepath"
	"strings"
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
		s, _ := jsjson.Unquote(v)
		return append(dst, s...)
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
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	return jsjson.Trim(s)
}

// shortenHome is pi's shortenHomePath: an absolute path inside home is
// written from "~" ("~" for home itself); anything else as it is.
func shortenHome(path, home string) string {
	if home == "" || !filepath.IsAbs(path) || !filepath.IsAbs(home) {
		return path
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
