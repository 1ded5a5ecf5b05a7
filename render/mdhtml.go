package render

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Markdown in messages is rendered as pi's /export renders it (marked with
// GFM and line breaks kept, HTML in the text shown as text), with
// goldmark, into markup that cannot run or load anything:
//
//   - raw HTML, inline or as a block, is written escaped, as text;
//   - a link keeps its href only for http, https and mailto URLs and for
//     URLs without a scheme (fragments, relative paths); any other
//     (javascript:, data:, vbscript:, file:, a scheme spelled with
//     controls) shows as its text alone;
//   - an image shows inline only as a data: URI of a PNG, JPEG, GIF or
//     WebP (the page's Content-Security-Policy allows nothing else);
//     any other is a link, or its text;
//   - fenced code with a language chroma knows is highlighted with
//     classes that the page's one stylesheet colours, light and dark.
//
// The converters hold no state between conversions: one serves every
// goroutine. markdown is GFM; plainMarkdown lacks only the extension that
// finds bare URLs and e-mail addresses, which costs a third of a
// conversion and can find nothing in a text without ':', '@' or "www."
// (see pickMarkdown).
var (
	markdown      = newMarkdown(extension.GFM)
	plainMarkdown = newMarkdown(extension.Table, extension.Strikethrough, extension.TaskList)
)

func newMarkdown(ext ...goldmark.Extender) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(ext...),
		goldmark.WithRendererOptions(
			html.WithHardWraps(),
			renderer.WithNodeRenderers(util.Prioritized(safeMarkup{}, 100)),
		),
	)
}

