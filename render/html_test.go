package render

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// injection is a message that tries to close the markup around it and run
// a script; the page must show it as text.
const injection = `<script>alert(1)</script></details></div></article><img src=x onerror=alert(2)>&amp;`

func injectionSession() string {
	q := func(s string) string { return string(jsonQuote(s)) }
	lines := []string{
		`{"type":"session","version":3,"id":"inj<>\"&","timestamp":"2025-05-12T10:00:00.000Z","cwd":"/tmp/<b>cwd</b>"}`,
		`{"type":"session_info","id":"n1","parentId":null,"timestamp":"2025-05-12T10:00:00.000Z","name":"</title><script>alert(3)</script>"}`,
		`{"type":"message","id":"u1","parentId":"n1","timestamp":"2025-05-12T10:00:01.000Z","message":{"role":"user","content":` + q(injection) + `}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-05-12T10:00:02.000Z","message":{"role":"assistant","provider":"p<i>","model":"m</span>","content":[{"type":"thinking","thinking":` + q(injection) + `},{"type":"text","text":` + q(injection) + `},{"type":"toolCall","id":"c1","name":` + q(injection) + `,"arguments":{"k":` + q(injection) + `}}],"usage":{"input":10,"output":20,"cacheRead":30,"cacheWrite":40,"cost":{"total":0.5}},"errorMessage":` + q(injection) + `}}`,
		`{"type":"message","id":"t1","parentId":"a1","timestamp":"2025-05-12T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":` + q(injection) + `,"content":[{"type":"text","text":` + q(injection+"\x00\x1b[31m") + `}],"isError":true,"usage":{"input":1}}}`,
		`{"type":"message","id":"<x y=\"z\">","parentId":"t1","timestamp":"2025-05-12T10:00:04.000Z","message":{"role":"bashExecution","command":` + q(injection) + `,"output":` + q(injection) + `,"exitCode":1}}`,
		`{"type":"custom_message","id":"cm","parentId":"<x y=\"z\">","customType":` + q(injection) + `,"content":` + q(injection) + `}`,
		`{"type":"branch_summary","id":"bs","parentId":"cm","fromId":"u1","summary":` + q(injection) + `,"usage":{"output":5}}`,
		`{"type":"compaction","id":"co","parentId":"bs","firstKeptEntryId":"a1","summary":` + q(injection) + `,"tokensBefore":9}`,
		`{"type":"label","id":"lb","parentId":"co","targetId":"a1","label":` + q(injection) + `}`,
		`{"type":"model_change","id":"mc","parentId":"lb","provider":"x","modelId":` + q(injection) + `}`,
		`{"type":"usage","id":"us","parentId":"mc","provider":"x","model":"y","usage":{"input":100,"cost":{"total":1}}}`,
		`{"type":"message","id":"last","parentId":"us","timestamp":"2025-05-12T10:00:05.000Z","message":{"role":"user","content":"the end"}}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

func jsonQuote(s string) []byte {
	var b []byte
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, []byte(`\u00`)...)
			b = append(b, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&15])
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}

func parseTree(t testing.TB, data string) *tree.Tree {
	l, err := sessions.Parse([]byte(data))
	if err != nil || l.Header == nil {
		t.Fatalf("parse: %v", err)
	}
	return tree.New(l)
}

// wantAnchors is the entry-id anchors a page of path must hold, in order.
func wantAnchors(path []*sessions.Entry) []string {
	var ids []string
	for _, e := range path {
		if e.ID != "" {
			ids = append(ids, string(anchor(nil, e.ID)))
		}
	}
	return ids
}

// strayImg is an <img> that is not one of the page's data: images.
var strayImg = regexp.MustCompile(`(?i)<img(?:[^>]*?\s)?src="(?:[^d]|d[^a]|da[^t]|dat[^a]|data[^:]|data:[^i]|data:i[^m])`)

var anchorRE = regexp.MustCompile(`<(?:article|div) class="entry[^"]*" id="(e-[^"]*)"`)

func anchorsIn(page []byte) []string {
	var ids []string
	for _, m := range anchorRE.FindAllSubmatch(page, -1) {
		ids = append(ids, string(m[1]))
	}
	return ids
}

func TestHTMLStructure(t *testing.T) {
	tr := parseTree(t, injectionSession())
	path := tr.LeafPath()
	page := TranscriptHTML(PageOf(tr), path)
	if got, want := anchorsIn(page), wantAnchors(path); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("anchors %q, want %q", got, want)
	}
	for _, bad := range []string{"<script", "<img", "<x ", "<i>", "</span>\"", "http:", "https:"} {
		if bytes.Contains(bytes.ToLower(page), []byte(bad)) {
			t.Errorf("page contains %q", bad)
		}
	}
	if n := bytes.Count(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/details&gt;")); n < 10 {
		t.Errorf("injection shown as text %d times, want every place it occurs", n)
	}
	if o, c := bytes.Count(page, []byte("<details")), bytes.Count(page, []byte("</details>")); o != c || o == 0 {
		t.Errorf("%d <details> opened, %d closed", o, c)
	}
	// Control characters stay visible; the page has none.
	if !bytes.Contains(page, []byte("\u2400\u241b[31m")) {
		t.Error("control characters not shown as pictures")
	}
	for _, c := range page {
		if c < 0x20 && c != '\n' && c != '\t' {
			t.Fatalf("page holds control byte %#x", c)
		}
	}
	// Totals: two messages with usage, a usage entry, a branch summary.
	for _, want := range []string{"<td>111</td><td>25</td><td>30</td><td>40</td><td>206</td><td>$1.5000</td>", "<code>p&lt;i&gt;/m&lt;/span&gt;</code> ×1", "<a href=\"#e-last\">last</a>"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The odd id has a safe anchor that its link uses.
	if !bytes.Contains(page, []byte(`id="e-~3Cx~20y~3D~22z~22~3E"`)) || !bytes.Contains(page, []byte(`href="#e-~3Cx~20y~3D~22z~22~3E"`)) {
		t.Error("odd id anchor missing")
	}
}

// TestHTMLPieces: the page is head + entries + foot, and a longer path's
// page shares the head and the entries' pieces.
func TestHTMLPieces(t *testing.T) {
	tr := parseTree(t, injectionSession())
	p, path := PageOf(tr), tr.LeafPath()
	var b []byte
	b = HTMLHead(b, p)
	for _, e := range path {
		b = AppendEntryHTML(b, e)
	}
	b = appendFoot(b, path)
	if !bytes.Equal(b, TranscriptHTML(p, path)) {
		t.Fatal("TranscriptHTML is not head + entries + foot")
	}
	short := TranscriptHTML(p, path[:5])
	foot := appendFoot(nil, path[:5])
	if !bytes.HasPrefix(b, short[:len(short)-len(foot)]) {
		t.Fatal("a longer path's page does not extend the shorter one's head and entries")
	}
}

func TestEscapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"plain é 😀":           "plain é 😀",
		`<a href="x">&</a>`:   "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;",
		"a\x00b\x1b\x7f\t\n":  "a\u2400b\u241b\u2421\t\n",
		"bad \xff\xfe utf8 é": "bad \uFFFD\uFFFD utf8 é",
	} {
		if got := string(escapeHTML(nil, []byte(in))); got != want {
			t.Errorf("escapeHTML(%q) = %q, want %q", in, got, want)
		}
	}
}

