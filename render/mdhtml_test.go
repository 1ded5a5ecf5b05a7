package render

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/internal/jsjson"
)

// FuzzPickMarkdown: the converter without bare links renders every text
// pickMarkdown gives it exactly as the full GFM converter does.
func FuzzPickMarkdown(f *testing.F) {
	for _, s := range []string{"plain words here", "see www.example.org now", "a WwW.x.y b", "mail me@x.org", "http://x.y/z", "*a* _b_ ~c~ (www.d)", richMarkdown, hostile, "1. a\n2. b\n\n| a |\n|---|\n| b |"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if pickMarkdown(src) != plainMarkdown {
			return
		}
		var a, b bytes.Buffer
		if err := markdown.Convert(src, &a); err != nil {
			t.Skip()
		}
		if err := plainMarkdown.Convert(src, &b); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("%q: GFM %q, without bare links %q", src, a.String(), b.String())
		}
	})
}

// FuzzPlainMarkdown: every text appendPlainMarkdown takes, goldmark
// renders to the same bytes.
func FuzzPlainMarkdown(f *testing.F) {
	for _, s := range []string{"plain words here ", "two\nlines  \n\n\npara two.", "a (b) 'c' \"d\" 1. e - f + g = h # i", "é ü 😀\n  \nnext", "5 apples", "- no", "# no", "    code"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if !utf8.Valid(src) {
			return
		}
		got, ok := appendPlainMarkdown(nil, src)
		if !ok {
			return
		}
		var want bytes.Buffer
		if err := markdown.Convert(src, &want); err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Fatalf("%q: plain %q, goldmark %q", src, got, want.String())
		}
	})
}

// TestMarkdownSafe pins what a message's Markdown may and may not become.
func TestMarkdownSafe(t *testing.T) {
	for in, want := range map[string]string{
		"<b>x</b> & y":                      `<p>&lt;b&gt;x&lt;/b&gt; &amp; y</p>`,
		"[a](javascript:alert(1))":          `<p>a</p>`,
		"[a](JaVaScRiPt:alert(1))":          `<p>a</p>`,
		"[a](java\tscript:alert(1))":        `<p>[a](java	script:alert(1))</p>`,
		"[a](data:text/html,x)":             `<p>a</p>`,
		"[a](https://e.org/?q=1)":           `<p><a href="https://e.org/?q=1" rel="noreferrer nofollow">a</a></p>`,
		"[a](#e-x)":                         `<p><a href="#e-x" rel="noreferrer nofollow">a</a></p>`,
		"![i](http://e.org/x.png)":          `<p><a href="http://e.org/x.png" rel="noreferrer nofollow">i</a></p>`,
		"![i](javascript:x)":                `<p>i</p>`,
		"![i](data:image/png;base64,iVBO)":  `<p><img src="data:image/png;base64,iVBO" alt="i"></p>`,
		"![i](data:image/svg+xml;base64,P)": `<p>i</p>`,
		"<script>\nalert(1)\n</script>":     `<p class="html">&lt;script&gt;`,
		"a\nb":                              "<p>a<br>\nb</p>",
		"see www.example.org":               `<a href="http://www.example.org" rel="noreferrer nofollow">www.example.org</a>`,
	} {
		got := string(appendMarkdown(nil, jsonQuote(in)))
		if !strings.Contains(got, want) {
			t.Errorf("%q: %q, want it to hold %q", in, got, want)
		}
	}
}

// TestPlainMarkdownCorpus: every string of every entry of the golden
// sessions (the stores, fixtures, fuzz corpora, edge cases and a
// generated session) and of a larger generated one that
// appendPlainMarkdown takes, goldmark renders to the same bytes.
func TestPlainMarkdownCorpus(t *testing.T) {
	trees := goldenSessions(t)
	var buf bytes.Buffer
	if err := gen.Session(&buf, 3000, 7); err != nil {
		t.Fatal(err)
	}
	trees["gen/3000"] = parseTree(t, buf.String())
	taken, left := 0, 0
	var walk func(v []byte)
	walk = func(v []byte) {
		switch jsjson.KindOf(v) {
		case jsjson.Object:
			jsjson.Members(v, func(_, val []byte) bool { walk(val); return true })
		case jsjson.Array:
			jsjson.Elements(v, func(val []byte) bool { walk(val); return true })
		case jsjson.String:
			s, err := jsjson.Unquote(v)
			if err != nil || !utf8.ValidString(s) {
				return
			}
			got, ok := appendPlainMarkdown(nil, []byte(s))
			if !ok {
				left++
				return
			}
			taken++
			var want bytes.Buffer
			if err := markdown.Convert([]byte(s), &want); err != nil {
				t.Fatal(err)
			}
			if string(got) != want.String() {
				t.Fatalf("%q: plain %q, goldmark %q", s, got, want.String())
			}
		}
	}
	for _, tr := range trees {
		for _, e := range tr.Entries() {
			walk(e.Raw)
		}
	}
	if taken < 1000 || left < 1000 {
		t.Fatalf("%d strings taken without a parse, %d left to goldmark: too few to tell", taken, left)
	}
	t.Logf("%d strings taken without a parse, %d left to goldmark", taken, left)
}
