package jsjson

import (
	"bytes"
	"regexp"
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

// checkIsCanonical: IsCanonical never says true of a value that
// JSON.stringify would write otherwise, and says true of what it writes,
// but for what it leaves to the slow path (escaped surrogates, wide
// objects, integer-like keys).
func checkIsCanonical(t *testing.T, v []byte) {
	t.Helper()
	want := canonicalRef(nil, v)
	if IsCanonical(v) && !bytes.Equal(want, v) {
		t.Fatalf("IsCanonical(%q) but JSON.stringify writes %q", v, want)
	}
	if !IsCanonical(want) && !bytes.Contains(want, []byte(`\ud`)) && !wide(want) && !indexKey.Match(want) {
		t.Fatalf("IsCanonical(%q) is false", want)
	}
}

// indexKey finds an integer-like key, which IsCanonical leaves to the
// slow path.
var indexKey = regexp.MustCompile(`"[0-9]+":`)

// wide tells that a value may hold an object of more members than
// IsCanonical compares (counted roughly: its colons).
func wide(v []byte) bool { return bytes.Count(v, []byte(":")) >= maxCanonicalKeys }

func TestIsCanonical(t *testing.T) {
	for _, s := range canonicalSeeds {
		v, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		checkIsCanonical(t, v)
	}
	for _, s := range []string{
		`{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi \"there\"\n\u001b[0m","n":-12.5e-7}}`,
		`[1,2,3,{"a":[],"b":{}}]`, `"\u00e9"`, `"\/"`, `1.0`, `-0`, `{"a":1,"a":2}`, `{"1":1}`, `{"01":1}`,
		`"\u0008"`, `"\u000b"`, `"\u000B"`, `12345678901234567890`, `1e21`, `1e-7`,
	} {
		checkIsCanonical(t, []byte(s))
	}
	if !IsCanonical([]byte(`{"a":"\u000b","b":[true,false,null,0,-1,1.5]}`)) {
		t.Error("a canonical entry is not told canonical")
	}
}

func FuzzIsCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Parse(b)
		if err != nil {
			return
		}
		checkIsCanonical(t, v)
	})
}

func BenchmarkIsCanonical(b *testing.B) {
	line := []byte(`{"type":"message","id":"5f1c2a3b","parentId":"4e0b1a2c","timestamp":"2025-05-12T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Here is the change you asked for: the function now returns early when the list is empty.\n\n` + "```go\\nfunc f() {}\\n```" + `"}],"usage":{"input":1200,"output":300,"cacheRead":0,"cacheWrite":0,"totalTokens":1500,"cost":{"input":0.0036,"output":0.0045,"total":0.0081}},"stopReason":"stop","timestamp":1747044000000}}`)
	if !IsCanonical(line) {
		b.Fatal("not canonical")
	}
	b.Run("IsCanonical", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			IsCanonical(line)
		}
	})
	b.Run("AppendCanonical", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		var dst []byte
		for b.Loop() {
			dst = appendCanonicalSlow(dst[:0], line)
		}
	})
}
