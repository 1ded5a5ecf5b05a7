package render

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/tree"
)

// The rich session is written by pi's own SessionManager
// (internal/oracle/js/write.mjs): images of every format the page shows
// and some it must not (an SVG with script, a PNG that is an SVG, broken
// base64), an edit whose diff pi's edit tool made, Markdown with tables
// and code in several languages, hostile text, a system prompt with
// sections and tools, a message pi hides, and a branch off the path.

// webp1x1 is a 1×1 lossless WebP (Go has no WebP encoder).
const webp1x1 = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

const svgScript = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)"><script>alert(2)</script><rect width="10" height="10"/></svg>`

// testImages are the image blocks of the rich session, by name: data
// (base64) and mimeType.
func testImages(t testing.TB) [][2]string {
	pic := image.NewRGBA(image.Rect(0, 0, 24, 16))
	for y := 0; y < 16; y++ {
		for x := 0; x < 24; x++ {
			pic.Set(x, y, color.RGBA{uint8(10 * x), uint8(15 * y), 200, 255})
		}
	}
	var p, j, g bytes.Buffer
	if png.Encode(&p, pic) != nil || jpeg.Encode(&j, pic, nil) != nil || gif.Encode(&g, pic, nil) != nil {
		t.Fatal("encoding test images")
	}
	b := base64.StdEncoding.EncodeToString
	return [][2]string{
		{b(p.Bytes()), "image/png"},
		{b(j.Bytes()), "image/jpeg"},
		{b(g.Bytes()), "image/gif"},
		{webp1x1, "image/webp"},
		{b([]byte(svgScript)), "image/svg+xml"},
		{b([]byte(svgScript)), "image/png"}, // a lying mimeType
		{"not*base64!", "image/png"},
	}
}

// hostile is text that tries to break out of the page.
const hostile = "</script><script>alert('x')</script> <img src=x onerror=alert(1)> [click](javascript:alert(1)) [ok](https://example.org/a_b) <b>bold?</b> &amp; </details></div>"

const richMarkdown = "# Plan\n\nA **bold** move, a `code span`, a [link](https://example.org) and a table:\n\n" +
	"| tool | calls |\n|------|------:|\n| edit | 2 |\n| bash | 5 |\n\n" +
	"```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\n" +
	"```python\ndef f(x):\n    return x * 2\n```\n\n" +
	"```javascript\nconst y = () => `</script>`;\n```\n\n" +
	"```nosuchlang\nplain <code> here\n```\n\n- one\n- two\n\n> quoted\nline two"

