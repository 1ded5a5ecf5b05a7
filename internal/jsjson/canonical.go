package jsjson

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonical returns JSON.stringify(JSON.parse(raw)): whitespace dropped,
// numbers and strings re-spelled, duplicate keys collapsed (the last value at
// the first key's place) and integer-like keys moved first in ascending
// order, as JavaScript objects order them.
func Canonical(raw []byte) ([]byte, error) {
	v, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	return appendCanonical(nil, v), nil
}

// AppendCanonical appends the canonical form of the valid value v.
func AppendCanonical(dst, v []byte) []byte { return appendCanonical(dst, v) }

func appendCanonical(dst, v []byte) []byte {
	switch KindOf(v) {
	case Null, Bool:
		return append(dst, v...)
	case Number:
		return FormatNumber(dst, NumberValue(v))
	case String:
		return requote(dst, v)
	case Array:
		dst = append(dst, '[')
		first := true
		Elements(v, func(e []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendCanonical(dst, e)
			return true
		})
		return append(dst, ']')
	case Object:
		keys, vals := ObjectMembers(v)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = Quote(dst, k)
			dst = append(dst, ':')
			dst = appendCanonical(dst, vals[i])
		}
		return append(dst, '}')
	}
	return dst
}

// ObjectMembers returns an object's keys in JavaScript property order with
// their (last) values.
func ObjectMembers(obj []byte) ([]string, [][]byte) {
	var keys []string
	var vals [][]byte
	index := map[string]int{}
	Members(obj, func(k, v []byte) bool {
		s, _ := Unquote(k)
		if i, ok := index[s]; ok {
			vals[i] = v
			return true
		}
		index[s] = len(keys)
		keys = append(keys, s)
		vals = append(vals, v)
		return true
	})
	// Integer-like keys (array indices) come first, ascending.
	var ints []int
	for i, k := range keys {
		if isArrayIndex(k) {
			ints = append(ints, i)
		}
	}
	if len(ints) == 0 {
		return keys, vals
	}
	sort.SliceStable(ints, func(a, b int) bool {
		x, _ := strconv.ParseUint(keys[ints[a]], 10, 64)
		y, _ := strconv.ParseUint(keys[ints[b]], 10, 64)
		return x < y
	})
	nk := make([]string, 0, len(keys))
	nv := make([][]byte, 0, len(keys))
	isInt := map[int]bool{}
	for _, i := range ints {
		nk = append(nk, keys[i])
		nv = append(nv, vals[i])
		isInt[i] = true
	}
	for i := range keys {
		if !isInt[i] {
			nk = append(nk, keys[i])
			nv = append(nv, vals[i])
		}
	}
	return nk, nv
}

func isArrayIndex(k string) bool {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return err == nil && n < 1<<32-1
}

// Builder builds a JSON object with keys in the given order, skipping members
// whose value is nil (JSON.stringify drops undefined).
type Builder struct{ buf []byte }

// Raw adds a member with an already-encoded value; nil values are skipped.
func (o *Builder) Raw(key string, val []byte) {
	if val == nil {
		return
	}
	if len(o.buf) == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = Quote(o.buf, key)
	o.buf = append(o.buf, ':')
	o.buf = append(o.buf, val...)
}

// String adds a string member.
func (o *Builder) String(key, val string) { o.Raw(key, Quote(nil, val)) }

// Number adds a number member.
func (o *Builder) Number(key string, f float64) { o.Raw(key, FormatNumber(nil, f)) }

// Bytes returns the encoded object.
func (o *Builder) Bytes() []byte {
	if len(o.buf) == 0 {
		return []byte("{}")
	}
	return append(o.buf, '}')
}

// requote re-spells a raw string as JSON.stringify would. It differs from
// Quote(Unquote(v)) only for lone surrogates, which JavaScript strings can
// hold and JSON.stringify writes as lowercase \u escapes.
func requote(dst, raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`\u`)) {
		s, _ := Unquote(raw)
		return Quote(dst, s)
	}
	dst = append(dst, '"')
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); {
		if body[i] == '\\' && body[i+1] == 'u' {
			r, _ := hex4(body, i+2)
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+12 <= len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
					if r2, ok := hex4(body, i+8); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
						dst = utf8.AppendRune(dst, utf16.DecodeRune(r, r2))
						i += 12
						continue
					}
				}
				dst = append(dst, fmt.Sprintf("\\u%04x", r)...)
				i += 6
				continue
			}
		}
		// Re-spell everything up to the next \u escape with Quote.
		j := i + 1
		if body[i] == '\\' {
			j = i + 2
			if body[i+1] == 'u' {
				j = i + 6
			}
		}
		for j < len(body) && body[j] != '\\' {
			j++
		}
		s, _ := Unquote(append(append([]byte{'"'}, body[i:j]...), '"'))
		q := Quote(nil, s)
		dst = append(dst, q[1:len(q)-1]...)
		i = j
	}
	return append(dst, '"')
}
