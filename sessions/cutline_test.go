package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
)

// textsOf lists the texts of v's strings, keys and values, in order, as
// JSON.parse gives them.
func textsOf(v []byte) []string {
	var out []string
	switch jsjson.KindOf(v) {
	case jsjson.String:
		s, _ := jsjson.StringValue(v)
		out = append(out, s)
	case jsjson.Object:
		jsjson.Members(v, func(key, val []byte) bool {
			out = append(out, textsOf(key)...)
			out = append(out, textsOf(val)...)
			return true
		})
	case jsjson.Array:
		jsjson.Elements(v, func(val []byte) bool {
			out = append(out, textsOf(val)...)
			return true
		})
	}
	return out
}

// checkCut checks what cutLine made of line: a line JSON.parse refuses
// stays one it refuses; of one it takes, every text of cutOver bytes or
// less is whole, every other is whole or its first and last keep bytes or
// more (from characters' starts), and cut is what was left out.
func checkCut(t *testing.T, line []byte, keep int) {
	t.Helper()
	got, cut, ok, err := cutLine(bytes.NewReader(line), int64(len(line)), keep)
	if err != nil {
		t.Fatal(err)
	}
	v, perr := jsjson.Parse(line)
	if perr != nil {
		if ok {
			if _, err := jsjson.Parse(got); err == nil {
				t.Fatalf("%q: refused whole, taken cut as %q", line, got)
			}
		}
		return
	}
	if !ok {
		t.Fatalf("%q: taken whole, refused cut", line)
	}
	gv, err := jsjson.Parse(got)
	if err != nil {
		t.Fatalf("%q: cut to %q, which does not parse: %v", line, got, err)
	}
	want, have := textsOf(v), textsOf(gv)
	if len(want) != len(have) {
		t.Fatalf("%q: %d texts, cut %d", line, len(want), len(have))
	}
	var left int64
	for i, w := range want {
		h := have[i]
		if h == w {
			continue
		}
		if len(w) <= cutOver {
			t.Fatalf("text %d of %d bytes cut", i, len(w))
		}
		// h is a head and a tail of w: find the split that makes it so.
		found := false
		for k := keep; k <= len(h)-keep && !found; k++ {
			if strings.HasPrefix(w, h[:k]) && strings.HasSuffix(w, h[k:]) && utf8.RuneStart(w[k]) && utf8.RuneStart(w[len(w)-(len(h)-k)]) {
				found = true
			}
		}
		if !found {
			t.Fatalf("text %d (%d bytes) cut to %d bytes that are not its head and tail of %d or more", i, len(w), len(h), keep)
		}
		left += int64(len(w) - len(h))
	}
	if left != cut {
		t.Errorf("cut says %d bytes left out, the texts %d", cut, left)
	}
}

// withSmallCuts makes strings cut from 40 bytes, in pieces of 7, for the
// test.
func withSmallCuts(t testing.TB) {
	over, piece := cutOver, cutPiece
	cutOver, cutPiece = 40, 7
	t.Cleanup(func() { cutOver, cutPiece = over, piece })
}

