package render

import (
	"bytes"
	"html"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// JavaScript the test evaluates (the page's own scripts stay off): the
// anchors of the entries of <main> that show, and those of the rows of
// the tree that show.
const (
	shownEntries = `[...document.querySelectorAll('main [id^="e-"]')].filter(e => e.checkVisibility()).map(e => e.id)`
	shownRows    = `[...document.querySelectorAll('nav .r')].filter(e => e.checkVisibility()).map(e => e.querySelector('a').getAttribute('href').slice(1))`
)

// TestSessionPageInBrowser loads session pages in chromium with
// JavaScript off and uses them as a reader does, with mouse clicks: the
// page first shows the leaf's branch; each of the five filters shows the
// rows pi's /tree lists with it; a click on the row where each branch
// starts shows the path through it to the newest leaf under it (pi's
// page's rule), scrolled to it; "the leaf's branch" shows the first view
// again; the toggles show thinking, folded tool output and hidden
// messages, and hide them again. Screenshots show each change, and the
// same view twice alike.
func TestSessionPageInBrowser(t *testing.T) {
	bin := browser(t)
	branchy, _ := filepath.Glob("../testdata/demo/*/2025-05-12T12-00-43-000Z_*.jsonl")
	if len(branchy) != 1 {
		t.Fatal("demo session missing")
	}
	files := map[string]string{"branchy": branchy[0], "rich": richSession(t), "leaf-moved": leafMovedSession(t, branchy[0])}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			tr := openTree(t, file)
			dir := t.TempDir()
			page := filepath.Join(dir, "transcript.html")
			if err := os.WriteFile(page, SessionHTML(tr), 0o644); err != nil {
				t.Fatal(err)
			}
			c := startCDP(t, bin, 1280, 900)
			c.open(page)
			var scripts int
			c.eval(`document.querySelectorAll('script').length`, &scripts)
			if scripts != 0 {
				t.Errorf("%d scripts in the page", scripts)
			}
			var download []string
			c.eval(`[...document.querySelectorAll('a.download')].map(a => a.getAttribute('href') + ' ' + a.getAttribute('download'))`, &download)
			if len(download) != 1 || download[0] != "session.jsonl "+tr.Header.ID+".jsonl" {
				t.Errorf("download links %q", download)
			}
			navWidth := 0
			c.eval(`Math.ceil(document.querySelector('nav.tree').getBoundingClientRect().right)`, &navWidth)

			// The leaf's branch first.
			first := shot(t, c)
			if testing.Verbose() {
				os.WriteFile(filepath.Join(os.TempDir(), "pifs-first-"+name+".png"), c.screenshot(), 0o644)
			}
			checkShown(t, c, "at first", anchorsOf(tr, tr.LeafPath()))

			// The filters, by their labels.
			checkFilters(t, c, tr, first, navWidth)

			// A row of each branch, with the "all" filter on.
			c.click(`nav label[for="f-all"]`)
			clicks := checkBranches(t, c, tr, navWidth)
			if n := len(tr.Tips()); clicks < n {
				t.Errorf("%d branch rows clicked for %d tips", clicks, n)
			}
			// Back to the leaf's branch.
			c.click(`a[href="#"]`)
			c.click(`nav label[for="f-default"]`)
			checkShown(t, c, "back at the leaf's branch", anchorsOf(tr, tr.LeafPath()))
			if !sameImage(first, shot(t, c), navWidth, -1) {
				t.Errorf("the leaf's branch looks different the second time")
			}
			checkToggles(t, c, name)
			if testing.Verbose() {
				os.WriteFile(filepath.Join(os.TempDir(), "pifs-session-page-"+name+".png"), c.screenshot(), 0o644)
			}
		})
	}
}

// leafMovedSession is the branchy demo session with its leaf moved by
// pifs to an entry inside a branch (a pifs.leaf record) and an entry
// labelled: the page shows the path to the entry, not what follows it.
func leafMovedSession(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	l, err := sessions.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	tr := tree.New(l)
	var target string
	tr.Walk(func(n *tree.Node) bool {
		if n.Parent != nil && len(n.Children) == 1 && len(n.Children[0].Children) > 0 && n.Type == "message" && n.Role == "user" {
			target = n.ID
			return false
		}
		return true
	})
	if target == "" {
		t.Fatal("no entry inside a branch")
	}
	b := tr.NewBuilder()
	if _, err := b.Label(target, "here"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.MoveLeaf(target); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "moved.jsonl")
	out := append(append([]byte(nil), data...), joinLines(b.Lines)...)
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if moved := openTree(t, file); moved.LeafID() != target || moved.FileLeafID() == target {
		t.Fatalf("the leaf is at %s (file leaf %s), not %s", moved.LeafID(), moved.FileLeafID(), target)
	}
	return file
}

func joinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

// anchorsOf is the anchors of a path's entries as <main> shows them at
// first: pifs's leaf records left out, and messages pi keeps out of its
// terminal (display false) hidden.
func anchorsOf(tr *tree.Tree, path []*sessions.Entry) []string {
	var out []string
	for _, e := range path {
		if e.ID == "" || e.Type == "custom_message" && string(e.Get("display")) == "false" {
			continue
		}
		if n := tr.Node(e.ID); n != nil && n.IsLeafRecord() {
			continue
		}
		out = append(out, string(anchor(nil, e.ID)))
	}
	return out
}

