package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// home is the home directory the conformance tests give pi and pifs.
const home = "/home/user"

// treeViewSkips lists, per fixture, what of its views is not compared with
// pi 1.6's, and why.
var treeViewSkips = map[string]string{
	// pi's selector takes an entry that is its own parent as its own
	// nearest listed ancestor: the entry hangs under nothing and keeps
	// the layout of the unfiltered tree, and the others are laid out as
	// if it were not there. pifs lists it as the root it is in pi's tree.
	"cycle.jsonl": "layout",
	// pi's tree files every entry without an id under one key
	// (undefined), a single node that pifs does not have: it changes the
	// layout of its siblings.
	"damaged.jsonl": "layout",
	"no-ids.jsonl":  "layout",
}

// sessionFiles returns every .jsonl below dir, sorted.
func sessionFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// treeViewFiles are the sessions the views are checked on: pi's corpus,
// the demo store, the fixtures, and generated sessions with many
// branches, labels and tool calls.
func treeViewFiles(t *testing.T) []string {
	store := t.TempDir()
	oracle.Corpus(t, store)
	files := sessionFiles(t, store)
	files = append(files, sessionFiles(t, filepath.Join("..", "testdata", "demo"))...)
	files = append(files, sessionFiles(t, filepath.Join("..", "testdata", "fixtures"))...)
	gen := t.TempDir()
	for seed := int64(1); seed <= 8; seed++ {
		files = append(files, genSession(t, gen, seed, 60+int(seed)*15))
	}
	return append(files, brokenUTF8Session(t, gen))
}

// brokenUTF8Session writes a session whose texts hold invalid UTF-8: a
// sequence cut short, stray bytes, an encoded surrogate, some before and
// some after where a row's text is cut. pi reads each maximal subpart as
// one U+FFFD; a byte at a time would make more of them.
func brokenUTF8Session(t *testing.T, dir string) string {
	texts := []string{
		"half a euro \xe2\x82 and a cut face \xf0\x9f\x98 then \xff\xfe stray",
		"\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82\xe2\x82 many halves",
		strings.Repeat("words ", 30) + "\xed\xa0\x80 an encoded surrogate \xc3",
		"\xe2\x80",
		" \xe2\x80\xa8 \\u2028",
	}
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"broken-utf8","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/home/u/proj"}` + "\n")
	parent := "null"
	for i, text := range texts {
		id := fmt.Sprintf("b%d", i)
		content := `"` + text + `"`
		if i%2 == 1 {
			content = `[{"type":"text","text":"` + text + `"}]`
		}
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T10:00:%02d.000Z","message":{"role":"user","content":%s,"timestamp":%d}}`+"\n",
			id, parent, i+1, content, 1772359201000+int64(i)*1000)
		parent = `"` + id + `"`
	}
	p := filepath.Join(dir, "broken-utf8.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTreeViewsMatchPi checks every row of every /tree view (pi's leaf and
// every tip as the active leaf, each filter mode) against pi's own
// selector, and prompts.txt against pi's /fork list.
func TestTreeViewsMatchPi(t *testing.T) {
	files := treeViewFiles(t)
	pi := oracle.TreeViewsWith(t, oracle.TreeViewOptions{Home: home, Tips: true, Times: labelNows, TZ: labelZone}, files...)
	var rows, views, prompts int
	for _, f := range files {
		name := filepath.Base(f)
		v := pi[f]
		if v == nil {
			t.Fatalf("%s: no answer from pi", name)
		}
		l, err := sessions.Open(f)
		if v.Error != nil {
			t.Logf("%s: pi not asked: %s", name, *v.Error)
			continue
		}
		if err != nil {
			// Files pi opens but that are no sessions to pifs (empty,
			// not a session) have no views.
			t.Logf("%s: not a session to pifs: %v", name, err)
			continue
		}
		tr := tree.New(l)
		ents := tr.Entries()
		if len(ents) != len(v.IDs) {
			t.Fatalf("%s: pifs has %d entries, pi %d", name, len(ents), len(v.IDs))
		}
		// pi draws random ids when it migrates a v1 file; map by position.
		idmap := map[string]string{}
		for i, id := range v.IDs {
			if s, ok := id.(string); ok {
				idmap[s] = ents[i].ID
			}
		}
		mapID := func(id any) string {
			s, _ := id.(string)
			if m, ok := idmap[s]; ok {
				return m
			}
			return s
		}
		for _, pv := range v.Views {
			views++
			rows += compareView(t, name, tr, pv, mapID, treeViewSkips[name])
		}
		prompts += comparePrompts(t, name, tr, v, mapID)
	}
	t.Logf("compared %d rows in %d views of %d sessions (%d empty), %d prompts, and %d label times", rows, views, len(files), emptyViews, prompts, labelTimes)
	if rows < 5000 || prompts < 100 || emptyViews < 10 || labelTimes < 100 {
		t.Errorf("only %d rows, %d empty views, %d prompts and %d label times compared", rows, emptyViews, prompts, labelTimes)
	}
	for _, kind := range []string{"today", "this year", "another year"} {
		if timeKinds[kind] == 0 {
			t.Errorf("no label time written as %s", kind)
		}
	}
}

// labelZone and labelNows are the local zone and the times, as "now", at
// which label timestamps are compared: the day of the corpus's labels, later
// in their year, a year after.
var (
	labelZone = "America/New_York"
	labelNows = []int64{
		time.Date(2025, 5, 12, 20, 0, 0, 0, time.UTC).UnixMilli(),
		time.Date(2025, 8, 1, 12, 0, 0, 0, time.UTC).UnixMilli(),
		time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC).UnixMilli(),
	}
)