// browser returns Debian's chromium, or skips (fails under
// PIFS_REQUIRE_BROWSER=1) when it is missing.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PIFS_REQUIRE_BROWSER") == "1" {
		t.Fatal("chromium not found and PIFS_REQUIRE_BROWSER=1")
	}
	t.Skip("chromium not installed (apt-get install chromium)")
	return ""
}

// chromium runs a headless browser on page with args, returning its
// stdout; stderr (the page's console, with logging on) goes to errs.
func chromium(t *testing.T, bin, page string, args ...string) (out, errs []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	return stdout.Bytes(), stderr.Bytes()
}

// browserPages are the pages the browser test loads: the injection
// fixture, the demo session with the most kinds of entries, and a long
// generated one.
func browserPages(t *testing.T) map[string]*tree.Tree {
	pages := map[string]*tree.Tree{"injection": parseTree(t, injectionSession())}
	demo, _ := filepath.Glob("../testdata/demo/*/2025-05-12T10-00-01-000Z_*.jsonl")
	big, _ := filepath.Glob("../testdata/demo/*/2025-05-12T18-06-02-000Z_*.jsonl")
	if len(demo) != 1 || len(big) != 1 {
		t.Fatal("demo sessions missing")
	}
	pages["demo"] = openTree(t, demo[0])
	pages["demo-long"] = openTree(t, big[0])
	return pages
}

