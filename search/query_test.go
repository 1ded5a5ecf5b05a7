package search

import (
	"context"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
)

func TestParse(t *testing.T) {
	q, err := Parse(`Manager "hash map" sess* -cmd a OR b* OR "c d" role:user -tool:bash name:"auth fix" since:2025-05-01 until:2025-05-01T10:30Z`, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Clauses) != 5 {
		t.Fatalf("%+v", q.Clauses)
	}
	want := []Clause{
		{Any: []Term{{Kind: Substring, Text: "Manager"}}},
		{Any: []Term{{Kind: Phrase, Text: "hash map", Words: []string{"hash", "map"}}}},
		{Any: []Term{{Kind: Prefix, Text: "sess", Words: []string{"sess"}}}},
		{Any: []Term{{Kind: Substring, Text: "cmd"}}, Not: true},
		{Any: []Term{{Kind: Phrase, Text: "a", Words: []string{"a"}}, {Kind: Prefix, Text: "b", Words: []string{"b"}}, {Kind: Phrase, Text: "c d", Words: []string{"c", "d"}}}},
	}
	for i, c := range want {
		got := q.Clauses[i]
		if got.Not != c.Not || len(got.Any) != len(c.Any) {
			t.Fatalf("clause %d: %+v, want %+v", i, got, c)
		}
		for j := range c.Any {
			if got.Any[j].Kind != c.Any[j].Kind || got.Any[j].Text != c.Any[j].Text || strings.Join(got.Any[j].Words, " ") != strings.Join(c.Any[j].Words, " ") {
				t.Fatalf("clause %d term %d: %+v, want %+v", i, j, got.Any[j], c.Any[j])
			}
		}
	}
	if len(q.Filters) != 3 || q.Filters[0].Key != KeyRole || q.Filters[1].Key != KeyTool || !q.Filters[1].Not ||
		q.Filters[2].Key != KeyName || q.Filters[2].Values[0] != "auth fix" {
		t.Fatalf("%+v", q.Filters)
	}
	if q.Since != float64(time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC).UnixMilli()) ||
		q.Until != float64(time.Date(2025, 5, 1, 10, 31, 0, 0, time.UTC).UnixMilli()) {
		t.Fatalf("since %v until %v", q.Since, q.Until)
	}
	// Dates in the caller's zone.
	loc := time.FixedZone("x", 2*3600)
	q, err = Parse("until:2025-05-01", loc)
	if err != nil || q.Until != float64(time.Date(2025, 5, 2, 0, 0, 0, 0, loc).UnixMilli()) || !math.IsNaN(q.Since) {
		t.Fatalf("%v %v", q, err)
	}
	// Repeated filters of a kind are alternatives; words stay words.
	q, err = Parse("role:user ROLE:Bash http://x foo:bar OR or", nil)
	if err != nil || len(q.Filters) != 1 || strings.Join(q.Filters[0].Values, ",") != "user,bash" || len(q.Clauses) != 2 {
		t.Fatalf("%+v %v", q, err)
	}
}

func TestParseErrors(t *testing.T) {
	for q, why := range map[string]string{
		"":                                  "empty",
		"   ":                               "empty",
		`"hash map`:                         "not closed",
		`name:"auth`:                        "not closed",
		"OR foo":                            "OR must stand",
		"foo OR":                            "OR must stand",
		"foo OR OR bar":                     "OR joins",
		"a\x00b":                            "NUL",
		"foo OR role:user":                  "OR joins",
		"role:user OR foo":                  "not filters",
		"-foo OR bar":                       "not exclusions",
		"foo OR -bar":                       "OR joins",
		"- foo":                             "followed by",
		"foo -":                             "followed by",
		"-foo":                              "only excludes",
		"-foo -role:user":                   "only excludes",
		"role:robot":                        "a role is one of",
		"role:":                             "needs a value",
		`name:""`:                           "needs a value",
		"since:yesterday":                   "a date is written",
		"since:2025-13-01":                  "a date is written",
		"since:2025-05-01 since:2025-05-02": "given twice",
		"-since:2025-05-01 foo":             "cannot be excluded",
		"*":                                 "a prefix must hold",
		"foo**":                             "a prefix must hold",
		"--*":                               "must hold a letter",
		`""`:                                "phrase must hold",
		`"--"`:                              "phrase must hold",
		".":                                 "must hold a letter",
		`"a"b`:                              "a space must follow",
		"\xff\xfe":                          "UTF-8",
		strings.Repeat("a ", 40):            "more than",
		strings.Repeat("x", 2000):           "longer than",
	} {
		_, err := Parse(q, nil)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error saying %q", q, err, why)
		}
	}
}

