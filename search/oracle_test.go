package search

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
)

// piEntry is an entry as searchtext.mjs gives it: the text pi's code
// extracts from it, and the fields the filters look at.
type piEntry struct {
	File  string   `json:"file"`
	ID    string   `json:"id"`
	Type  *string  `json:"type"`
	Time  *float64 `json:"time"`
	Role  string   `json:"role"`
	Text  string   `json:"text"`
	Cut   int      `json:"cut"`
	Tools []string `json:"tools"`
	Model string   `json:"model"`
	Label any      `json:"label"`
	Name  *string  `json:"name"`
}

// piTexts runs searchtext.mjs over a store.
func piTexts(t *testing.T, store string) []piEntry {
	t.Helper()
	out := oracle.Node(t, "searchtext.mjs", store)
	var es []piEntry
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e piEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("searchtext.mjs: %v: %s", err, sc.Text())
		}
		es = append(es, e)
	}
	return es
}

// oracleStore is a store of planted sessions, pi's own corpus (written by
// pi's SessionManager) and a few generated sessions.
func oracleStore(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	plant(t, store)
	oracle.Corpus(t, store)
	if _, err := gen.Store(store, gen.StoreSpec{Sessions: 6, Projects: 2, Seed: 3, MinEntries: 20, MaxExtra: 60,
		AvgBytes: 400, NeedleEvery: 3, Needle: "NEEDLE-7f3a9c"}); err != nil {
		t.Fatal(err)
	}
	return store
}

func openIndex(t testing.TB, store string, o Options) *Index {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	o.Store = store
	o.Log = func(m string) { t.Log(m) }
	o.Info = o.Log
	x, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	x.mergeSettle = 0
	return x
}

// build indexes the store and waits for the builder.
func build(t testing.TB, x *Index, store string) *sessions.Index {
	t.Helper()
	idx := sessions.NewIndex(store)
	x.Start(idx)
	<-x.Idle()
	return idx
}

