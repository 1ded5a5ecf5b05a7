package render

import (
	"bytes"
	"encoding/json"
	"github.com/pifs/pifs/internal/jsjson"
	"strings"
	"testing"
)

// jsonIndent is what Indent must write: json.Indent and a newline, the raw
// bytes on invalid input.
func jsonIndent(raw []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

var indentCases = []string{
	``, ` `, `1`, ` 1 `, "1\n", `-0.5e+10`, `01`, `1.`, `-`, `"a"`, `"\u00e9\n"`, `"\x"`, "\"\x01\"",
	`{}`, `[]`, `{ }`, `[ ]`, `{"a":1}`, `{"a" : [1, 2, {}], "b": {"c": null}}`, `[true,false,null]`,
	`[tru]`, `{"a"}`, `{"a":}`, `{,}`, `[1,]`, `[1 2]`, `{"a":1,}`, `{"a":1}x`, `{"a":1} x`,
	"\t{\"a\":\r\n1}\n\n", `[[[[]]]]`, `{"a":{"b":{"c":[{}]}}}`, `"unterminated`, `[`, `{"a":"\ud800"}`,
	strings.Repeat("[", 70) + "1" + strings.Repeat("]", 70),
}

// deepCases sit at encoding/json's nesting limit; their indented form is
// about 100 MB, too big for fuzz seeds.
var deepCases = []string{
	strings.Repeat("[", jsjson.MaxDepth) + strings.Repeat("]", jsjson.MaxDepth),
	strings.Repeat("[", jsjson.MaxDepth+1) + strings.Repeat("]", jsjson.MaxDepth+1),
	strings.Repeat(`{"a":`, jsjson.MaxDepth+1) + "1" + strings.Repeat("}", jsjson.MaxDepth+1),
}

func TestIndentMatchesEncodingJSON(t *testing.T) {
	for _, c := range append(indentCases, deepCases...) {
		want := jsonIndent([]byte(c))
		got := Indent(nil, []byte(c))
		if !bytes.Equal(got, want) {
			t.Errorf("Indent(%.60q) = %.200q, want %.200q", c, got, want)
		}
		if n := IndentSize([]byte(c)); n != len(want) {
			t.Errorf("IndentSize(%.60q) = %d, want %d", c, n, len(want))
		}
		// Appending keeps what dst held.
		got = Indent([]byte("prefix"), []byte(c))
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("Indent(prefix, %.60q) = %.200q", c, got)
		}
	}
}

func FuzzIndent(f *testing.F) {
	for _, c := range indentCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := jsonIndent(raw)
		if got := Indent(nil, raw); !bytes.Equal(got, want) {
			t.Fatalf("Indent(%q) = %q, want %q", raw, got, want)
		}
		if n := IndentSize(raw); n != len(want) {
			t.Fatalf("IndentSize(%q) = %d, want %d", raw, n, len(want))
		}
	})
}

func BenchmarkIndentSize(b *testing.B) {
	raw := big(b).Context().JSON()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		IndentSize(raw)
	}
}