func TestHTMLInBrowser(t *testing.T) {
	bin := browser(t)
	dir := t.TempDir()
	for name, tr := range browserPages(t) {
		path := tr.LeafPath()
		page := TranscriptHTML(PageOf(tr), path)
		file := filepath.Join(dir, name+".html")
		if err := os.WriteFile(file, page, 0o644); err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(?i)(https?:|ftp:|//[a-z0-9])`).Find(page); m != nil {
			t.Errorf("%s: page names an external URL: %q", name, m)
		}
		dom, errs := chromium(t, bin, file, "--dump-dom")
		if !bytes.Contains(dom, []byte("</main>")) {
			t.Fatalf("%s: no DOM dumped:\n%s", name, errs)
		}
		if got, want := anchorsIn(dom), wantAnchors(path); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: DOM entry anchors %d, want %d in path order:\n%q\n%q", name, len(got), len(want), got, want)
		}
		if bytes.Contains(bytes.ToLower(dom), []byte("<script")) || strayImg.Match(dom) {
			t.Errorf("%s: an element was injected into the DOM", name)
		}
		for _, line := range strings.Split(string(errs), "\n") {
			if strings.Contains(line, "Uncaught") || strings.Contains(line, "CONSOLE") || strings.Contains(line, "Refused to") {
				t.Errorf("%s: console: %s", name, line)
			}
		}
		if name == "injection" {
			if n := bytes.Count(dom, []byte("&lt;script&gt;alert(1)&lt;/script&gt;&lt;/details&gt;")); n < 10 {
				t.Errorf("injection text shown %d times in the DOM", n)
			}
			if !regexp.MustCompile(`<main>\s*(<(article|div) class="entry[^>]*>[\s\S]*?</(article|div)>\s*)+</main>`).Match(dom) {
				t.Error("entries are not all direct children of <main>")
			}
		}
		// A screenshot: the page renders to something, not a blank.
		shot := filepath.Join(t.TempDir(), "page.png")
		if testing.Verbose() {
			shot = filepath.Join(os.TempDir(), "pifs-"+name+".png")
		}
		chromium(t, bin, file, "--screenshot="+shot, "--window-size=1100,1600", "--hide-scrollbars")
		if inked := inkedShare(t, shot); inked < 0.02 {
			t.Errorf("%s: the screenshot is blank (%.1f%% of pixels differ from the background)", name, 100*inked)
		}
		t.Logf("%s: screenshot in %s", name, shot)
	}
}

// TestHTMLValid checks the pages with tidy when Debian's tidy is there.
func TestHTMLValid(t *testing.T) {
	tidy, err := exec.LookPath("tidy")
	if err != nil {
		if os.Getenv("PIFS_REQUIRE_BROWSER") == "1" {
			t.Fatal("tidy not found and PIFS_REQUIRE_BROWSER=1")
		}
		t.Skip("tidy not installed")
	}
	for name, tr := range browserPages(t) {
		for what, page := range map[string][]byte{"path": TranscriptHTML(PageOf(tr), tr.LeafPath()), "session": SessionHTML(tr)} {
			cmd := exec.Command(tidy, "-errors", "-q", "--show-warnings", "yes")
			cmd.Stdin = bytes.NewReader(page)
			out, err := cmd.CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Errorf("%s's %s page: tidy: %v\n%s", name, what, err, out)
			}
		}
	}
}

func BenchmarkTranscriptHTML(b *testing.B) {
	t := big(b)
	p := PageOf(t)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := TranscriptHTML(p, t.LeafPath())
		b.SetBytes(int64(len(out)))
	}
}

// TestSummaryMatchesTreeUsage: over all of a file's entries, the page's
// totals are /session's (Tree.Usage).
func TestSummaryMatchesTreeUsage(t *testing.T) {
	for _, p := range storeFiles(t) {
		tr := openTree(t, p)
		if tr == nil {
			continue
		}
		if got, want := summarize(tr.Entries()).usage, tr.Usage(); got != want {
			t.Errorf("%s: totals %+v, want %+v", p, got, want)
		}
	}
}