// pickMarkdown is the converter for src: plainMarkdown when src holds
// nothing a bare link could start with (a scheme's ':', an address's
// '@', "www." in any case), which renders it as markdown would.
func pickMarkdown(src []byte) goldmark.Markdown {
	if bytes.IndexByte(src, ':') >= 0 || bytes.IndexByte(src, '@') >= 0 {
		return markdown
	}
	for i := bytes.IndexByte(src, '.'); i >= 0; {
		if i >= 3 && strings.EqualFold(string(src[i-3:i]), "www") {
			return markdown
		}
		j := bytes.IndexByte(src[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return plainMarkdown
}

// maxHighlight is the largest code block highlighted: chroma's lexers
// cost far more per byte than the page's other parts, and a block this
// large is read as plain text anyway.
const maxHighlight = 64 << 10

// appendMarkdown appends the text of v (see appendStr) rendered as
// Markdown in a <div class="md">, nothing when it is empty or blank.
func appendMarkdown(dst []byte, v []byte) []byte {
	// The text is unquoted into a scratch buffer, not dst: goldmark keeps
	// slices of its source while it writes.
	bp := getScratch()
	defer putScratch(bp)
	src := appendStr((*bp)[:0], v)
	*bp = src
	if len(bytes.TrimSpace(src)) == 0 {
		return dst
	}
	if !utf8.Valid(src) {
		src = bytes.ToValidUTF8(src, []byte("\uFFFD"))
	}
	dst = append(dst, "<div class=\"md\">"...)
	if out, ok := appendPlainMarkdown(dst, src); ok {
		return append(out, "</div>\n"...)
	}
	w := appender{dst}
	md := pickMarkdown(src)
	doc := md.Parser().Parse(text.NewReader(src))
	_ = md.Renderer().Render(&w, src, doc)
	return append(w.b, "</div>\n"...)
}

// plainClass sorts bytes for appendPlainMarkdown: 0 for those a plain
// text may hold anywhere (letters, digits, the space, non-ASCII, and
// punctuation that starts no Markdown inline); 1 for 'w' and 'W' ("www"
// in any case may start a bare link); 2 for every other byte: a backtick,
// asterisk, underscore, bracket, angle bracket, ampersand, backslash,
// tilde, pipe, ':' or '@' (a bare link needs one), a control, a line feed
// (lines are cut before their bytes are looked at).
var plainClass = func() (t [256]uint8) {
	for c := range t {
		t[c] = 2
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = 0
	}
	for _, c := range []byte("abcdefghijklmnopqrstuvxyzABCDEFGHIJKLMNOPQRSTUVXYZ0123456789 ,.;?!'\"()/%$-+=#") {
		t[c] = 0
	}
	t['w'], t['W'] = 1, 1
	return t
}()

// plainLineStart marks the bytes a line of such a text may start with:
// what can start no block (no digit of a list, no '-', '+', '=' or '#').
var plainLineStart = func() (t [256]bool) {
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.;?!'\"()/%$") {
		t[c] = true
	}
	return t
}()

// plainLine tells whether a line (without its line feed) holds only
// bytes of class 0 and no "www" in any case.
func plainLine(l []byte) bool {
	i := 0
	for i+8 <= len(l) {
		if plainClass[l[i]]|plainClass[l[i+1]]|plainClass[l[i+2]]|plainClass[l[i+3]]|
			plainClass[l[i+4]]|plainClass[l[i+5]]|plainClass[l[i+6]]|plainClass[l[i+7]] == 0 {
			i += 8
			continue
		}
		break
	}
	for ; i < len(l); i++ {
		switch plainClass[l[i]] {
		case 2:
			return false
		case 1:
			if i+2 < len(l) && plainClass[l[i+1]] == 1 && plainClass[l[i+2]] == 1 {
				return false
			}
		}
	}
	return true
}

// plainText tells whether src is plain paragraphs for
// appendPlainMarkdown: lines of plain bytes (see plainLine), each blank
// or starting with a byte that starts no block, and none but the last
// with two or more spaces before its line break (goldmark keeps some of
// four or more: such a text is left to it).
func plainText(src []byte) bool {
	for len(src) > 0 {
		line, more := src, false
		if k := bytes.IndexByte(src, '\n'); k >= 0 {
			line, src, more = src[:k], src[k+1:], true
		} else {
			src = nil
		}
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' {
			// An indented line: plain only when it is blank.
			if len(bytes.TrimLeft(line, " ")) > 0 {
				return false
			}
			continue
		}
		if !plainLineStart[line[0]] || !plainLine(line) {
			return false
		}
		if more && len(line) >= 2 && line[len(line)-1] == ' ' && line[len(line)-2] == ' ' {
			return false
		}
	}
	return true
}

// appendPlainMarkdown renders a text that is plain paragraphs (see
// plainText), without a parse, as goldmark renders it: paragraphs split
// at blank lines, each line's trailing spaces dropped, lines joined with
// <br>. It reports false, appending nothing, for any other text
// (FuzzPlainMarkdown checks that goldmark agrees on every text it takes).
// Prose without Markdown (the bulk of many sessions) is then rendered at
// the cost of escaping it. src must be valid UTF-8.
func appendPlainMarkdown(dst, src []byte) ([]byte, bool) {
	if !plainText(src) {
		return dst, false
	}
	start := len(dst)
	inPara := false
	for len(src) > 0 {
		line := src
		if k := bytes.IndexByte(src, '\n'); k >= 0 {
			line, src = src[:k], src[k+1:]
		} else {
			src = nil
		}
		line = bytes.TrimRight(line, " ")
		if len(line) == 0 {
			if inPara {
				dst = append(dst, "</p>\n"...)
				inPara = false
			}
			continue
		}
		if inPara {
			dst = append(dst, "<br>\n"...)
		} else {
			dst = append(dst, "<p>"...)
			inPara = true
		}
		dst = escapeValidHTML(dst, line)
	}
	if inPara {
		dst = append(dst, "</p>\n"...)
	}
	return dst, len(dst) > start
}

// safeMarkup renders the nodes whose default rendering would let
// markup or URLs through (see markdown).
type safeMarkup struct{}

func (safeMarkup) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, renderRawHTML)
	r.Register(ast.KindHTMLBlock, renderHTMLBlock)
	r.Register(ast.KindLink, renderLink)
	r.Register(ast.KindAutoLink, renderAutoLink)
	r.Register(ast.KindImage, renderImage)
	r.Register(ast.KindFencedCodeBlock, renderFencedCode)
}