// emptyViews, labelTimes and timeKinds count what the conformance test
// compared.
var (
	emptyViews, labelTimes int
	timeKinds              = map[string]int{}
)

// compareTimes compares a view with label timestamps at each time pi drew
// it with pi's rows, and tree-times.txt's size with its bytes.
func compareTimes(t *testing.T, what string, tr *tree.Tree, pv oracle.TreeView, f tree.Filter, leaf string, s *tree.Selector) {
	t.Helper()
	loc, err := time.LoadLocation(labelZone)
	if err != nil {
		t.Fatal(err)
	}
	for ms, lines := range pv.Times {
		n, _ := strconv.ParseInt(ms, 10, 64)
		now := time.UnixMilli(n)
		var want strings.Builder
		for i, l := range lines {
			want.WriteString(flat(l))
			if len(s.Rows) > 0 {
				want.WriteString("\t" + s.Rows[i].Node.ID)
			}
			want.WriteString("\n")
		}
		got := string(TreeTimesText(tr, leaf, f, home, loc, now))
		if got != want.String() {
			t.Errorf("%s with label times at %s:\npifs %q\npi   %q", what, now.UTC(), got, want.String())
			continue
		}
		if f == tree.FilterDefault {
			if sz := TreeViewSizes(tr, leaf, home, loc, now); sz.Times != int64(len(got)) {
				t.Errorf("%s: tree-times.txt counted %d, is %d", what, sz.Times, len(got))
			}
		}
		for _, r := range s.Rows {
			if l, ok := tr.Label(r.Node.ID); ok && len(l.Timestamp) > 2 {
				labelTimes++
				d := time.UnixMilli(int64(dateValue(l.Timestamp))).In(loc)
				switch n := now.In(loc); {
				case d.Year() != n.Year():
					timeKinds["another year"]++
				case d.YearDay() != n.YearDay():
					timeKinds["this year"]++
				default:
					timeKinds["today"]++
				}
			}
		}
	}
}

