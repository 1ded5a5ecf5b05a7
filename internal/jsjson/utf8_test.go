package jsjson

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// invalidInputs are byte strings with every kind of invalid UTF-8: each
// byte from 0x80 alone, then before ASCII, before each boundary of the
// second byte's ranges, as the start of a truncated sequence, and random
// mixes.
func invalidInputs() []string {
	var in []string
	seconds := []byte{0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF}
	for b := 0x80; b <= 0xFF; b++ {
		lead := byte(b)
		in = append(in, string([]byte{lead}), string([]byte{'a', lead, 'b'}))
		for _, s := range seconds {
			in = append(in, string([]byte{lead, s}), string([]byte{lead, s, 'x'}),
				string([]byte{lead, s, 0x80}), string([]byte{lead, s, 0x80, 'y'}),
				string([]byte{lead, s, 0x80, 0x80}), string([]byte{lead, s, 0x80, 0x80, 0x80}))
		}
	}
	in = append(in, "bad\xff\xfe", "n\xffm", "\xef\xbf\xbd", "é\xe2\x82\xac\xe2\x82", "\xed\xa0\x80\xed\xb0\x80")
	alphabet := []byte{'a', '"', '\\', '\n', 0x01, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		b := make([]byte, 1+r.Intn(8))
		for k := range b {
			b[k] = alphabet[r.Intn(len(alphabet))]
		}
		in = append(in, string(b))
	}
	return in
}

// TestInvalidUTF8AgainstNode: a Go string holding any bytes is written as
// JSON.stringify writes the string that Node's StringDecoder (pi's reader
// of session files) decodes from them, byte for byte; a raw JSON string
// holding them unquotes to that string, and a JSON line holding them is
// rewritten as JSON.stringify(JSON.parse(line)) writes it.
func TestInvalidUTF8AgainstNode(t *testing.T) {
	node := requireNode(t)
	inputs := invalidInputs()
	script := `
const { StringDecoder } = require("string_decoder");
const rl = require("readline").createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (l) => {
  const b = Buffer.from(l, "hex");
  const d = new StringDecoder("utf8");
  const s = d.write(b) + d.end();
  const line = d.write(Buffer.concat([Buffer.from('{"k":"'), b, Buffer.from('"}')])) + d.end();
  let canon = null;
  try { canon = JSON.stringify(JSON.parse(line)); } catch {}
  console.log(JSON.stringify({ q: JSON.stringify(s), c: canon }));
});`
	cmd := exec.Command(node, "-e", script)
	var in bytes.Buffer
	for _, s := range inputs {
		in.WriteString(hex.EncodeToString([]byte(s)) + "\n")
	}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for ; sc.Scan(); n++ {
		var r struct {
			Q string
			C *string
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		s := inputs[n]
		if q := Quote(nil, s); string(q) != r.Q {
			t.Errorf("Quote(%q) = %q, JSON.stringify of what Node decodes: %q", s, q, r.Q)
		}
		if u, err := Unquote([]byte(`"` + s + `"`)); err == nil && string(Quote(nil, u)) != r.Q && !strings.ContainsAny(s, "\"\\\n\x01") {
			t.Errorf("Unquote(%q) = %q, Node decodes %s", s, u, r.Q)
		}
		c, err := Canonical([]byte(`{"k":"` + s + `"}`))
		switch {
		case r.C == nil && err == nil:
			t.Errorf("%q: canonical %q, JSON.parse refuses it", s, c)
		case r.C != nil && string(c) != *r.C:
			t.Errorf("%q: canonical %q (%v), Node %q", s, c, err, *r.C)
		}
	}
	if n != len(inputs) {
		t.Fatalf("node answered %d of %d inputs", n, len(inputs))
	}
}

// whatwgDecode is the WHATWG Encoding Standard's UTF-8 decoder, step by
// step, as the reference for FuzzQuote.
func whatwgDecode(b []byte) string {
	var out []rune
	var cp rune
	need, seen := 0, 0
	lo, hi := byte(0x80), byte(0xBF)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if need == 0 {
			switch {
			case c <= 0x7F:
				out = append(out, rune(c))
			case c >= 0xC2 && c <= 0xDF:
				need, cp = 1, rune(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					lo = 0xA0
				}
				if c == 0xED {
					hi = 0x9F
				}
				need, cp = 2, rune(c&0xF)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					lo = 0x90
				}
				if c == 0xF4 {
					hi = 0x8F
				}
				need, cp = 3, rune(c&0x7)
			default:
				out = append(out, utf8.RuneError)
			}
			continue
		}
		if c < lo || c > hi {
			cp, need, seen, lo, hi = 0, 0, 0, 0x80, 0xBF
			out = append(out, utf8.RuneError)
			i-- // the byte is read again
			continue
		}
		lo, hi = 0x80, 0xBF
		cp = cp<<6 | rune(c&0x3F)
		if seen++; seen == need {
			out = append(out, cp)
			cp, need, seen = 0, 0, 0
		}
	}
	if need != 0 {
		out = append(out, utf8.RuneError)
	}
	return string(out)
}

