package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/tree"
)

// checkContext compares ContextJSON and ContextSize with Indent of the
// compact context.
func checkContext(t *testing.T, name string, c *tree.Context) {
	t.Helper()
	want := Indent(nil, c.JSON())
	if got := ContextJSON(c); !bytes.Equal(got, want) {
		t.Fatalf("%s: ContextJSON differs from Indent(JSON()):\ngot  %.300q\nwant %.300q", name, got, want)
	}
	if n := ContextSize(c); n != int64(len(want)) {
		t.Fatalf("%s: ContextSize = %d, want %d", name, n, len(want))
	}
}

// contextCases are contexts the stores lack: odd pieces, whitespace, and
// messages near Indent's nesting limit.
func contextCases() map[string]*tree.Context {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`[`, n) + strings.Repeat(`]`, n))
	}
	msg := []byte(`{"role":"user","content":[{"type":"text","text":"hi \"x\"\n"}],"e":{},"a":[]}`)
	return map[string]*tree.Context{
		"empty":              {},
		"no messages":        {ThinkingLevel: []byte(`"off"`), Model: []byte(`null`)},
		"one":                {Messages: [][]byte{msg}, ThinkingLevel: []byte(`"high"`), Model: []byte(`{"provider":"p","modelId":"m"}`)},
		"scalars":            {Messages: [][]byte{[]byte(`1`), []byte(`"s"`), []byte(`null`), []byte(`true`), []byte(`[]`), []byte(`{}`)}},
		"whitespace":         {Messages: [][]byte{[]byte(" \n{ \"a\" : [ 1 , 2 ] }\t "), []byte(" 2 ")}, Model: []byte(" { } ")},
		"only level":         {ThinkingLevel: []byte(`{"a":[{"b":1}]}`)},
		"invalid message":    {Messages: [][]byte{msg, []byte(`{"a":`)}},
		"empty message":      {Messages: [][]byte{msg, {}}},
		"nil message":        {Messages: [][]byte{nil, msg}},
		"two values in one":  {Messages: [][]byte{[]byte(`1,2`), msg}},
		"split over two":     {Messages: [][]byte{[]byte(`[1`), []byte(`2]`)}},
		"invalid model":      {Messages: [][]byte{msg}, Model: []byte(`nul`)},
		"empty level":        {Messages: [][]byte{msg}, ThinkingLevel: []byte{}},
		"trailing garbage":   {Messages: [][]byte{[]byte(`{} x`)}},
		"nested 70":          {Messages: [][]byte{nest(70), msg}, Model: nest(70)},
		"deep model ok":      {Model: nest(jsjson.MaxDepth - 1)},
		"deep model too":     {Model: nest(jsjson.MaxDepth)},
		"deep message ok":    {Messages: [][]byte{nest(jsjson.MaxDepth - 2)}},
		"deep message alone": {Messages: [][]byte{msg, nest(jsjson.MaxDepth - 1)}},
	}
}

func TestContextJSONCases(t *testing.T) {
	for name, c := range contextCases() {
		if strings.HasPrefix(name, "deep") {
			// Their indented form is about 100 MB: count only, against
			// IndentSize, which TestIndentMatchesEncodingJSON checks at
			// the limit.
			if n, want := ContextSize(c), IndentSize(c.JSON()); n != int64(want) {
				t.Errorf("%s: ContextSize = %d, want %d", name, n, want)
			}
			continue
		}
		checkContext(t, name, c)
	}
	// The nesting limit counts the context's own two levels: a message
	// that indents alone is raw inside the context.
	deep := contextCases()["deep message alone"]
	if IndentSize(deep.Messages[1]) <= len(deep.Messages[1])+1 {
		t.Fatal("the deep message does not indent alone")
	}
	if n := ContextSize(deep); n != int64(len(deep.JSON())+1) {
		t.Errorf("a context too deep to indent: size %d, want the raw %d+1", n, len(deep.JSON()))
	}
	ok := contextCases()["deep message ok"]
	if n := ContextSize(ok); n <= int64(len(ok.JSON())+1) {
		t.Errorf("a message at the limit: size %d, want it indented", n)
	}
}

// FuzzContextJSON builds contexts of fuzzed pieces.
func FuzzContextJSON(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"x"}`), []byte(` [1, {"a": {}}] `), []byte(`"off"`), true)
	f.Add([]byte(`[1`), []byte(`2]`), []byte(`null`), false)
	f.Add([]byte(`1,2`), []byte(`{}`), []byte{}, true)
	for _, c := range indentCases {
		f.Add([]byte(c), []byte(`{"b":[]}`), []byte(c), true)
	}
	f.Fuzz(func(t *testing.T, m1, m2, level []byte, model bool) {
		c := &tree.Context{Messages: [][]byte{m1, m2}, ThinkingLevel: level}
		if model {
			c.Model = m2
		}
		checkContext(t, "fuzz", c)
		c.Messages = c.Messages[1:]
		checkContext(t, "fuzz", c)
	})
}

func BenchmarkContextSize(b *testing.B) {
	c := big(b).Context()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.SetBytes(ContextSize(c))
	}
}