// richOps are the operations write.mjs performs.
func richOps(t testing.TB) []map[string]any {
	imgs := testImages(t)
	block := func(i int) map[string]any {
		return map[string]any{"type": "image", "data": imgs[i][0], "mimeType": imgs[i][1]}
	}
	usage := map[string]any{"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
		"cost": map[string]any{"input": 0.0003, "output": 0.00075, "cacheRead": 0, "cacheWrite": 0, "total": 0.00105}}
	assistant := func(content ...map[string]any) map[string]any {
		return map[string]any{"message": map[string]any{"role": "assistant", "content": content, "api": "anthropic-messages",
			"provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "toolUse"}}
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	call := func(id, name string, args map[string]any) map[string]any {
		return map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args}
	}
	result := func(id, name string, content ...map[string]any) map[string]any {
		return map[string]any{"message": map[string]any{"role": "toolResult", "toolCallId": id, "toolName": name, "content": content, "isError": false}}
	}
	long := strings.Repeat("output line with some words in it\n", 60)
	huge := strings.Repeat("x", 200<<10)
	return []map[string]any{
		{"message": map[string]any{"role": "system", "content": "You are pi, a coding agent.",
			"sections": map[string]any{"project_context": "The project is pifs, a FUSE filesystem.", "rules": "Be brief."},
			"toolsAdded": []any{map[string]any{"name": "read", "description": "Read a file", "parameters": map[string]any{"type": "object",
				"properties": map[string]any{"path": map[string]any{"type": "string", "description": "File to read"}, "offset": map[string]any{"type": "number"}},
				"required":   []any{"path"}}},
				map[string]any{"name": "edit", "description": "Edit a file", "parameters": map[string]any{}}}}},
		{"message": map[string]any{"role": "user", "content": []any{text("Here are screenshots: " + hostile), block(0), block(1), block(2), block(3)}}}, // 1
		assistant(map[string]any{"type": "thinking", "thinking": "Let me look. " + hostile}, text(richMarkdown),
			call("call_edit", "edit", map[string]any{"path": "main.go", "oldText": "a", "newText": "b"})), // 2
		{"edit": map[string]any{"toolCallId": "call_edit", "path": "main.go",
			"old": "package main\n\nfunc main() {\n\tprintln(\"a\")\n}\n", "new": "package main\n\nfunc main() {\n\tprintln(\"b\")\n\tprintln(\"c\")\n}\n"}}, // 3
		assistant(call("call_shot", "screenshot", map[string]any{"url": "http://localhost"}), call("call_long", "bash", map[string]any{"command": "go test ./..."})), // 4
		result("call_shot", "screenshot", text("captured"), block(0), block(4), block(5), block(6)),                                                                  // 5
		result("call_long", "bash", text(long+hostile)), // 6
		{"message": map[string]any{"role": "bashExecution", "command": "ls -la </script>", "output": "total 0\n" + huge, "exitCode": 0, "cancelled": false, "truncated": false}}, // 7
		{"customMessage": map[string]any{"customType": "reminder", "content": "A **hidden** note for the model only.", "display": false}},                                        // 8
		{"customMessage": map[string]any{"customType": "notice", "content": []any{text("A shown note with a picture"), block(3)}, "display": true}},                              // 9
		{"label": []any{1, "screens"}},                      // 10
		{"model": []any{"openai", "gpt-5"}},                 // 11
		assistant(text("All done. The **diff** is above.")), // 12
		{"branch": 1},
		assistant(text("An *other* answer, on a branch.")),                             // 14
		{"message": map[string]any{"role": "user", "content": "and then? " + hostile}}, // 15
		{"branch": 12},
		{"branchSummary": []any{12, "Tried the *other* answer; it was worse."}},        // 17
		{"message": map[string]any{"role": "user", "content": "Thanks, that is all."}}, // 18
		assistant(text("You're welcome.")),                                             // 19
		{"name": "rich & <hostile> session"},
	}
}

// richSession has pi write the rich session into a temporary store and
// returns its file.
func richSession(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	spec, err := json.Marshal(map[string]any{"cwd": "/home/user/rich", "dir": dir, "ops": richOps(t)})
	if err != nil {
		t.Fatal(err)
	}
	out := oracle.NodeWith(t, oracle.NodeOptions{Stdin: spec}, "write.mjs")
	return strings.TrimSpace(string(out))
}

// TestRichImages: every image block with valid data is a file whose bytes
// are the base64 decoded, its size counted without decoding; transcript.md
// links each from the session folder and from a branch, and says why the
// broken one has no file.
func TestRichImages(t *testing.T) {
	tr := openTree(t, richSession(t))
	imgs := testImages(t)
	list := Images(tr.Entries())
	var valid, broken int
	for _, im := range list {
		if im.Broken {
			broken++
			continue
		}
		valid++
		got, err := DecodeImage(im.Data)
		if err != nil {
			t.Fatalf("%s: %v", im.Name, err)
		}
		if int64(len(got)) != im.Size {
			t.Errorf("%s: size %d, decoded %d bytes", im.Name, im.Size, len(got))
		}
		var src string
		_ = json.Unmarshal(im.Data, &src)
		want, err := base64.StdEncoding.DecodeString(src)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: bytes differ from the base64 decoded (%v)", im.Name, err)
		}
	}
	// The user's four, the tool result's three good ones, the notice's.
	if valid != 8 || broken != 1 {
		t.Errorf("%d images with files, %d broken; want 8 and 1", valid, broken)
	}
	exts := map[string]bool{}
	for _, im := range list {
		exts[filepath.Ext(im.Name)] = true
	}
	for _, e := range []string{".png", ".jpg", ".gif", ".webp", ".bin"} {
		if !exts[e] {
			t.Errorf("no image named *%s", e)
		}
	}
	_ = imgs
	md := string(Transcript(tr.LeafPath()))
	for _, im := range list {
		link := "(images/" + im.Name + ")"
		if on := onPath(tr, im.Entry.ID); on && !im.Broken && !strings.Contains(md, link) {
			t.Errorf("transcript.md lacks %s", link)
		}
	}
	if !strings.Contains(md, "*[image image/png: not valid base64, no file]*") {
		t.Error("transcript.md does not say why the broken image has no file")
	}
	if !strings.Contains(md, "```diff\n") || !strings.Contains(md, "+5 \tprintln(\"c\")") {
		t.Errorf("transcript.md lacks the edit's diff fence")
	}
	// A tool result's images follow its fence, outside it.
	if !regexp.MustCompile("```\n\n!\\[image image/png\\]\\(images/").MatchString(md) {
		t.Error("a tool result's image link is not right after its fence")
	}
}

func onPath(tr *tree.Tree, id string) bool {
	for _, e := range tr.LeafPath() {
		if e.ID == id {
			return true
		}
	}
	return false
}

// TestRichPage checks the session's page without a browser: images
// inline only when safe, Markdown rendered, no markup from the session.
func TestRichPage(t *testing.T) {
	tr := openTree(t, richSession(t))
	page := string(SessionHTML(tr))
	// The user's four, the tool result's one true PNG and the notice's
	// WebP; the SVG, the PNG that is an SVG and the broken one are notes.
	if n := strings.Count(page, `<img src="data:image/`); n != 6 {
		t.Errorf("%d images inline, want 6", n)
	}
	if m := regexp.MustCompile(`(?i)<[a-z][^>]*\son[a-z]+=`).FindString(page); m != "" {
		t.Errorf("page holds an event handler: %q", m)
	}
	for _, bad := range []string{"data:image/svg", "<script", `href="javascript`, "<b>bold?</b>", "<img src=x"} {
		if strings.Contains(strings.ToLower(page), strings.ToLower(bad)) {
			t.Errorf("page holds %q", bad)
		}
	}
	for _, want := range []string{
		"<table>", "<h1>Plan</h1>", `<span class="kd">func</span>`, `class="chroma"`, // Markdown and code
		`<span class="add">+5 	println(&quot;c&quot;)</span>`, // the diff
		"hidden in pi's terminal", "display: false",           // the hidden message
		"sections project_context, rules", "tools +read +edit", // the system prompt
		`<li><code>path</code> string <span class="req">required</span>: File to read</li>`, `<li><code>offset</code> number <span class="opt">optional</span></li>`,
		`<details class="output"><summary>output (long, folded)</summary>`,
		"[image image/svg+xml: not shown inline", "[image image/png: not valid base64]",
		`<p class="fork">branch from <a href="#e-`, `An <em>other</em> answer, on a branch.`, // the other branch
		`<nav class="tree"`, `id="f-labeled-only"`, // the tree
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Every entry once.
	ids := anchorsIn([]byte(page))
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("entry %s shown twice", id)
		}
		seen[id] = true
	}
	for _, e := range tr.Entries() {
		if !seen[string(anchor(nil, e.ID))] {
			t.Errorf("entry %s (%s) not in the page", e.ID, e.Type)
		}
	}
}