// FuzzQuote: whatever the bytes, Quote writes valid UTF-8 and valid JSON
// that reads back as the WHATWG decoder's string of them.
func FuzzQuote(f *testing.F) {
	for _, s := range invalidInputs()[:200] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(nil, s)
		if !utf8.Valid(q) || !json.Valid(q) {
			t.Fatalf("Quote(%q) = %q: not valid UTF-8 JSON", s, q)
		}
		want := whatwgDecode([]byte(s))
		if got := ValidText(s); got != want {
			t.Fatalf("ValidText(%q) = %q, want %q", s, got, want)
		}
		if u, err := Unquote(q); err != nil || u != want {
			t.Fatalf("Unquote(Quote(%q)) = %q (%v), want %q", s, u, err, want)
		}
	})
}

// stringifyRef is JSON.stringify of the JavaScript string that JSON.parse
// makes of the raw JSON string raw, unit by unit: escapes decoded to UTF-16
// code units, raw bytes as a UTF-8 decoder reads them (whatwgDecode); then
// '"', '\\' and control characters escaped, lone surrogates as lowercase
// \u escapes. It is the reference for requote.
func stringifyRef(raw []byte) []byte {
	var units []uint16
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			j := i
			for j < len(body) && body[j] != '\\' {
				j++
			}
			units = append(units, utf16.Encode([]rune(whatwgDecode(body[i:j])))...)
			i = j
			continue
		}
		switch c := body[i+1]; c {
		case 'u':
			r, _ := hex4(body, i+2)
			units = append(units, uint16(r))
			i += 6
			continue
		case 'b':
			units = append(units, '\b')
		case 'f':
			units = append(units, '\f')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 't':
			units = append(units, '\t')
		default:
			units = append(units, uint16(c))
		}
		i += 2
	}
	out := []byte{'"'}
	for k := 0; k < len(units); k++ {
		u := units[k]
		switch {
		case u == '"' || u == '\\':
			out = append(out, '\\', byte(u))
		case u < 0x20:
			short := map[uint16]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}
			if c, ok := short[u]; ok {
				out = append(out, '\\', c)
			} else {
				out = fmt.Appendf(out, "\\u%04x", u)
			}
		case u >= 0xD800 && u < 0xDC00 && k+1 < len(units) && units[k+1] >= 0xDC00 && units[k+1] < 0xE000:
			out = utf8.AppendRune(out, utf16.DecodeRune(rune(u), rune(units[k+1])))
			k++
		case u >= 0xD800 && u < 0xE000:
			out = fmt.Appendf(out, "\\u%04x", u)
		default:
			out = utf8.AppendRune(out, rune(u))
		}
	}
	return append(out, '"')
}