// checkShown compares the entries <main> shows with want.
func checkShown(t *testing.T, c *cdp, what string, want []string) {
	t.Helper()
	var got []string
	c.eval(shownEntries, &got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: the page shows %q, want %q", what, got, want)
	}
}

// checkFilters clicks each filter's label and compares the rows shown
// with pi's rows for it; the tree's part of the screenshot changes with
// the rows and is the same for the same filter.
func checkFilters(t *testing.T, c *cdp, tr *tree.Tree, first *image.RGBA, navWidth int) {
	t.Helper()
	shots := map[string]*image.RGBA{}
	rowsOf := map[string]string{}
	for _, f := range append(append([]tree.Filter(nil), tree.Filters...), tree.FilterDefault) {
		c.click(`nav label[for="f-` + f.String() + `"]`)
		var got []string
		c.eval(shownRows, &got)
		var want []string
		for _, r := range tr.Selector(tr.FileLeafID(), f).Rows {
			if !r.Node.IsLeafRecord() {
				want = append(want, string(anchor(nil, r.Node.ID)))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("filter %s: rows %q, want pi's %q", f, got, want)
		}
		shot := shot(t, c)
		if prev, ok := shots[f.String()]; ok && !sameImage(prev, shot, 0, navWidth) {
			t.Errorf("filter %s looks different the second time", f)
		}
		for g, other := range shots {
			if g != f.String() && rowsOf[g] != strings.Join(want, " ") && sameImage(other, shot, 0, navWidth) {
				t.Errorf("filters %s and %s show other rows but look the same", f, g)
			}
		}
		shots[f.String()], rowsOf[f.String()] = shot, strings.Join(want, " ")
		// The conversation does not change.
		if !sameImage(first, shot, navWidth, -1) {
			t.Errorf("filter %s changed the conversation", f)
		}
	}
}

// checkBranches clicks, for each tip, the row of the first entry of its
// branch that the tree lists, and checks that the page shows the path
// through it to the newest leaf under it, scrolled to it; it returns the
// clicks made.
func checkBranches(t *testing.T, c *cdp, tr *tree.Tree, navWidth int) int {
	t.Helper()
	listed := map[*tree.Node]bool{}
	for _, r := range tr.Selector(tr.FileLeafID(), tree.FilterAll).Rows {
		listed[r.Node] = !r.Node.IsLeafRecord()
	}
	shots := map[string]*image.RGBA{}
	clicks := 0
	for _, tip := range tr.Tips() {
		// The first entry of the tip's branch (its segment) with a row.
		start := tip
		for p := tip.Parent; p != nil && len(p.Visible()) == 1; p = p.Parent {
			start = p
		}
		for !listed[start] && start != tip {
			start = start.Visible()[0]
		}
		if !listed[start] {
			continue
		}
		a := string(anchor(nil, start.ID))
		c.click(`nav a[href="#` + a + `"]`)
		clicks++
		if u := c.url(); !strings.HasSuffix(u, "#"+a) {
			t.Errorf("row of %s: the address is %s", start.ID, u)
		}
		leaf := start
		for nw := newest(leaf); nw != nil; nw = newest(leaf) {
			leaf = nw
		}
		want := anchorsOf(tr, tr.PathTo(leaf.ID))
		checkShown(t, c, "row of "+start.ID, want)
		var top, height float64
		c.eval(`document.getElementById('`+a+`').getBoundingClientRect().top`, &top)
		c.eval(`innerHeight`, &height)
		if top < -2 || top >= height {
			t.Errorf("row of %s: its entry is at %.0f, out of the window", start.ID, top)
		}
		shot := shot(t, c)
		key := strings.Join(want, " ") + "@" + a
		for k, other := range shots {
			if k != key && sameImage(other, shot, navWidth, -1) {
				t.Errorf("the branches at %s and %s look the same", k, key)
			}
		}
		shots[key] = shot
	}
	return clicks
}

// checkToggles clicks each toggle's label twice: what it shows is hidden
// at first, shown after the first click and hidden after the second.
func checkToggles(t *testing.T, c *cdp, name string) {
	t.Helper()
	// Each toggle, what it shows, and the element whose visibility tells
	// that it is on the branch shown.
	for _, tg := range []struct{ id, sel, on string }{
		{"t-thinking", `main details.thinking > .text`, `e.closest('.entry')`},
		{"t-tools", `main details.tool-call > pre`, `e.closest('.entry')`},
		{"t-tools", `main details.output:not([open]) > .pre`, `e.closest('.entry')`},
		{"t-hidden", `main .entry.hidden`, `e.parentElement`},
	} {
		var n int
		c.eval(`[...document.querySelectorAll('`+tg.sel+`')].filter(e => `+tg.on+`.checkVisibility()).length`, &n)
		if n == 0 {
			if name == "rich" {
				t.Errorf("the rich page has no %s on its branch", tg.sel)
			}
			continue
		}
		count := func() int {
			var k int
			c.eval(`[...document.querySelectorAll('`+tg.sel+`')].filter(e => e.checkVisibility()).length`, &k)
			return k
		}
		if testing.Verbose() {
			var which []string
			c.eval(`[...document.querySelectorAll('`+tg.sel+`')].filter(e => `+tg.on+`.checkVisibility()).map(e => e.closest('[id^="e-"]').id + ' ' + e.parentElement.outerHTML.slice(0, 120))`, &which)
			t.Logf("%s: %q", tg.sel, which)
		}
		before := count()
		c.click(`header label[for="` + tg.id + `"]`)
		on := count()
		c.click(`header label[for="` + tg.id + `"]`)
		off := count()
		if before != 0 || on != n || off != 0 {
			t.Errorf("%s: %s shown %d, then %d of %d, then %d", tg.id, tg.sel, before, on, n, off)
		}
	}
}

// sameImage compares two screenshots between the columns from and to
// (-1: the right edge): alike when at most one pixel in a thousand
// differs (the anti-aliasing of a border drawn at another fraction of a
// pixel), where another branch or set of rows changes whole lines.
func sameImage(ra, rb *image.RGBA, from, to int) bool {
	r := ra.Bounds()
	if r != rb.Bounds() {
		return false
	}
	if to < 0 || to > r.Max.X {
		to = r.Max.X
	}
	// Row by row: equal rows are passed over at memory speed, and the
	// count stops as soon as too many pixels differ.
	limit := (to - from) * r.Dy() / 1000
	differ := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		i, j := ra.PixOffset(from, y), ra.PixOffset(to-1, y)+4
		if bytes.Equal(ra.Pix[i:j], rb.Pix[i:j]) {
			continue
		}
		for k := i; k < j; k += 4 {
			if !bytes.Equal(ra.Pix[k:k+4], rb.Pix[k:k+4]) {
				differ++
			}
		}
		if differ > limit {
			return false
		}
	}
	return true
}

