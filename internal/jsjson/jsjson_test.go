package jsjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

var parseCases = []struct {
	in string
	ok bool
}{
	{`{}`, true}, {` {"a":1} `, true}, {"{\"a\":1}\r", true}, {`[1,2,[3,{"x":null}]]`, true},
	{`"x"`, true}, {`-0.5e+10`, true}, {`0`, true}, {`true`, true}, {`null`, true},
	{``, false}, {`{`, false}, {`{"a":1,}`, false}, {`[1,]`, false}, {`01`, false}, {`1.`, false},
	{`.5`, false}, {`+1`, false}, {`{"a" 1}`, false}, {`{a:1}`, false}, {`'x'`, false},
	{`"\x"`, false}, {`"\u12"`, false}, {"\"a\tb\"", false}, {`{} {}`, false}, {`NaN`, false},
	{"\ufeff{}", false}, {`tru`, false}, {`nul`, false}, {`[`, false}, {`{"a":}`, false},
	{`"\ud800"`, true}, {`1e5`, true}, {`1E-5`, true}, {`-`, false}, {`1e`, false},
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		_, err := Parse([]byte(c.in))
		if (err == nil) != c.ok {
			t.Errorf("Parse(%q) error %v, want ok=%v", c.in, err, c.ok)
		}
		if c.ok != json.Valid([]byte(c.in)) && c.in != "{\"a\":1}\r" {
			t.Errorf("encoding/json disagrees on %q", c.in)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	cases := map[float64]string{
		0: "0", 1: "1", -1: "-1", 1.5: "1.5", 100: "100", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-7: "1e-7", 1e-6: "0.000001", 0.30000000000000004: "0.30000000000000004", 123456789012345680000: "123456789012345680000",
		1.2345e-10: "1.2345e-10", -2.5e30: "-2.5e+30", math.NaN(): "null", math.Inf(1): "null",
	}
	for f, want := range cases {
		if got := string(FormatNumber(nil, f)); got != want {
			t.Errorf("FormatNumber(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestCanonical(t *testing.T) {
	cases := map[string]string{
		`{ "b" : 1.0, "a":[ 1e2 , "\u0041\/"] }`: `{"b":1,"a":[100,"A/"]}`,
		`{"b":1,"2":0,"1":5,"a":2,"b":3}`:        `{"1":5,"2":0,"b":3,"a":2}`,
		`"\u2028\n\u001f"`:                       "\"\u2028\\n\\u001f\"",
		`-0`:                                     `0`,
		`1e400`:                                  `null`,
	}
	for in, want := range cases {
		got, err := Canonical([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestDateValue(t *testing.T) {
	cases := map[string]float64{
		`"2026-01-02T03:04:05.678Z"`:       1767323045678,
		`"2026-01-02T03:04:05Z"`:           1767323045000,
		`"2026-01-02"`:                     1767312000000,
		`"2026-01-02T03:04:05.6789+01:00"`: 1767319445678,
		`1767323045678`:                    1767323045678,
		`null`:                             0,
	}
	for in, want := range cases {
		if got := DateValue([]byte(in)); got != want {
			t.Errorf("DateValue(%s) = %v, want %v", in, got, want)
		}
	}
	for _, in := range []string{`"yesterday"`, `"2026-13-01"`, `"2026-02-32"`, `{}`, `"2026-01-02T25:00Z"`} {
		if got := DateValue([]byte(in)); !math.IsNaN(got) {
			t.Errorf("DateValue(%s) = %v, want NaN", in, got)
		}
	}
	if !math.IsNaN(DateValue(nil)) {
		t.Error("undefined must give NaN")
	}
}

func TestTruthy(t *testing.T) {
	for in, want := range map[string]bool{`null`: false, `false`: false, `0`: false, `-0.0`: false, `""`: false,
		`0e5`: false, `true`: true, `1`: true, `" "`: true, `[]`: true, `{}`: true, `"0"`: true} {
		if Truthy([]byte(in)) != want {
			t.Errorf("Truthy(%s) != %v", in, want)
		}
	}
}

// requireNode finds node; without it the cross-checks cannot run.
func requireNode(t *testing.T) string {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("PIFS_REQUIRE_ORACLE") == "1" {
			t.Fatal("node is required (PIFS_REQUIRE_ORACLE=1) but not found")
		}
		t.Skip("node not found")
	}
	return node
}

// TestAgainstNode checks parsing, canonical form, number formatting and
// dates against the real JSON.parse, JSON.stringify and Date.
func TestAgainstNode(t *testing.T) {
	node := requireNode(t)
	var inputs []string
	for _, c := range parseCases {
		inputs = append(inputs, c.in)
	}
	inputs = append(inputs,
		`{"a":1.10,"z":[0.1,1e-7,123e30,-0,5e-324,1.7976931348623157e308]}`,
		`{"__proto__":1,"10":1,"9":2,"4294967295":3,"4294967294":4,"01":5}`,
		`"\ud83d\ude00\u00e9\t\\"`, `[1.5e300,2e-300,0.000001,0.0000001,1e21,1e20]`,
		`{"k":"v","k":"w"}`, `123456789012345678901234567890`, `0.1e1`, `-1E+2`,
		`"2026-01-02T03:04:05.678Z"`, `"2026-01-02"`, `"2026-01-02T03:04"`, `"2026-02-29T00:00:00Z"`, `"2026-02-30"`,
		`"2024-02-29T00:00:00.1Z"`, `"+002026-01-01T00:00:00Z"`, `"2026-01-02T03:04:05,5Z"`,
		`"20260102"`, `"2026-01-02T24:00:00Z"`, `"2026-01-02 03:04:05Z"`,
		// Keys with lone surrogates: distinct keys, written as escapes.
		`{"\ud800":1,"\ud801":2}`, `{"b":1,"\udc00x":2,"1":3,"\udc00x":4,"\ud83d\ude00":5}`,
	)
	script := `
const rl = require("readline").createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (l) => {
  const s = JSON.parse(l);
  let out;
  try { const v = JSON.parse(s); out = { c: JSON.stringify(v), t: !!v, d: typeof v === "string" ? new Date(v).getTime() : null }; }
  catch { out = { err: true }; }
  console.log(JSON.stringify(out));
});`
	cmd := exec.Command(node, "-e", script)
	var in bytes.Buffer
	for _, s := range inputs {
		b, _ := json.Marshal(s)
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		var r struct {
			C   *string
			T   bool
			D   *float64
			Err bool
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		src := inputs[i]
		canon, err := Canonical([]byte(src))
		if r.Err != (err != nil) {
			t.Errorf("%q: node error=%v, pifs error=%v", src, r.Err, err)
			continue
		}
		if r.Err {
			continue
		}
		if string(canon) != *r.C {
			t.Errorf("%q: canonical %s, node %s", src, canon, *r.C)
		}
		v, _ := Parse([]byte(src))
		if Truthy(v) != r.T {
			t.Errorf("%q: truthy %v, node %v", src, Truthy(v), r.T)
		}
		if KindOf(v) == String {
			d := DateValue(v)
			switch {
			case r.D == nil && !math.IsNaN(d):
				t.Errorf("%q: date %v, node NaN", src, d)
			case r.D != nil && d != *r.D:
				t.Errorf("%q: date %v, node %v", src, d, *r.D)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Parse(b)
		trimmed := bytes.TrimRight(b, "\r")
		if (err == nil) != json.Valid(trimmed) && (err == nil) != json.Valid(b) {
			t.Fatalf("Parse(%q) err=%v but encoding/json Valid=%v", b, err, json.Valid(b))
		}
		if err != nil {
			return
		}
		c := AppendCanonical(nil, v)
		if !json.Valid(c) {
			t.Fatalf("canonical of %q is invalid: %q", b, c)
		}
		c2, err := Canonical(c)
		if err != nil || !bytes.Equal(c, c2) {
			t.Fatalf("canonical not idempotent: %q → %q → %q", b, c, c2)
		}
		// Members and Elements see every byte of a value.
		Members(v, func(k, val []byte) bool {
			if _, err := Unquote(k); err != nil {
				t.Fatalf("bad key %q", k)
			}
			if !json.Valid(val) {
				t.Fatalf("bad member value %q in %q", val, b)
			}
			return true
		})
		checkIters(t, v)
		checkIndent(t, b)
	})
}

// checkIters: an array's elements, read whole or as objects member by
// member, are the same bytes, and so are an object's members read by the
// iterator and by encoding/json.
func checkIters(t *testing.T, v []byte) {
	t.Helper()
	var whole [][]byte
	Elements(v, func(e []byte) bool {
		whole = append(whole, e)
		return true
	})
	it := IterElements(v)
	for k := 0; ; k++ {
		var e []byte
		if m, ok := it.Object(); ok {
			for m.Next() {
			}
			e = it.EndObject(&m)
		} else if e, ok = it.Next(); !ok {
			if k != len(whole) {
				t.Fatalf("%q: %d elements, Elements saw %d", v, k, len(whole))
			}
			break
		}
		if k >= len(whole) || !bytes.Equal(e, whole[k]) {
			t.Fatalf("%q: element %d is %q", v, k, e)
		}
	}
	// Names are compared as encoding/json decodes them; Name leaves a key
	// without escapes as it is, invalid UTF-8 included (no name pifs looks
	// for has any).
	if KindOf(v) == Object && utf8.Valid(v) {
		var want map[string]json.RawMessage
		if err := json.Unmarshal(v, &want); err != nil {
			return // keys encoding/json reads otherwise (lone surrogates)
		}
		got := map[string][]byte{}
		for m := IterMembers(v); m.Next(); {
			got[string(m.Name())] = m.Value()
			if !bytes.Equal(m.Name(), KeyName(m.Key())) || !KeyIs(m.Key(), string(m.Name())) {
				t.Fatalf("key %q, name %q", m.Key(), m.Name())
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%q: members %q, want %q", v, got, want)
		}
		for k, val := range want {
			if !bytes.Equal(got[k], val) {
				t.Fatalf("%q: member %q is %q, want %q", v, k, got[k], val)
			}
		}
	}
}

// checkIndent: AppendIndent is encoding/json's Indent, at the top and
// inside containers, and IndentSize its length.
func checkIndent(t *testing.T, raw []byte) {
	t.Helper()
	var buf bytes.Buffer
	err := json.Indent(&buf, raw, "", "  ")
	got, ok := AppendIndent([]byte("x"), raw, 0)
	if ok != (err == nil) || ok && !bytes.Equal(got[1:], buf.Bytes()) {
		t.Fatalf("AppendIndent(%q) = %q, %v; encoding/json: %q, %v", raw, got, ok, buf.Bytes(), err)
	}
	if n, ok2 := IndentSize(raw, 0); ok2 != ok || ok && n != len(got)-1 {
		t.Fatalf("IndentSize(%q) = %d, %v; want %d, %v", raw, n, ok2, len(got)-1, ok)
	}
	if !ok {
		return
	}
	// At depth 2 inside "[[" and "]]" it writes the lines encoding/json
	// writes there, without the whitespace after the value.
	in := append(append([]byte("[["), bytes.TrimRight(raw, " \t\r\n")...), "]]"...)
	buf.Reset()
	if json.Indent(&buf, in, "", "  ") != nil {
		return // too deep there
	}
	want := buf.Bytes()
	want = want[len("[\n  [\n    ") : len(want)-len("\n  ]\n]")]
	got, ok = AppendIndent(nil, raw, 2)
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("AppendIndent(%q, 2) = %q, %v; want %q", raw, got, ok, want)
	}
	if n, _ := IndentSize(raw, 2); n != len(want) {
		t.Fatalf("IndentSize(%q, 2) = %d, want %d", raw, n, len(want))
	}
}

func TestIndent(t *testing.T) {
	for _, c := range parseCases {
		checkIndent(t, []byte(c.in))
		if v, err := Parse([]byte(c.in)); err == nil {
			checkIters(t, v)
		}
	}
	for _, s := range []string{`{"a" : [1, {"b":[]} , "x"], "c" :{ }}`, " [ 1 ,\n2 ] \n\t", `{"k\u0065y":1,"key":2}`, `[{},{"a":1},[],2,{"b":{"c":"d"}}]`,
		strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)} {
		checkIndent(t, []byte(s))
		if v, err := Parse([]byte(s)); err == nil {
			checkIters(t, v)
		}
	}
}

func Example_canonical() {
	c, _ := Canonical([]byte(`{"b": 1.0, "1": true}`))
	fmt.Println(string(c))
	// Output: {"1":true,"b":1}
}

// TestStringEnd: every length and position the word-at-a-time paths take
// (a control character or a quote at each offset of strings up to 80
// bytes, escapes before and after them), as encoding/json judges them; the
// end is past the closing quote and escaped tells a backslash.
func TestStringEnd(t *testing.T) {
	check := func(body string) {
		t.Helper()
		s := `"` + body + `"`
		in := []byte(s + ` , "next"`)
		end, escaped, ok := StringEnd(in, 0)
		if ok != json.Valid([]byte(s)) {
			t.Fatalf("%q: ok %v, encoding/json says %v", s, ok, !ok)
		}
		if ok && (end != len(s) || escaped != strings.Contains(body, `\`)) {
			t.Fatalf("%q: end %d escaped %v, want %d %v", s, end, escaped, len(s), strings.Contains(body, `\`))
		}
		// skip, which takes a valid string, finds the same end.
		if ok && skip(in, 0) != end {
			t.Fatalf("%q: skip ends at %d, want %d", s, skip(in, 0), end)
		}
	}
	for n := 0; n <= 80; n++ {
		plain := strings.Repeat("a", n)
		check(plain)
		for i := 0; i <= n; i++ {
			for _, ins := range []string{"\x01", "\x1f", `\n`, `\"`, `\\`, `\u00e9`, `\u12`, `\x`, "é", `\\\"`} {
				check(plain[:i] + ins + plain[i:])
			}
		}
	}
	// A quote after an escaped backslash ends the string.
	if end, _, ok := StringEnd([]byte(`"a\\"b"`), 0); !ok || end != 5 {
		t.Errorf(`"a\\"b": end %d ok %v, want 5`, end, ok)
	}
	// An unterminated string, and one ending in a backslash.
	for _, s := range []string{`"abc`, `"abc\`, `"abc\"`, `"` + strings.Repeat(`\n`, 1000)} {
		if _, _, ok := StringEnd([]byte(s), 0); ok {
			t.Errorf("%q: ok", s)
		}
	}
	// Many escapes before the closing quote cost a look at each byte, not
	// one per escape (a quadratic scan would take seconds here).
	long := `"` + strings.Repeat(`ab\n`, 1<<20) + `"`
	if end, _, ok := StringEnd([]byte(long), 0); !ok || end != len(long) {
		t.Errorf("long string: end %d ok %v", end, ok)
	}
}

// TestUnquote: Unquote and AppendUnquoted decode as encoding/json does,
// which also writes lone surrogates as U+FFFD; invalid UTF-8 is replaced
// as pi's decoder replaces it (one U+FFFD per maximal subpart, ValidText),
// where encoding/json writes one per byte.
func TestUnquote(t *testing.T) {
	for _, s := range []string{`""`, `"a"`, `"\n\t\\\/\b\f\r\""`, `"\u00e9\ud83d\ude00"`, `"\ud800x"`, `"\udc00"`, `"\ud800\u0041"`,
		`"\ud800\ud800\udc00"`, "\"\xff\xfe ok \xe2\x82\"", "\"\xe2\\n\"", `"\u0000"`, `"\uDBFF\uDFFF"`} {
		var want string
		if err := json.Unmarshal([]byte(ValidText(s)), &want); err != nil {
			t.Fatal(err)
		}
		if got, err := Unquote([]byte(s)); err != nil || got != want {
			t.Errorf("Unquote(%q) = %q, %v; want %q", s, got, err, want)
		}
		if got := AppendUnquoted([]byte("x"), []byte(s)); string(got) != "x"+want {
			t.Errorf("AppendUnquoted(%q) = %q, want %q", s, got, "x"+want)
		}
	}
	for _, s := range []string{`"\x"`, `"\u12"`, `"\u12g4"`, `"a\"`, `a`, `"`} {
		if _, err := Unquote([]byte(s)); err == nil {
			t.Errorf("Unquote(%q): no error", s)
		}
	}
}