// harness is a page that loads another in a frame and writes what the
// frame holds as JSON into #out: the natural width of each image, the
// entries' anchors in order, the text of the elements sel selects, and
// the body's text. Chromium runs it with file access between files.
func harness(t *testing.T, dir, page, sel string) string {
	t.Helper()
	h := `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><iframe id="f" src="` + html.EscapeString(filepath.Base(page)) + `" width="1000" height="800"></iframe><pre id="out"></pre><script>
document.getElementById('f').addEventListener('load', () => {
  const d = document.getElementById('f').contentDocument;
  const r = {
    images: [...d.images].map(i => i.naturalWidth),
    ids: [...d.querySelectorAll('[id^="e-"]')].map(e => e.id),
    texts: ` + sel + `,
    body: d.body.textContent,
    scripts: d.querySelectorAll('script').length,
  };
  document.getElementById('out').textContent = JSON.stringify(r);
});
</script></body></html>`
	file := filepath.Join(dir, "harness-"+filepath.Base(page))
	if err := os.WriteFile(file, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

type framed struct {
	Images  []int    `json:"images"`
	IDs     []string `json:"ids"`
	Texts   []string `json:"texts"`
	Body    string   `json:"body"`
	Scripts int      `json:"scripts"`
}

// inFrame loads page through the harness and returns what it saw.
func inFrame(t *testing.T, bin, dir, page, sel string) (framed, []byte) {
	t.Helper()
	dom, errs := chromium(t, bin, harness(t, dir, page, sel), "--allow-file-access-from-files", "--virtual-time-budget=20000", "--dump-dom")
	m := regexp.MustCompile(`(?s)<pre id="out">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil || len(m[1]) == 0 {
		t.Fatalf("%s: the harness saw nothing:\n%s", page, errs)
	}
	var f framed
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &f); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	return f, errs
}

// squash drops white space: the pages lay text out differently.
func squash(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// TestRichInBrowser loads the rich session's page in chromium: no
// console errors, no script, every image decoded, the path's entries in
// order; and pi's own /export page of the same file: every message text
// pi's page holds is in ours.
func TestRichInBrowser(t *testing.T) {
	bin := browser(t)
	demo, _ := filepath.Glob("../testdata/demo/*/2025-05-12T10-00-01-000Z_*.jsonl")
	if len(demo) != 1 {
		t.Fatal("demo session missing")
	}
	abs, err := filepath.Abs(demo[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"rich": richSession(t), "demo": abs} {
		t.Run(name, func(t *testing.T) { checkAgainstPi(t, bin, name, file) })
	}
}

func checkAgainstPi(t *testing.T, bin, name, file string) {
	tr := openTree(t, file)
	dir := t.TempDir()
	ours := filepath.Join(dir, "transcript.html")
	if err := os.WriteFile(ours, SessionHTML(tr), 0o644); err != nil {
		t.Fatal(err)
	}
	// The page in a frame: its console (CSP refusals, errors) is the
	// browser's log, which the frame's messages reach too.
	f, errs := inFrame(t, bin, dir, ours, "[]")
	for _, line := range strings.Split(string(errs), "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, "Refused to") || strings.Contains(line, "CONSOLE") && strings.Contains(line, "transcript.html") {
			t.Errorf("console: %s", line)
		}
	}
	if f.Scripts != 0 {
		t.Errorf("%d script elements in the page", f.Scripts)
	}
	if len(f.Images) == 0 {
		t.Fatal("no images in the page")
	}
	for i, w := range f.Images {
		if w <= 0 {
			t.Errorf("image %d not decoded (naturalWidth %d)", i, w)
		}
	}
	// The path's entries come first, in order.
	want := wantAnchors(tr.LeafPath())
	if len(f.IDs) < len(want) || strings.Join(f.IDs[:len(want)], " ") != strings.Join(want, " ") {
		t.Errorf("DOM entries %q, want the path %q first", f.IDs, want)
	}
	shot := filepath.Join(t.TempDir(), name+".png")
	if testing.Verbose() {
		shot = filepath.Join(os.TempDir(), "pifs-session-"+name+".png")
	}
	chromium(t, bin, ours, "--screenshot="+shot, "--window-size=1100,2400", "--hide-scrollbars")
	if inked := inkedShare(t, shot); inked < 0.02 {
		t.Errorf("the screenshot is blank (%.1f%% inked)", 100*inked)
	}

	// pi's page of the same file, rendered by its own script.
	theirs := filepath.Join(dir, "pi-export.html")
	oracle.Pi(t, oracle.NodeOptions{Dir: dir, Env: []string{"HOME=" + dir}}, "--export", file, theirs)
	sel := `[...d.querySelectorAll('.markdown-content, .thinking-text, .tool-command, .tool-output:not(.expandable), .tool-output.expandable > .output-full, .tool-diff, .error-text')].map(e => e.textContent)`
	pi, _ := inFrame(t, bin, dir, theirs, sel)
	if len(pi.Texts) < 10 {
		t.Fatalf("pi's page shows %d texts; its script did not run?", len(pi.Texts))
	}
	body := squash(f.Body)
	missing := 0
	for _, txt := range pi.Texts {
		// pi shows a custom message whose content is blocks as their
		// JSON; ours shows the blocks: their texts must be there.
		var blocks []struct{ Type, Text string }
		if json.Unmarshal([]byte(txt), &blocks) == nil && len(blocks) > 0 {
			txt = ""
			for _, b := range blocks {
				txt += b.Text
			}
		}
		if s := squash(txt); s != "" && !strings.Contains(body, s) {
			missing++
			if len(s) > 200 {
				s = s[:200] + "…"
			}
			t.Errorf("pi's page shows %q, ours does not", s)
		}
	}
	t.Logf("pi's page: %d texts, %d missing from ours", len(pi.Texts), missing)
}