// TestExtractAsPi: the text the index holds of every entry of the store is
// the text pi's code extracts (searchtext.mjs), with the same role, tools,
// model and time.
func TestExtractAsPi(t *testing.T) {
	store := oracleStore(t)
	pi := piTexts(t, store)
	byKey := map[string]piEntry{}
	for _, e := range pi {
		byKey[e.File+"\x00"+e.ID] = e
	}
	n, texts := 0, 0
	for _, path := range storeFiles(t, store) {
		rel, _ := filepath.Rel(store, path)
		// Read as the build reads (long lines in pieces, their long
		// strings cut), so that what it cuts is checked too.
		_, _, err := sessions.ScanCut(path, 0, MaxPart, func(e *sessions.Entry, _ bool, cut int64) {
			if e.ID == "" {
				return
			}
			want, ok := byKey[rel+"\x00"+e.ID]
			if !ok {
				t.Errorf("%s %s: not in pi's entries", rel, e.ID)
				return
			}
			d := Extract(e.Raw)
			d.Cut += int(cut)
			n++
			if d.Text != "" {
				texts++
			}
			if d.Role != want.Role || d.Text != want.Text || d.Cut != want.Cut || d.Model != want.Model || !slices.Equal(d.Tools, nonNil(want.Tools)) {
				t.Errorf("%s %s:\n pifs %q %q cut %d tools %q model %q\n   pi %q %q cut %d tools %q model %q",
					rel, e.ID, d.Role, d.Text, d.Cut, d.Tools, d.Model, want.Role, want.Text, want.Cut, want.Tools, want.Model)
			}
			wt := math.NaN()
			if want.Time != nil {
				wt = *want.Time
			}
			if !(e.Time == wt || math.IsNaN(e.Time) && math.IsNaN(wt)) {
				t.Errorf("%s %s: time %v, pi %v", rel, e.ID, e.Time, wt)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != len(pi) || texts < 100 {
		t.Fatalf("compared %d entries (%d with text) of pi's %d", n, texts, len(pi))
	}
	t.Logf("%d entries, %d with text", n, texts)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func storeFiles(t testing.TB, store string) []string {
	var out []string
	for _, pat := range []string{"*.jsonl", "*/*.jsonl"} {
		m, err := filepath.Glob(filepath.Join(store, pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	sort.Strings(out)
	return out
}

// oracleQueries cover every kind of term and filter, on the planted words,
// pi's corpus and the generated text.
var oracleQueries = []string{
	// words, any case and accents, inside identifiers and paths, CJK
	"manager", "Manager", "SESSIONMANAGER", "sessionmanager", "main.go", "cmd/main.go", "crème", "creme brulee",
	"CRÈME", "ca va", "Émile zoe", "中文测", "测试句子", "検索す", "日本語", "xylophone", "headword", "middleword", "farhead", "farmiddle", "fartail",
	"tailword", "zebra", "quokka", "koala", "wombat", "platypus", "narwhal", "axolotl", "ocelot", "capybara",
	"snake_case", "x²y", "index-key-first", "NEEDLE-7f3a9c", "needle", "quick brown", "compiling tests",
	"filesystem", "ilesyst", "hello", "fix", "the", "zzzzqqq",
	// short words are whole words
	"go", "GO", "42", "a", "x y", "ok",
	// phrases
	`"hash map"`, `"cmd main go"`, `"main go"`, `"lazy dog"`, `"the quick brown"`, `"session manager"`,
	`"sessionmanager"`, `"snake case"`,
	// prefixes
	"sess*", "milest*", "quok*", "snake_c*", "hash*", `"hash m"*`, "bench*", "x*",
	// exclusions
	"manager -cmd", `main.go -"hash map"`, "quick -fox", "manager -role:tool", "manager -sess*",
	"zebra -flat", "the -the",
	// OR
	"wombat OR quokka", "zebra OR \"hash map\" xylophone", "koala OR ocelot OR narwhal", "go OR manager",
	"sess* OR capybara",
	// filters alone and with words
	"role:user", "role:assistant manager", "role:tool manager", "role:bash", "role:summary", "role:custom",
	"role:name", "role:label", "role:user role:bash", "tool:read", "tool:bash manager", "tool:edit", "TOOL:Write",
	"model:opus", "model:anthropic/", "model:gpt -role:user", "-model:opus manager", "since:2025-05-01 manager",
	"until:2025-04-30", "since:2025-05-01 until:2025-05-01", "since:2025-05-02T00:00:03Z", "label:milestone",
	"label:new-label", "label:old-label", "-label:milestone manager", "name:auth", "name:unicode", "name:ÜNÏ",
	"-name:auth manager", "-tool:read manager", `name:"beta renamed"`, "name:beta work", "label:milestone-two",
}

// TestQueriesAsBruteForce: for every query, the entries the index finds are
// those a scan of pi's extracted text finds with the syntax's meaning.
func TestQueriesAsBruteForce(t *testing.T) {
	store := oracleStore(t)
	pi := piTexts(t, store)
	x := openIndex(t, store, Options{})
	build(t, x, store)
	checkQueries(t, x, store, pi, oracleQueries, Scope{})
	// One project, and a visibility filter.
	checkQueries(t, x, store, pi, []string{"manager", "role:user", "crème", "sess*"}, Scope{Project: "--home-user-alpha--"})
	hide := func(path string) bool { return !strings.Contains(path, "bbbb2222") }
	checkQueries(t, x, store, pi, []string{"manager", "role:user", "\"hash map\"", "name:beta"}, Scope{Visible: hide})
}

func checkQueries(t *testing.T, x *Index, store string, pi []piEntry, queries []string, scope Scope) {
	t.Helper()
	projects := projectsOf(t, store)
	found := 0
	for _, qs := range queries {
		q, err := Parse(qs, nil)
		if err != nil {
			t.Errorf("%q: %v", qs, err)
			continue
		}
		want := map[string]bool{}
		for _, e := range pi {
			if scope.Project != "" && projects[e.File] != scope.Project {
				continue
			}
			if scope.Visible != nil && !scope.Visible(filepath.Join(store, e.File)) {
				continue
			}
			if bruteMatch(q, e) {
				want[e.File+" "+e.ID] = true
			}
		}
		res, err := x.Search(context.Background(), q, scope, 1<<20)
		if err != nil {
			t.Errorf("%q: %v", qs, err)
			continue
		}
		got := map[string]bool{}
		sessions := map[string]bool{}
		for _, h := range res.Hits {
			rel, _ := filepath.Rel(store, h.Path)
			got[rel+" "+h.Entry] = true
			sessions[h.Path] = true
		}
		if res.Total != len(res.Hits) || !res.Complete {
			t.Errorf("%q: total %d, %d hits, complete %v", qs, res.Total, len(res.Hits), res.Complete)
		}
		if len(res.Sessions) != len(sessions) {
			t.Errorf("%q: %d sessions, hits in %d", qs, len(res.Sessions), len(sessions))
		}
		if len(want) > 0 {
			found++
		}
		var missing, extra []string
		for k := range want {
			if !got[k] {
				missing = append(missing, k)
			}
		}
		for k := range got {
			if !want[k] {
				extra = append(extra, k)
			}
		}
		if len(missing)+len(extra) > 0 {
			sort.Strings(missing)
			sort.Strings(extra)
			t.Errorf("%q (scope %q): index finds %d, the scan %d\n missing %q\n extra %q", qs, scope.Project, len(got), len(want), missing, extra)
		}
	}
	if found < len(queries)*2/3 {
		t.Errorf("only %d of %d queries find anything: the test checks little", found, len(queries))
	}
}

// projectsOf maps each file of the store to its project as the store's
// index lists it (flat files in their cwd's).
func projectsOf(t *testing.T, store string) map[string]string {
	idx := sessions.NewIndex(store)
	out := map[string]string{}
	for _, f := range idx.All() {
		rel, _ := filepath.Rel(store, f.Path)
		out[rel] = f.Project
	}
	return out
}

// bruteMatch is the query syntax's meaning, by a scan: words of 3+
// characters are substrings of the folded text, shorter words, phrases
// and prefixes runs of the text's words.
func bruteMatch(q *Query, e piEntry) bool {
	if e.Role == "" {
		return false
	}
	text := Fold(e.Text)
	words := Words(e.Text)
	term := func(t Term) bool {
		if e.Text == "" {
			return false
		}
		switch t.Kind {
		case Substring:
			return strings.Contains(text, Fold(t.Text))
		default:
			return hasRun(words, t.Words, t.Kind == Prefix)
		}
	}
	for _, c := range q.Clauses {
		any := false
		for _, t := range c.Any {
			any = any || term(t)
		}
		if any == c.Not {
			return false
		}
	}
	for _, f := range q.Filters {
		var ok bool
		switch f.Key {
		case KeyRole:
			ok = slices.Contains(f.Values, e.Role)
		case KeyTool:
			for _, tool := range e.Tools {
				ok = ok || slices.Contains(f.Values, tool)
			}
		case KeyModel:
			ok = e.Model != "" && anyIn(Fold(e.Model), f.Values)
		case KeyLabel:
			ok = e.Label != nil && anyIn(Fold(labelString(e.Label)), f.Values)
		case KeyName:
			ok = e.Name != nil && anyIn(Fold(*e.Name), f.Values)
		}
		if ok == f.Not {
			return false
		}
	}
	if !math.IsNaN(q.Since) && (e.Time == nil || *e.Time < q.Since) {
		return false
	}
	if !math.IsNaN(q.Until) && (e.Time == nil || *e.Time >= q.Until) {
		return false
	}
	return true
}

func labelString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// hasRun tells whether want occurs in words as a run (the last word only
// beginning its word when prefix).
func hasRun(words, want []string, prefix bool) bool {
	for i := 0; i+len(want) <= len(words); i++ {
		ok := true
		for j, w := range want {
			if j == len(want)-1 && prefix {
				ok = ok && strings.HasPrefix(words[i+j], w)
			} else {
				ok = ok && words[i+j] == w
			}
		}
		if ok {
			return true
		}
	}
	return false
}

var _ = fmt.Sprint