// compareView compares one view; it returns the number of rows compared.
func compareView(t *testing.T, name string, tr *tree.Tree, pv oracle.TreeView, mapID func(any) string, skip string) int {
	t.Helper()
	what := name + " " + pv.Mode + " at " + mapID(pv.Leaf)
	if pv.Error != nil && len(pv.Rows) == 0 {
		t.Logf("%s: pi failed: %s", what, *pv.Error)
		return 0
	}
	f, ok := filterNamed(pv.Mode)
	if !ok {
		t.Fatalf("unknown mode %q", pv.Mode)
	}
	s := tr.Selector(mapID(pv.Leaf), f)
	if pv.Empty != nil {
		emptyViews++
		if len(s.Rows) != 0 {
			t.Errorf("%s: pi lists nothing, pifs %d rows", what, len(s.Rows))
			return 0
		}
		got, want := string(TreeText(tr, mapID(pv.Leaf), f, home)), *pv.Empty+"\n"
		if got != want {
			t.Errorf("%s: empty view %q, pi draws %q", what, got, want)
		}
		if n := TreeTextSizes(tr, mapID(pv.Leaf), home)[f]; n != int64(len(got)) {
			t.Errorf("%s: empty view counted %d, is %d", what, n, len(got))
		}
		compareTimes(t, what, tr, pv, f, mapID(pv.Leaf), s)
		return 0
	}
	var want []string
	for _, r := range pv.Rows {
		if r.ID != nil || skip == "" {
			want = append(want, mapID(r.ID))
		}
	}
	var got []string
	for _, r := range s.Rows {
		got = append(got, r.Node.ID)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: rows differ\npifs %q\npi   %q", what, got, want)
		return 0
	}
	if pv.Error != nil {
		t.Logf("%s: pi failed on a row: %s", what, *pv.Error)
	}
	// The view's size, counted with the other modes', against the rows
	// pi draws.
	whole := skip == ""
	var size int
	for k, pr := range pv.Rows {
		if pr.Line == nil {
			whole = false
			break
		}
		size += len(flat(*pr.Line)) + 1 + len(s.Rows[k].Node.ID) + 1
	}
	if n := TreeTextSizes(tr, mapID(pv.Leaf), home)[f]; whole && n != int64(size) {
		t.Errorf("%s: size %d, pi's rows %d bytes", what, n, size)
	}
	n := 0
	k := 0
	for _, pr := range pv.Rows {
		if pr.ID == nil && skip != "" {
			continue
		}
		r := &s.Rows[k]
		k++
		if pr.Text != nil {
			got := string(AppendEntryText(nil, s, r.Node, home))
			if want := flat(*pr.Text); flat(got) != want {
				t.Errorf("%s: row %s text\npifs %q\npi   %q", what, r.Node.ID, got, want)
			}
		}
		if pr.Line == nil || skip == "layout" {
			continue
		}
		got := string(appendTreeRow(nil, s, r, home))
		if want := flat(*pr.Line) + "\t" + r.Node.ID + "\n"; got != want {
			t.Errorf("%s: row %s\npifs %q\npi   %q", what, r.Node.ID, got, want)
		}
		n++
	}
	if whole && pv.Error == nil {
		compareTimes(t, what, tr, pv, f, mapID(pv.Leaf), s)
	}
	return n
}

// flat is the one documented change of a row from pi's: its line feeds,
// carriage returns and tabs are spaces.
func flat(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}

func filterNamed(mode string) (tree.Filter, bool) {
	for _, f := range tree.Filters {
		if f.String() == mode {
			return f, true
		}
	}
	return 0, false
}

// comparePrompts compares prompts.txt with pi's /fork list; it returns the
// number of prompts compared.
func comparePrompts(t *testing.T, name string, tr *tree.Tree, v *oracle.TreeViewsOf, mapID func(any) string) int {
	t.Helper()
	got := string(Prompts(tr))
	if n := PromptsSize(tr); n != int64(len(got)) {
		t.Errorf("%s: PromptsSize %d, len(Prompts) %d", name, n, len(got))
	}
	if v.PromptsError != nil {
		t.Logf("%s: pi's /fork list failed: %s", name, *v.PromptsError)
		return 0
	}
	var want strings.Builder
	for _, p := range v.Prompts {
		if p.EntryID == nil {
			continue // an entry without an id cannot be named
		}
		want.WriteString(jsjson.Trim(flat(p.Text)) + "\t" + mapID(p.EntryID) + "\n")
	}
	if got != want.String() {
		t.Errorf("%s: prompts.txt\npifs %q\npi   %q", name, got, want.String())
	}
	return len(v.Prompts)
}

