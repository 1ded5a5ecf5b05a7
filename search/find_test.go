package search

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestProgress: after a build, the progress counts every session and
// byte of the store as done, and answers say they are complete.
func TestProgress(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	x := openIndex(t, store, Options{})
	if x.Progress().Complete {
		t.Fatal("complete before a build")
	}
	res, err := x.SearchString(context.Background(), "manager", nil, Scope{}, 0)
	if err != nil || res.Complete || res.Total != 0 {
		t.Fatalf("before the build: %+v %v", res, err)
	}
	build(t, x, store)
	var size int64
	for _, f := range storeFiles(t, store) {
		size += fileSize(t, f)
	}
	p := x.Progress()
	if !p.Listed || !p.Complete || p.Sessions != 4 || p.SessionsDone != 4 || p.Bytes != size || p.BytesDone != size || p.Rate <= 0 || p.Left != 0 {
		t.Fatalf("%+v, store of %d bytes", p, size)
	}
	res, err = x.SearchString(context.Background(), "manager", nil, Scope{}, 0)
	if err != nil || !res.Complete || res.Total != 7 {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestHits: what a hit says of its entry and session; the excerpt is the
// text as written around the match, on one line; sessions come with their
// best hit, and the limit bounds the hits, not the count.
func TestHits(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	x := openIndex(t, store, Options{})
	build(t, x, store)
	res, err := x.SearchString(context.Background(), "creme", nil, Scope{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Ranked || res.Total != 2 || len(res.Sessions) != 2 {
		t.Fatalf("%+v", res)
	}
	for _, h := range res.Hits {
		if !strings.Contains(h.Excerpt, "Crème") || strings.ContainsAny(h.Excerpt, "\n\t") || h.Role != RoleUser || h.Score <= 0 {
			t.Errorf("%+v", h)
		}
	}
	h := res.Hits[1]
	if h.Entry != "aaaa0001" || h.Project != "--home-user-alpha--" || h.Session != "2025-04-30T22-00-00-000Z_aaaa1111-0000-4000-8000-000000000001" ||
		!strings.HasSuffix(h.Path, h.Session+".jsonl") || h.Time != float64(time.Date(2025, 4, 30, 22, 0, 1, 0, time.UTC).UnixMilli()) {
		t.Errorf("%+v", h)
	}
	// A flat session is in its cwd's project.
	if f := res.Hits[0]; f.Entry != "cccc0001" || f.Project != "--home-user-alpha--" {
		t.Errorf("%+v", f)
	}
	// The excerpt of a long text is cut around the match.
	res, _ = x.SearchString(context.Background(), "tailword", nil, Scope{}, 0)
	if e := res.Hits[0].Excerpt; !strings.HasPrefix(e, "…") || !strings.HasSuffix(e, "tailword") || len(e) > ExcerptWidth+10 {
		t.Errorf("%q", e)
	}
	// CJK text and a match after a multibyte prefix.
	res, _ = x.SearchString(context.Background(), "検索す", nil, Scope{}, 0)
	if e := res.Hits[0].Excerpt; !strings.Contains(e, "テキストを検索する") {
		t.Errorf("%q", e)
	}
	// The limit.
	res, _ = x.SearchString(context.Background(), "role:user", nil, Scope{}, 3)
	if res.Total != 8 || len(res.Hits) != 3 || res.Ranked || len(res.Sessions) != 4 {
		t.Fatalf("%+v", res)
	}
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i].Time > res.Hits[i-1].Time {
			t.Errorf("not newest first: %+v", res.Hits)
		}
	}
	if b := res.Sessions[0].Best; b.Entry != "cccc0001" || res.Sessions[0].Hits != 1 {
		t.Errorf("%+v", res.Sessions[0])
	}
}

// TestUnranked: a query matching more than MaxRanked entries lists them
// newest first, unranked, and still counts them all (MaxRanked lowered to
// 50 here).
func TestUnranked(t *testing.T) {
	store := t.TempDir()
	s := newSession(t, "abcd0000-0000-4000-8000-000000000001", "/home/user/u", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
	const n = 55
	for i := 0; i < n; i++ {
		s.user("", fmt.Sprintf("common word %d", i))
	}
	s.write(store + "/--home-user-u--/u.jsonl")
	x := openIndex(t, store, Options{})
	x.maxRanked = 50
	build(t, x, store)
	res, err := x.SearchString(context.Background(), "common", nil, Scope{}, 10)
	if err != nil || res.Ranked || res.Total != n || len(res.Hits) != 10 || res.Hits[0].Score != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	for i, h := range res.Hits {
		if !strings.HasSuffix(h.Excerpt, fmt.Sprint(n-1-i)) {
			t.Fatalf("not newest first: %d: %q", i, h.Excerpt)
		}
	}
	res, _ = x.SearchString(context.Background(), "common \"word 7\"", nil, Scope{}, 10)
	if !res.Ranked || res.Total != 1 {
		t.Fatalf("%+v", res)
	}
	res, _ = x.SearchString(context.Background(), "common -word", nil, Scope{}, 10)
	if res.Total != 0 {
		t.Fatalf("%+v", res)
	}
}

// TestReadme: the README says the limits the code keeps.
func TestReadme(t *testing.T) {
	for _, s := range []string{fmt.Sprintf("%d KiB", MaxPart>>10), fmt.Sprintf("%d KiB", KeepPart>>10), "20,000"} {
		if !strings.Contains(README, s) {
			t.Errorf("README does not say %q", s)
		}
	}
	if MaxRanked != 20000 {
		t.Errorf("README says 20,000, MaxRanked is %d", MaxRanked)
	}
	for _, r := range Roles {
		if !strings.Contains(README, r) {
			t.Errorf("README does not name role %s", r)
		}
	}
}

// TestFilterPlans: a query of filters alone that narrows to few entries
// (a tool, a time range, a label, a session's name) reads them from an
// index, not by a scan of the entries; a query with words to find is led
// by the text index.
func TestFilterPlans(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	x := openIndex(t, store, Options{})
	build(t, x, store)
	for qs, want := range map[string]string{
		"tool:bash":                         "tools_name",
		"since:2025-05-01 until:2025-05-01": "entries_time",
		"tool:bash since:2025-05-01":        "entries_time",
		"label:milestone":                   "INTEGER PRIMARY KEY",
		"name:auth":                         "INTEGER PRIMARY KEY",
		"manager tool:read role:user":       "SCAN tri VIRTUAL TABLE",
		`"hash map" -role:tool`:             "SCAN words VIRTUAL TABLE",
	} {
		q, err := Parse(qs, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x.compile(context.Background(), q, Scope{}, false)
		if err != nil {
			t.Fatal(err)
		}
		plan := queryPlan(t, x, c.sql, c.args...)
		if !strings.Contains(plan, want) || strings.Contains(plan, "SCAN entries") {
			t.Errorf("%s: %s\n  %s", qs, c.sql, plan)
		}
	}
}