func TestCutLine(t *testing.T) {
	withSmallCuts(t)
	long := strings.Repeat("abcdefghij", 10)
	for _, line := range []string{
		`{"a":"short","b":1}`,
		`{"a":"` + long + `","b":["` + long + long + `",{"c":"` + long + `"}],"n":[1,2,"x"]}`,
		`{"t":"` + strings.Repeat(`é\"\\\n\u00e9\ud83d\ude00😀`, 20) + `"}`,
		`{"t":"` + strings.Repeat(`\ud83d\ude00`, 30) + `"}`,             // pairs never split
		`{"t":"` + strings.Repeat(`\ud83dx`, 30) + `"}`,                  // lone high surrogates
		`{"t":"` + strings.Repeat("a\xe2\x82mb\xff\xfe", 20) + `"}`,      // invalid UTF-8
		`{"t":"` + strings.Repeat("\xe4\xb8\xad\xe6\x96\x87", 20) + `"}`, // CJK
		`{"t":"` + strings.Repeat("\\u0041", 30) + `"}`,                  // raw 3x its text
		`{"t":"` + long + `\q` + long + `"}`,                             // a bad escape in the middle
		`{"t":"` + long + "\x01" + long + `"}`,                           // a control character
		`{"t":"` + long,                                                  // cut short
		`{"t":"` + long + `\`,
		`{"t":"` + long + `\u12`,
		`{"` + long + `":"` + long + `"}`, // a long key
	} {
		checkCut(t, []byte(line), 10)
	}
}

// TestCutLineLeavesTheTextsOut: a 48 MB string is read in pieces and
// given as its ends, with what was left out.
func TestCutLineLeavesTheTextsOut(t *testing.T) {
	body := strings.Repeat("a long line ", 4<<20)
	line := []byte(`{"type":"message","message":{"role":"user","content":"` + body + `"}}`)
	got, cut, ok, err := cutLine(bytes.NewReader(line), int64(len(line)), 16<<10)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if len(got) > 64<<10 {
		t.Errorf("cut line of %d bytes", len(got))
	}
	s, _ := jsjson.Str(jsjson.Get(got, "message"), "content")
	if !strings.HasPrefix(body, s[:16<<10]) || !strings.HasSuffix(body, s[len(s)-16<<10:]) || cut != int64(len(body)-len(s)) {
		t.Errorf("cut to %d bytes, %d said left out, of %d", len(s), cut, len(body))
	}
}

// TestScanCut: ScanCut gives a file's entries as ScanFrom does, at the
// same offsets, but its long lines cut.
func TestScanCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	big := strings.Repeat("x", 1<<20)
	data := `{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"` + big + `"}}` + "\n" +
		`{"type":"message","id":"b","parentId":"a","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"` + big + `\q"}}` + "\n" +
		`{"type":"message","id":"c","parentId":"a","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"user","content":"hi"}}` + "\n" +
		`{"type":"message","id":"d","parentId":"c","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"user","content":"` + big
	os.WriteFile(path, []byte(data), 0o644)
	type seen struct {
		id                   string
		off                  int64
		complete             bool
		size, text, cutBytes int64
	}
	text := func(e *Entry) int64 {
		s, _ := jsjson.Str(jsjson.Get(e.Raw, "message"), "content")
		return int64(len(s))
	}
	var whole, cut []seen
	_, end1, err := ScanFrom(path, 0, nil, func(e *Entry, complete bool) {
		whole = append(whole, seen{e.ID, e.Offset, complete, int64(len(e.Raw)), text(e), 0})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, end2, err := ScanCut(path, 0, 100, func(e *Entry, complete bool, n int64) {
		cut = append(cut, seen{e.ID, e.Offset, complete, int64(len(e.Raw)), text(e), n})
	})
	if err != nil {
		t.Fatal(err)
	}
	if end1 != end2 || len(whole) != len(cut) || len(whole) != 2 {
		t.Fatalf("ScanFrom: %v end %d; ScanCut: %v end %d", whole, end1, cut, end2)
	}
	for i := range whole {
		w, c := whole[i], cut[i]
		if w.id != c.id || w.off != c.off || w.complete != c.complete || w.text != c.text+c.cutBytes {
			t.Errorf("entry %d: %+v whole, %+v cut", i, w, c)
		}
	}
	if c := cut[0]; c.id != "a" || c.size > 64<<10 || c.cutBytes == 0 {
		t.Errorf("a: %+v", c)
	}
	// ReadLineCut reads a line as ScanCut gives it: the long one cut,
	// the short one whole.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, c := range cut {
		line, err := ReadLineCut(f, c.off, 100)
		if err != nil || int64(len(line)) != c.size {
			t.Errorf("ReadLineCut of entry %d: %d bytes, %v; ScanCut gave %d", i, len(line), err, c.size)
		}
	}
}

func FuzzCutLine(f *testing.F) {
	for _, s := range []string{`abc`, `\ud83d\ude00é`, "a\xe2\x82mb", `\u0041\n`, `\q`, "\x01"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, body string, n int) {
		if len(body) > 300 {
			return // strings 16 times as long as it are long enough
		}
		withSmallCuts(t)
		n = (n%8+8)%8 + 1
		line := `{"t":["` + body + `","` + strings.Repeat(body, n*4) + `","` + strings.Repeat(body, n*16) + `"]}`
		checkCut(t, []byte(line), 10)
	})
}
