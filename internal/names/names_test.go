package names

import (
	"strings"
	"testing"
)

func TestEncodeName(t *testing.T) {
	for in, want := range map[string]string{
		"a1":     "a1",
		"a/b":    "a%2Fb",
		"50%":    "50%25",
		"%2F":    "%252F",
		"x\x00y": "x%00y",
		".":      "%2E",
		"..":     "%2E%2E",
		"...":    "%2E%2E%2E",
		".a.":    ".a.",
		"é/ü":    "é%2Fü",
	} {
		if got := Encode(in); got != want {
			t.Errorf("Encode(%q) = %q, want %q", in, got, want)
		}
		if got, ok := Decode(want); !ok || got != in {
			t.Errorf("Decode(%q) = %q, %v", want, got, ok)
		}
	}
	for _, bad := range []string{"%2f", "%41", "%", "%2", "..", ".", "a%2E", "%2E.", "x%~0123"} {
		if id, ok := Decode(bad); ok {
			t.Errorf("Decode(%q) = %q, want no id", bad, id)
		}
	}
	long := strings.Repeat("é", 200)
	n := Encode(long)
	if len(n) > 255 || !strings.Contains(n, "%~") || !strings.HasPrefix(n, strings.Repeat("é", 32)) {
		t.Errorf("long name %q", n)
	}
	if got := EncodeIn(strings.Repeat("a", 251), 5); !isHashed(got) {
		t.Errorf("251 bytes + .json not hashed: %q", got)
	}
	if got := EncodeIn(strings.Repeat("a", 250), 0); got != strings.Repeat("a", 250) {
		t.Errorf("250 bytes alone hashed")
	}
	if got := Encode(""); got == "" || !isHashed(got) {
		t.Errorf("empty name %q", got)
	}
}

// checkName checks that a spelling is a usable file name.
func checkName(t *testing.T, s, name string, room int) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name)+room > 255 {
		t.Fatalf("Encode(%q) = %q: unusable", s, name)
	}
	if strings.Trim(name, ".") == "" {
		t.Fatalf("Encode(%q) = %q: only dots", s, name)
	}
}

func FuzzEncodeName(f *testing.F) {
	for _, s := range []string{"a1", "a/b", "%", "..", ".", "", strings.Repeat("x", 300), "%2E", "%~", "\x00"} {
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, room := range []int{0, 5, 40} {
			na, nb := EncodeIn(a, room), EncodeIn(b, room)
			checkName(t, a, na, room)
			// Injective: two ids never share a name.
			if a != b && na == nb {
				t.Fatalf("%q and %q both spell %q", a, b, na)
			}
			// A plain name decodes to its id; a hashed one is found by
			// matching.
			if !isHashed(na) {
				if got, ok := Decode(na); !ok || got != a {
					t.Fatalf("Decode(%q) = %q, %v; want %q", na, got, ok, a)
				}
			}
			got, ok := Match(na, room, func(id string) bool { return id == a || id == b },
				func(fn func(string) bool) { _ = fn(b) || fn(a) })
			if a != "" && (!ok || got != a) {
				t.Fatalf("Match(%q) = %q, %v; want %q", na, got, ok, a)
			}
		}
	})
}
