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

// appendCanonical writes v as it is when it is canonical already (one
// scan), else in two passes over its bytes, each linear in its
// length whatever the nesting: the first finds the objects whose members
// JSON.stringify writes in another order than the source's (integer-like
// keys, duplicate keys), the second writes every value once. Both keep
// their containers on a heap stack, so depth costs no goroutine stack.
func appendCanonical(dst, v []byte) []byte {
	if IsCanonical(v) {
		return append(dst, v...)
	}
	return appendCanonicalSlow(dst, v)
}

func appendCanonicalSlow(dst, v []byte) []byte {
	switch KindOf(v) {
	case Array, Object:
		return emitCanonical(dst, v, planObjects(v))
	}
	return appendScalar(dst, v)
}

func appendScalar(dst, v []byte) []byte {
	switch KindOf(v) {
	case Null, Bool:
		return append(dst, v...)
	case Number:
		return FormatNumber(dst, NumberValue(v))
	case String:
		return requote(dst, v)
	}
	return dst
}

// reorder is an object whose members are written in JavaScript's property
// order: each key once, at its first place, with its last value.
type reorder struct {
	keys []string
	vals []int // where each key's value starts in the source
	end  int   // just past the object's closing brace
}

// planObjects finds, by where they start, the objects of the valid value v
// whose members must be reordered.
func planObjects(v []byte) map[int]*reorder {
	var plan map[int]*reorder
	var stack []planFrame
	// key reads the member key at v[i] into the top frame and returns
	// where its value starts.
	key := func(i int) int {
		top := &stack[len(stack)-1]
		kend := skip(v, i)
		k := keyText(v[i:kend])
		if !top.reorder {
			top.reorder = isArrayIndex(k) || top.has(k)
		}
		top.keys = append(top.keys, k)
		if top.seen != nil {
			top.seen[k] = true
		}
		top.vals = append(top.vals, 0)
		i = SkipWS(v, SkipWS(v, kend)+1)
		top.vals[len(top.vals)-1] = i
		return i
	}
	i := 0
	for {
		i = SkipWS(v, i)
		switch v[i] {
		case '{', '[':
			j := SkipWS(v, i+1)
			if v[j] == '}' || v[j] == ']' {
				i = j + 1
				break
			}
			stack = append(stack, planFrame{start: i, obj: v[i] == '{'})
			i = j
			if v[i] == '"' && stack[len(stack)-1].obj {
				i = key(i)
			}
			continue
		default:
			i = skip(v, i)
		}
		// After a value: a separator, or the end of containers.
		for {
			if len(stack) == 0 {
				return plan
			}
			i = SkipWS(v, i)
			top := &stack[len(stack)-1]
			if v[i] == ',' {
				i = SkipWS(v, i+1)
				if top.obj {
					i = key(i)
				}
				break
			}
			i++
			if top.reorder {
				if plan == nil {
					plan = map[int]*reorder{}
				}
				keys, vals := orderMembers(top.keys, top.vals)
				plan[top.start] = &reorder{keys, vals, i}
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// keyText is a member key as JSON.stringify spells it, without its quotes.
// It is the key's identity: keys are one key when their texts are equal,
// and lone surrogates stay escapes, so that two different ones stay two
// keys. An integer-like key's text is its digits.
func keyText(raw []byte) string {
	q := requote(nil, raw)
	return string(q[1 : len(q)-1])
}

// appendKey writes a key given by its text, and the colon after it.
func appendKey(dst []byte, text string) []byte {
	dst = append(dst, '"')
	dst = append(dst, text...)
	return append(dst, '"', ':')
}

type planFrame struct {
	start   int
	obj     bool
	keys    []string
	vals    []int
	seen    map[string]bool // the keys, once there are many
	reorder bool
}

// has tells whether the object already has key k: a scan while it has few
// keys, a map past that, so that a wide object costs linear time too.
func (f *planFrame) has(k string) bool {
	if f.seen == nil && len(f.keys) < 16 {
		for _, x := range f.keys {
			if x == k {
				return true
			}
		}
		return false
	}
	if f.seen == nil {
		f.seen = make(map[string]bool, 2*len(f.keys))
		for _, x := range f.keys {
			f.seen[x] = true
		}
	}
	return f.seen[k]
}

// emitCanonical writes the valid container v, reordering the objects of
// plan.
func emitCanonical(dst, v []byte, plan map[int]*reorder) []byte {
	type frame struct {
		ro  *reorder // nil: members in source order
		k   int      // the member being written, for ro
		obj bool
	}
	var stack []frame
	key := func(i int) int {
		kend := skip(v, i)
		dst = append(requote(dst, v[i:kend]), ':')
		return SkipWS(v, SkipWS(v, kend)+1)
	}
	i := 0
	for {
		i = SkipWS(v, i)
		switch c := v[i]; c {
		case '{', '[':
			if ro := plan[i]; ro != nil && c == '{' {
				stack = append(stack, frame{ro: ro})
				dst = appendKey(append(dst, '{'), ro.keys[0])
				i = ro.vals[0]
				continue
			}
			dst = append(dst, c)
			j := SkipWS(v, i+1)
			if v[j] == '}' || v[j] == ']' {
				dst = append(dst, v[j])
				i = j + 1
				break
			}
			stack = append(stack, frame{obj: c == '{'})
			i = j
			if c == '{' {
				i = key(i)
			}
			continue
		default:
			end := skip(v, i)
			dst = appendScalar(dst, v[i:end])
			i = end
		}
		for {
			if len(stack) == 0 {
				return dst
			}
			top := &stack[len(stack)-1]
			if ro := top.ro; ro != nil {
				top.k++
				if top.k < len(ro.keys) {
					dst = appendKey(append(dst, ','), ro.keys[top.k])
					i = ro.vals[top.k]
					break
				}
				dst = append(dst, '}')
				i = ro.end
				stack = stack[:len(stack)-1]
				continue
			}
			i = SkipWS(v, i)
			if v[i] == ',' {
				dst = append(dst, ',')
				i = SkipWS(v, i+1)
				if top.obj {
					i = key(i)
				}
				break
			}
			dst = append(dst, v[i])
			i++
			stack = stack[:len(stack)-1]
		}
	}
}

// ObjectMembers returns an object's keys in JavaScript property order with
// their (last) values. Each key is given by its text (see keyText): the
// name itself for a key without quotes, backslashes, control characters or
// lone surrogates, which Builder takes back as it is.
func ObjectMembers(obj []byte) ([]string, [][]byte) {
	var keys []string
	var vals [][]byte
	index := map[string]int{}
	Members(obj, func(k, v []byte) bool {
		s := keyText(k)
		if i, ok := index[s]; ok {
			vals[i] = v
			return true
		}
		index[s] = len(keys)
		keys = append(keys, s)
		vals = append(vals, v)
		return true
	})
	return orderMembers(keys, vals)
}

// orderMembers puts members in JavaScript property order: each key once,
// at its first place, with its last value; integer-like keys (array
// indices) first, ascending.
func orderMembers[V any](keys []string, vals []V) ([]string, []V) {
	index := make(map[string]int, len(keys))
	nk := make([]string, 0, len(keys))
	nv := make([]V, 0, len(keys))
	for i, k := range keys {
		if j, ok := index[k]; ok {
			nv[j] = vals[i]
			continue
		}
		index[k] = len(nk)
		nk = append(nk, k)
		nv = append(nv, vals[i])
	}
	keys, vals = nk, nv
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
	nk = make([]string, 0, len(keys))
	nv = make([]V, 0, len(keys))
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
// whose value is nil (JSON.stringify drops undefined). Keys are given by
// their text as ObjectMembers returns it: a plain name as it is.
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
	o.buf = appendKey(o.buf, key)
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

// requote re-spells a raw string as JSON.stringify would, in one pass
// that holds nothing but dst: it is Quote(Unquote(v)), except for lone
// surrogates, which JavaScript strings can hold and JSON.stringify writes
// as lowercase \u escapes. Runs without escapes are copied as they are
// (invalid UTF-8 replaced as Unquote replaces it).
func requote(dst, raw []byte) []byte {
	body := raw[1 : len(raw)-1]
	dst = append(dst, '"')
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		if k < 0 {
			dst = AppendValidText(dst, body)
			break
		}
		dst = AppendValidText(dst, body[:k])
		body = body[k:]
		n := 2
		switch c := body[1]; c {
		case '/':
			dst = append(dst, '/')
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			dst = append(dst, '\\', c)
		case 'u':
			r, _ := hex4(body, 2)
			n = 6
			switch {
			case utf16.IsSurrogate(r):
				if r < 0xDC00 && len(body) >= 12 && body[6] == '\\' && body[7] == 'u' {
					if r2, ok := hex4(body, 8); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
						dst = utf8.AppendRune(dst, utf16.DecodeRune(r, r2))
						n = 12
						break
					}
				}
				dst = append(dst, fmt.Sprintf("\\u%04x", r)...)
			case r < 0x20 || r == '"' || r == '\\':
				dst = appendEscape(dst, byte(r))
			default:
				dst = utf8.AppendRune(dst, r)
			}
		}
		body = body[n:]
	}
	return append(dst, '"')
}