// refEscapeHTML is escapeHTML's rule written plainly.
func refEscapeHTML(s []byte) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == 0x7f:
			b.WriteRune(0x2421)
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r':
			b.WriteRune(0x2400 + r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func FuzzEscapeHTML(f *testing.F) {
	f.Add([]byte(injection))
	f.Add([]byte("a\x00b\x1b\x7f\t\n\xff é 😀 <>&\"'"))
	f.Fuzz(func(t *testing.T, s []byte) {
		if got, want := string(escapeHTML([]byte("x"), s)), "x"+refEscapeHTML(s); got != want {
			t.Fatalf("escapeHTML(%q) = %q, want %q", s, got, want)
		}
	})
}

// inkedShare is the share of a PNG's pixels that differ from its top-left
// one (the page's background).
func inkedShare(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	br, bgc, bb, _ := bg.RGBA()
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r != br || g != bgc || bl != bb {
				inked++
			}
		}
	}
	return float64(inked) / float64((b.Dx()/2+1)*(b.Dy()/2+1))
}

// TestHTMLBlocks pins the markup of the blocks a reader folds: thinking
// and tool calls in <details> with their <summary>, the call's id in its
// own span, and a tool result's output.
func TestHTMLBlocks(t *testing.T) {
	tr := parseTree(t, `{"type":"session","version":3,"id":"s","cwd":"/"}
{"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":[{"type":"thinking","thinking":"let me think"},{"type":"toolCall","id":"call_7","name":"bash","arguments":{"command":"ls"}}]}}
{"type":"message","id":"t1","parentId":"a1","message":{"role":"toolResult","toolCallId":"call_7","toolName":"bash","content":[{"type":"text","text":"a.go"}]}}
`)
	page := string(TranscriptHTML(PageOf(tr), tr.LeafPath()))
	for _, want := range []string{
		"<details class=\"thinking\"><summary>thinking</summary>\n<div class=\"text\">let me think</div>\n</details>\n",
		"<details class=\"tool-call\" id=\"c-call_7\"><summary>tool call <code>bash</code> <code class=\"preview\">$ ls</code> <span class=\"call-id\">call_7</span> <a href=\"#r-call_7\">result</a></summary>\n<pre>{\n  &quot;command&quot;: &quot;ls&quot;\n}\n</pre>\n</details>\n",
		"<p class=\"call-ref\" id=\"r-call_7\">result of <a href=\"#c-call_7\">call_7</a></p>\n",
		"<details class=\"output\" open><summary>output</summary>\n<div class=\"pre\">a.go</div>\n</details>\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(css, ".call-id") {
		t.Error("the stylesheet does not style .call-id")
	}
}

// TestHTMLModels: the foot names each model as provider/id, unescaped, the
// id alone without a provider, and counts answers in order of first use;
// an empty or missing id is not a model.
func TestHTMLModels(t *testing.T) {
	msg := func(id, parent, fields string) string {
		return `{"type":"message","id":"` + id + `","parentId":` + parent + `,"message":{"role":"assistant","content":"x"` + fields + `}}` + "\n"
	}
	tr := parseTree(t, `{"type":"session","version":3,"id":"s","cwd":"/"}`+"\n"+
		msg("m1", "null", `,"provider":"a\u0062","model":"m\"1"`)+
		msg("m2", `"m1"`, `,"provider":5,"model":"solo"`)+
		msg("m3", `"m2"`, `,"provider":"ab","model":"m\u00221"`)+
		msg("m4", `"m3"`, `,"provider":"ab","model":""`)+
		msg("m5", `"m4"`, `,"provider":"ab"`)+
		msg("m6", `"m5"`, `,"provider":"","model":"solo"`)+
		`{"type":"usage","id":"u1","parentId":"m6","provider":"ab","model":"m\"1","usage":{"input":1}}`+"\n")
	page := string(TranscriptHTML(PageOf(tr), tr.LeafPath()))
	want := "<dt>models</dt><dd><code>ab/m&quot;1</code> ×3, <code>solo</code> ×2</dd>"
	if !strings.Contains(page, want) {
		i := strings.Index(page, "<dt>models</dt>")
		t.Errorf("models %q, want %q", page[i:i+len(want)+20], want)
	}
}
