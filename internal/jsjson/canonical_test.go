package jsjson

import (
	"bytes"
	"strings"
	"testing"
)

// canonicalRef is the plain recursive JSON.stringify(JSON.parse(v)): the
// reference for the linear two-pass writer (it is quadratic in depth).
func canonicalRef(dst, v []byte) []byte {
	switch KindOf(v) {
	case Array:
		dst = append(dst, '[')
		first := true
		Elements(v, func(e []byte) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = canonicalRef(dst, e)
			return true
		})
		return append(dst, ']')
	case Object:
		var keys []string
		var vals [][]byte
		Members(v, func(k, val []byte) bool {
			keys, vals = append(keys, keyText(k)), append(vals, val)
			return true
		})
		keys, vals = orderMembers(keys, vals)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendKey(dst, k)
			dst = canonicalRef(dst, vals[i])
		}
		return append(dst, '}')
	}
	return appendScalar(dst, v)
}

var canonicalSeeds = []string{
	`{"a":{"2":1,"1":{"b":[1,{"x":1,"x":2}],"0":null}},"a":[[],{}]}`,
	`[ { } , [ ] , { "k" : [ 1 , 2.50 , "\u0041" ] } ]`,
	`{"z":1,"y":{"3":{"3":{"3":3,"2":2}},"1":[{"b":1,"a":2,"b":3}]},"x":"\ud800"}`,
	`{"":{"":{"":1}},"":2}`,
	`[[[[[{"1":[[{"0":0}]]}]]]]]`,
	`{"\ud800":1,"\ud801":2,"\u0031":3,"\ud800":4}`,
}

func TestCanonicalMatchesReference(t *testing.T) {
	for _, s := range canonicalSeeds {
		v, err := Parse([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		got, want := AppendCanonical(nil, v), canonicalRef(nil, v)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", s, got, want)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Parse(b)
		if err != nil {
			return
		}
		if got, want := AppendCanonical(nil, v), canonicalRef(nil, v); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", b, got, want)
		}
	})
}

// deep nests arrays and objects (each with a key to reorder) depth deep.
func deep(depth int) []byte {
	return []byte(strings.Repeat(`{"b":1,"1":[`, depth) + strings.Repeat(`]}`, depth))
}

// TestCanonicalDeep: a value nested 200k deep, with an object to reorder at
// every level, is written (it took minutes when each level scanned the rest).
func TestCanonicalDeep(t *testing.T) {
	const depth = 200_000
	got, err := Canonical(deep(depth))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat(`{"1":[`, depth) + strings.Repeat(`],"b":1}`, depth)
	if string(got) != want {
		t.Fatalf("deep canonical differs (%d bytes, want %d)", len(got), len(want))
	}
}

func benchCanonicalDeep(b *testing.B, depth int) {
	v := deep(depth)
	b.SetBytes(int64(len(v)))
	for i := 0; i < b.N; i++ {
		if _, err := Canonical(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCanonicalDeep10k(b *testing.B)  { benchCanonicalDeep(b, 10_000) }
func BenchmarkCanonicalDeep100k(b *testing.B) { benchCanonicalDeep(b, 100_000) }