var requoteSeeds = []string{
	`""`, `"plain"`, `"a\"b\\c\/d"`, `"\b\f\n\r\t"`, `"\u0000\u001f\u0020\u007f"`, `"\u0022\u005c\u002f"`,
	`"\u00e9\u20ac\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, `"\ud83d\ud83d\ude00"`, `"\uDBFF\uDFFF"`,
	"\"é €\xff\xfe\\n\xe2\x82\\u0041\"", "\"\xed\xa0\x80\\ud800\"", `"\u2028\u2029"`,
}

// FuzzRequote: requote writes what JSON.stringify writes for the string
// JSON.parse reads from any raw JSON string, in one pass.
func FuzzRequote(f *testing.F) {
	for _, s := range requoteSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Parse(b)
		if err != nil || KindOf(v) != String {
			return
		}
		if got, want := requote(nil, v), stringifyRef(v); !bytes.Equal(got, want) {
			t.Fatalf("requote(%q) = %q, want %q", v, got, want)
		}
	})
}

// decodeRunes is a string's body decoded with DecodeRune, a lone
// surrogate as U+FFFD; ok is false where a bad escape stopped it.
func decodeRunes(body []byte) (string, bool) {
	var out []byte
	for i := 0; i < len(body); {
		r, next, ok := DecodeRune(body, i)
		if !ok {
			return string(out), false
		}
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
		}
		out = utf8.AppendRune(out, r)
		i = next
	}
	return string(out), true
}

func TestDecodeRune(t *testing.T) {
	for _, tc := range []struct {
		body string
		r    rune
		next int
		ok   bool
	}{
		{`a`, 'a', 1, true},
		{"é", 'é', 2, true},
		{"\xe2\x82m", utf8.RuneError, 2, true}, // one maximal subpart
		{"\xff\xfe", utf8.RuneError, 1, true},
		{`\n`, '\n', 2, true},
		{`\/`, '/', 2, true},
		{`\"x`, '"', 2, true},
		{`\u00e9`, 'é', 6, true},
		{`\ud83d\ude00`, '😀', 12, true},
		{`\ud83dx`, 0xD83D, 6, true},
		{`\ude00`, 0xDE00, 6, true},
		{`\ud83d\u0041`, 0xD83D, 6, true},
		{`\`, 0, 0, false},
		{`\q`, 0, 0, false},
		{`\u12`, 0, 0, false},
		{`\uZZZZ`, 0, 0, false},
	} {
		r, next, ok := DecodeRune([]byte(tc.body), 0)
		if r != tc.r || next != tc.next || ok != tc.ok {
			t.Errorf("DecodeRune(%q) = %q, %d, %v; want %q, %d, %v", tc.body, r, next, ok, tc.r, tc.next, tc.ok)
		}
	}
}

// FuzzDecodeRune: a string's body decoded one character at a time is
// what Unquote makes of it, and stops where Unquote fails.
func FuzzDecodeRune(f *testing.F) {
	for _, s := range []string{``, `plain`, `a\nb\t\"c\\d\/e\b\f\r`, `\u00e9\u2028\ud83d\ude00`, `\ud83d`, `\ude00x`,
		`\u12`, `\uZZZZ`, `\q`, `x\`, "caf\xc3\xa9 \xe2\x82 \xff\\n", "\xed\xa0\x80", "\xf0\x9f\x98"} {
		f.Add([]byte(s))
	}
	for _, s := range invalidInputs()[:50] {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := decodeRunes(body)
		want, wantOK := appendUnquoted(nil, body)
		if ok != wantOK || got != string(want) {
			t.Fatalf("%q: DecodeRune gives %q, %v; appendUnquoted %q, %v", body, got, ok, want, wantOK)
		}
		if u, err := Unquote(append(append([]byte{'"'}, body...), '"')); err == nil && (!ok || u != got) {
			t.Fatalf("%q: DecodeRune gives %q, %v; Unquote %q", body, got, ok, u)
		}
	})
}