func renderRawHTML(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := n.(*ast.RawHTML).Segments
		for i := 0; i < segs.Len(); i++ {
			s := segs.At(i)
			writeEscaped(w, s.Value(src))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	b := n.(*ast.HTMLBlock)
	_, _ = w.WriteString("<p class=\"html\">")
	lines := b.Lines()
	for i := 0; i < lines.Len(); i++ {
		s := lines.At(i)
		writeEscaped(w, s.Value(src))
	}
	if b.HasClosure() {
		writeEscaped(w, b.ClosureLine.Value(src))
	}
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

func renderLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !safeURL(n.Destination) {
		return ast.WalkContinue, nil // the text alone
	}
	if entering {
		_, _ = w.WriteString("<a href=\"")
		writeEscaped(w, util.URLEscape(n.Destination, true))
		_, _ = w.WriteString("\" rel=\"noreferrer nofollow\"")
		if n.Title != nil {
			_, _ = w.WriteString(" title=\"")
			writeEscaped(w, n.Title)
			_ = w.WriteByte('"')
		}
		_ = w.WriteByte('>')
	} else {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	url, label := n.URL(src), n.Label(src)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	if !safeURL(url) {
		writeEscaped(w, label)
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<a href=\"")
	writeEscaped(w, util.URLEscape(url, false))
	_, _ = w.WriteString("\" rel=\"noreferrer nofollow\">")
	writeEscaped(w, label)
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

func renderImage(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	if inlineImageURL(n.Destination) {
		if entering {
			_, _ = w.WriteString("<img src=\"")
			writeEscaped(w, n.Destination)
			_, _ = w.WriteString("\" alt=\"")
			writeEscaped(w, nodeText(n, src))
			_, _ = w.WriteString("\">")
		}
		return ast.WalkSkipChildren, nil
	}
	// Any other image is a link to it, or its text.
	if !entering {
		return ast.WalkContinue, nil
	}
	if !safeURL(n.Destination) {
		writeEscaped(w, nodeText(n, src))
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString("<a href=\"")
	writeEscaped(w, util.URLEscape(n.Destination, true))
	_, _ = w.WriteString("\" rel=\"noreferrer nofollow\">")
	writeEscaped(w, nodeText(n, src))
	_, _ = w.WriteString("</a>")
	return ast.WalkSkipChildren, nil
}

// writeEscaped writes s escaped as escapeHTML escapes it.
func writeEscaped(w util.BufWriter, s []byte) {
	_, _ = w.Write(escapeHTML(nil, s))
}

// nodeText is the plain text of a node's descendants.
func nodeText(n ast.Node, src []byte) []byte {
	var b []byte
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			if t, ok := c.(*ast.Text); ok {
				b = append(b, t.Segment.Value(src)...)
			} else if s, ok := c.(*ast.String); ok {
				b = append(b, s.Value...)
			}
		}
		return ast.WalkContinue, nil
	})
	return b
}

// safeURL tells whether a link may keep its URL: http, https and mailto,
// or no scheme at all. Controls and white space are dropped before the
// scheme is read, as browsers drop them.
func safeURL(u []byte) bool {
	var b strings.Builder
	for _, c := range u {
		if c > ' ' && c != 0x7f {
			b.WriteByte(c)
		}
		if c == '/' || c == '?' || c == '#' {
			break
		}
	}
	s := strings.ToLower(b.String())
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return true
	}
	switch s[:i] {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// inlineImageURL tells whether an image URL is one the page shows inline:
// a base64 data: URI of a raster format whose base64 is plain.
func inlineImageURL(u []byte) bool {
	for _, p := range []string{"data:image/png;base64,", "data:image/jpeg;base64,", "data:image/gif;base64,", "data:image/webp;base64,"} {
		if len(u) > len(p) && strings.EqualFold(string(u[:len(p)]), p) {
			for _, c := range u[len(p):] {
				if b64Class[c] != 1 && c != '=' {
					return false
				}
			}
			return true
		}
	}
	return false
}

func renderFencedCode(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	var code []byte
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		s := lines.At(i)
		code = append(code, s.Value(src)...)
	}
	lang := n.Language(src)
	if lexer := lexerFor(lang, len(code)); lexer != nil {
		if it, err := lexer.Tokenise(nil, string(code)); err == nil {
			var b bytes.Buffer
			if codeFormatter.Format(&b, codeStyle, it) == nil {
				_, _ = w.Write(b.Bytes())
				return ast.WalkSkipChildren, nil
			}
		}
	}
	_, _ = w.WriteString("<pre class=\"code\"><code>")
	writeEscaped(w, code)
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// lexerFor is chroma's lexer for a fence's language, nil when it names
// none chroma knows or the code is too long to highlight.
func lexerFor(lang []byte, size int) chroma.Lexer {
	if len(lang) == 0 || size > maxHighlight {
		return nil
	}
	l := lexers.Get(string(lang))
	if l == nil {
		return nil
	}
	return chroma.Coalesce(l)
}

// The highlighter writes classes only; codeCSS colours them, with
// GitHub's light style and, in dark mode, its dark one.
var (
	codeFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithCSSComments(false))
	codeStyle     = styles.Get("github")
	codeCSS       = func() string {
		var light, dark bytes.Buffer
		_ = codeFormatter.WriteCSS(&light, codeStyle)
		_ = codeFormatter.WriteCSS(&dark, styles.Get("github-dark"))
		return light.String() + "@media (prefers-color-scheme:dark){\n" + dark.String() + "}\n"
	}()
)

// appender is a goldmark writer that appends to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error)       { a.b = append(a.b, p...); return len(p), nil }
func (a *appender) WriteString(s string) (int, error) { a.b = append(a.b, s...); return len(s), nil }
func (a *appender) WriteByte(c byte) error            { a.b = append(a.b, c); return nil }
func (a *appender) WriteRune(r rune) (int, error) {
	n := len(a.b)
	a.b = utf8.AppendRune(a.b, r)
	return len(a.b) - n, nil
}
func (a *appender) Available() int { return 1 << 20 }
func (a *appender) Buffered() int  { return 0 }
func (a *appender) Flush() error   { return nil }