// shot is a screenshot of the page, decoded.
func shot(t *testing.T, c *cdp) *image.RGBA {
	t.Helper()
	im, err := png.Decode(bytes.NewReader(c.screenshot()))
	if err != nil {
		t.Fatal(err)
	}
	return toRGBA(im)
}

// toRGBA is im as an *image.RGBA (a screenshot decodes as one, or as
// NRGBA, which is converted).
func toRGBA(im image.Image) *image.RGBA {
	if r, ok := im.(*image.RGBA); ok {
		return r
	}
	b := im.Bounds()
	r := image.NewRGBA(b)
	draw.Draw(r, b, im, b.Min, draw.Src)
	return r
}

// TestSessionPageStatsMatchPi: the head of each session's page has the
// numbers pi's own exported page (pi --export's exportFromFile, its script
// run in chromium) shows in its header: models, messages by role, tool
// calls, tokens and cost.
func TestSessionPageStatsMatchPi(t *testing.T) {
	bin := browser(t)
	files, _ := filepath.Glob("../testdata/demo/*/*.jsonl")
	files = append(files, richSession(t))
	for i, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = abs
	}
	pages := oracle.ExportHTML(t, t.TempDir(), files...)
	c := startCDPWith(t, bin, 1280, 900, true)
	statRE := regexp.MustCompile(`<dt>([a-z ]+)</dt><dd>([^<]*)</dd>`)
	compared := 0
	for i, f := range files {
		name := filepath.Base(f)
		if pages[i] == "" {
			continue
		}
		c.open(pages[i])
		var pi map[string]string
		c.eval(`Object.fromEntries([...document.querySelectorAll('.header-info .info-item')].map(e =>
			[e.querySelector('.info-label').textContent.replace(/:$/, '').toLowerCase(), e.querySelector('.info-value').textContent]))`, &pi)
		if len(pi) == 0 {
			// pi's script throws on some sessions (a message whose
			// content is null): its page has no header to compare.
			t.Logf("%s: pi's page shows no header", name)
			continue
		}
		compared++
		page := SessionHTML(openTree(t, f))
		_, head, _ := bytes.Cut(page, []byte(`<dl class="stats">`))
		head, _, _ = bytes.Cut(head, []byte("</dl>"))
		ours := map[string]string{}
		for _, m := range statRE.FindAllSubmatch(head, -1) {
			ours[string(m[1])] = html.UnescapeString(string(m[2]))
		}
		for _, k := range []string{"models", "messages", "tool calls", "tokens", "cost"} {
			want := pi[k]
			if k == "cost" {
				// pi's page loses the "$" of its template to
				// String.replace's "$$": the number is what counts.
				want = "$" + strings.TrimPrefix(want, "$")
			}
			if ours[k] != want {
				t.Errorf("%s: %s %q, pi's page %q", name, k, ours[k], pi[k])
			}
		}
		t.Logf("%s: %v", name, ours)
	}
	if compared < 10 {
		t.Errorf("only %d pages compared", compared)
	}
}