// goTexts are the store's entries as the index takes them (Extract), with
// their labels and session names as pi gives them, for a scan.
func goTexts(t testing.TB, store string) []piEntry {
	var out []piEntry
	for _, path := range storeFiles(t, store) {
		rel, _ := filepath.Rel(store, path)
		var es []piEntry
		labels := map[string]string{}
		var name *string
		sessions.ScanFrom(path, 0, nil, func(e *sessions.Entry, _ bool) {
			d := Extract(e.Raw)
			switch d.Role {
			case RoleLabel:
				if d.Label == "" {
					delete(labels, d.Target)
				} else {
					labels[d.Target] = d.Label
				}
			case RoleName:
				n := d.Name
				name = &n
				if n == "" {
					name = nil
				}
			}
			if e.ID == "" {
				return
			}
			pe := piEntry{File: rel, ID: e.ID, Role: d.Role, Text: d.Text, Tools: d.Tools, Model: d.Model}
			if !math.IsNaN(e.Time) {
				tm := e.Time
				pe.Time = &tm
			}
			es = append(es, pe)
		})
		for i := range es {
			if l, ok := labels[es[i].ID]; ok {
				es[i].Label = l
			}
			es[i].Name = name
		}
		out = append(out, es...)
	}
	return out
}

var fuzzIndex struct {
	once  sync.Once
	x     *Index
	store string
	texts []piEntry
}

// FuzzQuery: any query either is refused with a reason or runs, and then
// finds exactly what a scan with the syntax's meaning finds in the planted
// sessions.
func FuzzQuery(f *testing.F) {
	for _, q := range oracleQueries {
		f.Add(q)
	}
	for _, q := range []string{`"`, `a OR`, `-`, `role:`, `*`, `"a b"*`, `x:y:z`, `"" OR a`, `a "b" c`, "\t\n", "OR", "-OR",
		`名前:x`, `"😀 emoji"`, "ǅungla", "İstanbul", "ß straße", "e\u0301te", "\u0301\u0301\u0301", "a\x00b"} {
		f.Add(q)
	}
	fuzzIndex.once.Do(func() {
		fuzzIndex.store = f.TempDir()
		plant(f, fuzzIndex.store)
		x, err := Open(Options{Dir: f.TempDir(), Store: fuzzIndex.store})
		if err != nil {
			f.Fatal(err)
		}
		x.Start(sessions.NewIndex(fuzzIndex.store))
		<-x.Idle()
		fuzzIndex.x = x
		fuzzIndex.texts = goTexts(f, fuzzIndex.store)
	})
	x, store, texts := fuzzIndex.x, fuzzIndex.store, fuzzIndex.texts
	f.Fuzz(func(t *testing.T, qs string) {
		q, err := Parse(qs, time.UTC)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("%q: %T %v", qs, err, err)
			}
			return
		}
		res, err := x.Search(context.Background(), q, Scope{}, 1<<20)
		if err != nil {
			t.Fatalf("%q: %v", qs, err)
		}
		var got, want []string
		for _, h := range res.Hits {
			rel, _ := filepath.Rel(store, h.Path)
			got = append(got, rel+" "+h.Entry)
		}
		for _, e := range texts {
			if bruteMatch(q, e) {
				want = append(want, e.File+" "+e.ID)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q: index %q\nscan %q", qs, got, want)
		}
	})
}