// TestTreeTextSize: the size of each view, counted with the other four,
// is the length of its bytes, and a view rendered in parts is the rows one
// after the other.
func TestTreeTextSize(t *testing.T) {
	gen := t.TempDir()
	for seed := int64(1); seed <= 5; seed++ {
		n := 200
		if seed == 5 {
			n = parRows * 3 / 2 // views in parts
		}
		l, err := sessions.Open(genSession(t, gen, seed, n))
		if err != nil {
			t.Fatal(err)
		}
		tr := tree.New(l)
		leaves := []string{tr.FileLeafID()}
		if seed < 5 {
			leaves = append(leaves, "")
			for _, n := range tr.Tips() {
				leaves = append(leaves, n.ID)
			}
		}
		for _, leaf := range leaves {
			sizes := TreeTextSizes(tr, leaf, home)
			now := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
			all := TreeViewSizes(tr, leaf, home, time.UTC, now)
			if times := TreeTimesText(tr, leaf, tree.FilterDefault, home, time.UTC, now); all.Times != int64(len(times)) || !slices.Equal(all.Filters, sizes) {
				t.Fatalf("seed %d leaf %q: tree-times.txt counted %d, is %d; sizes %v and %v", seed, leaf, all.Times, len(times), all.Filters, sizes)
			} else if bytes.Equal(times, TreeText(tr, leaf, tree.FilterDefault, home)) && len(tr.LabelOrder()) > 0 {
				t.Fatalf("seed %d: tree-times.txt shows no time", seed)
			}
			for _, f := range tree.Filters {
				b := TreeText(tr, leaf, f, home)
				if n := sizes[f]; n != int64(len(b)) {
					t.Fatalf("seed %d leaf %q %v: size %d, len %d", seed, leaf, f, n, len(b))
				}
				s := tr.Selector(leaf, f)
				var one []byte
				for i := range s.Rows {
					one = appendTreeRow(one, s, &s.Rows[i], home)
				}
				if !bytes.Equal(one, b) {
					t.Fatalf("seed %d leaf %q %v: the view in parts differs from its rows", seed, leaf, f)
				}
				if seed == 5 && f == tree.FilterAll && len(rowParts(len(s.Rows))) < 3 {
					t.Fatalf("%d rows are not cut into parts", len(s.Rows))
				}
				if f == tree.FilterAll && len(b) == 0 {
					t.Fatalf("seed %d: empty view", seed)
				}
				for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
					if bytes.Count(line, []byte("\t")) != 1 {
						t.Fatalf("row %q has not exactly one tab", line)
					}
				}
			}
		}
	}
}

// TestPageSharesTreeRows: the session page's tree and tree.txt's views
// count their rows once for one active leaf, whichever is asked first,
// and both sizes stay exact where pi writes paths from "~" (which the page
// writes whole).
func TestPageSharesTreeRows(t *testing.T) {
	gen := t.TempDir()
	for seed := int64(1); seed <= 3; seed++ {
		file := genSession(t, gen, seed, 300)
		for _, pageFirst := range []bool{false, true} {
			l, err := sessions.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			tr := tree.New(l)
			leaf := tr.FileLeafID()
			var page int64
			var sizes []int64
			if pageFirst {
				page = SessionHTMLSize(tr, home)
				sizes = TreeTextSizes(tr, leaf, home)
			} else {
				sizes = TreeTextSizes(tr, leaf, home)
				page = SessionHTMLSize(tr, home)
			}
			all := tr.Selector(leaf, tree.FilterAll)
			all.Memo(rowSizesKey{home}, func() any {
				t.Fatalf("seed %d: the rows were not counted once for both", seed)
				return nil
			})
			if n := len(SessionHTML(tr)); page != int64(n) {
				t.Fatalf("seed %d (page first %v): page counted %d, is %d", seed, pageFirst, page, n)
			}
			for _, f := range tree.Filters {
				b := TreeText(tr, leaf, f, home)
				if sizes[f] != int64(len(b)) {
					t.Fatalf("seed %d (page first %v) %v: counted %d, is %d", seed, pageFirst, f, sizes[f], len(b))
				}
				if f == tree.FilterAll && !bytes.Contains(b, []byte("~/proj")) {
					t.Fatalf("seed %d: no row shows a path from ~", seed)
				}
			}
		}
	}
}

// cpuTime is the CPU time this process has used, on every core: on a
// machine shared with other work, a steadier measure than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkTreeViews renders each view of the big session at its leaf,
// counts its size, and renders prompts.txt and, for comparison,
// context.json.
func BenchmarkTreeViews(b *testing.B) {
	t := big(b)
	for _, f := range tree.Filters {
		b.Run(f.FileName(), func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				out := TreeText(t, t.FileLeafID(), f, home)
				b.SetBytes(int64(len(out)))
			}
			reportCPU(b, start)
		})
	}
	b.Run("sizes", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			// A tree keeps what its rows count to: count them afresh.
			all := t.Selector(t.FileLeafID(), tree.FilterAll)
			rs := countRows(all, home)
			n := rs.nav
			for _, k := range rs.body {
				n += k
			}
			b.SetBytes(n)
		}
		reportCPU(b, start)
	})
	b.Run("prompts.txt", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			out := Prompts(t)
			b.SetBytes(int64(len(out)))
		}
		reportCPU(b, start)
	})
	b.Run("selector", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			t.Selector(t.FileLeafID(), tree.FilterDefault)
		}
		reportCPU(b, start)
	})
	b.Run("context.json", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			out := ContextJSON(t.Context())
			b.SetBytes(int64(len(out)))
		}
		reportCPU(b, start)
	})
}
