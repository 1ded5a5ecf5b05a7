package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestUnranked: a query matching more than MaxRanked entries (lowered
// to 50 here) is answered from the newest sessions' 50 matches, newest
// first, unranked, whatever order the sessions were indexed in; one
// matching fewer, or fewer in its scope, is counted whole and ranked.
func TestUnranked(t *testing.T) {
	store := t.TempDir()
	day := func(d int) time.Time { return time.Date(2025, 5, d, 0, 0, 0, 0, time.UTC) }
	// Indexed in the order of their names: the oldest last.
	for _, s := range []struct {
		name, id string
		began    time.Time
		n        int
	}{
		{"a", "aaaa0000-0000-4000-8000-000000000001", day(3), 30},
		{"b", "bbbb0000-0000-4000-8000-000000000001", day(2), 30},
		{"c", "cccc0000-0000-4000-8000-000000000001", day(1), 30},
	} {
		ss := newSession(t, s.id, "/home/user/u", s.began, 3)
		for i := 0; i < s.n; i++ {
			ss.user("", fmt.Sprintf("common word %s%d", s.name, i))
		}
		ss.write(store + "/--home-user-u--/" + s.name + ".jsonl")
	}
	// An older session in another project.
	d := newSession(t, "dddd0000-0000-4000-8000-000000000001", "/home/user/v", day(1).Add(-time.Hour), 3)
	for i := 0; i < 10; i++ {
		d.user("", fmt.Sprintf("common word d%d", i))
	}
	d.write(store + "/--home-user-v--/d.jsonl")
	x := openIndex(t, store, Options{})
	x.maxRanked = 50
	build(t, x, store)
	res, err := x.SearchString(context.Background(), "common", nil, Scope{}, 40)
	if err != nil || res.Ranked || !res.More || res.Total != 50 || len(res.Hits) != 40 || res.Hits[0].Score != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	// a's 30, then b's last 20: newest first.
	for i, h := range res.Hits {
		want := fmt.Sprintf("a%d", 29-i)
		if i >= 30 {
			want = fmt.Sprintf("b%d", 59-i)
		}
		if !strings.HasSuffix(h.Excerpt, want) {
			t.Fatalf("not newest first: %d: %q, want %s", i, h.Excerpt, want)
		}
	}
	if len(res.Sessions) != 2 || res.Sessions[0].Best.Session != "a" || res.Sessions[1].Best.Session != "b" || res.Sessions[1].Hits != 20 {
		t.Fatalf("%+v", res.Sessions)
	}
	if c := Caveat(res); !strings.Contains(c, "more than 50") {
		t.Errorf("caveat %q", c)
	}
	// The project's own 10, all of them: the 50 are counted in scope.
	res, _ = x.SearchString(context.Background(), "common", nil, Scope{Project: "--home-user-v--"}, 40)
	if res.More || !res.Ranked || res.Total != 10 || len(res.Sessions) != 1 {
		t.Fatalf("in a project: %+v", res)
	}
	res, _ = x.SearchString(context.Background(), "common \"word c7\"", nil, Scope{}, 10)
	if !res.Ranked || res.More || res.Total != 1 {
		t.Fatalf("%+v", res)
	}
	res, _ = x.SearchString(context.Background(), "common -word", nil, Scope{}, 10)
	if res.Total != 0 || res.More {
		t.Fatalf("%+v", res)
	}
}

// TestFileByFile: a query in a scope of few sessions, after reading 5
// rows of others (lowered from fileByFile), reads its sessions one at a
// time, newest first: the same hits as a pass over all, not ranked, one
// statement a session left.
func TestFileByFile(t *testing.T) {
	store := t.TempDir()
	day := func(d int) time.Time { return time.Date(2025, 5, d, 0, 0, 0, 0, time.UTC) }
	for d := 1; d <= 6; d++ {
		// Projects u and v take turns: v's sessions are days 2, 4 and 6.
		p := "u"
		if d%2 == 0 {
			p = "v"
		}
		s := newSession(t, fmt.Sprintf("%04d0000-0000-4000-8000-000000000001", d), "/home/user/"+p, day(d), 3)
		for i := 0; i < 10; i++ {
			s.user("", fmt.Sprintf("common word %s%d-%d", p, d, i))
		}
		s.write(fmt.Sprintf("%s/--home-user-%s--/%d.jsonl", store, p, d))
	}
	x := openIndex(t, store, Options{})
	build(t, x, store)
	scope := Scope{Project: "--home-user-v--"}
	whole, err := x.SearchString(context.Background(), "common", nil, scope, 100)
	if err != nil || whole.Total != 30 || !whole.Ranked {
		t.Fatalf("%+v %v", whole, err)
	}
	x.byFileAfter = 5
	s0 := x.Stats().Statements
	res, err := x.SearchString(context.Background(), "common", nil, scope, 100)
	if err != nil || res.Total != 30 || res.Ranked || res.More || len(res.Sessions) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	// Day 6 (v) read whole, 5 rows of day 5 (u), then days 4 and 2 one
	// at a time: the statement of the pass, two for the files, and the
	// entries' fields.
	if n := x.Stats().Statements - s0; n != 4 {
		t.Errorf("%d statements, want 4", n)
	}
	got := map[string]bool{}
	for _, h := range res.Hits {
		got[h.Entry] = true
	}
	for i, h := range whole.Hits {
		if !got[h.Entry] {
			t.Errorf("%s missing", h.Entry)
		}
		if i > 0 && newer(res.Hits[i].Time, res.Hits[i-1].Time) {
			t.Errorf("not newest first at %d", i)
		}
	}
	// Words to exclude, read beside the files' rows: one entry of day 4
	// and one of day 6 out.
	res, err = x.SearchString(context.Background(), "common -v4-1 -v6-9", nil, scope, 100)
	if err != nil || res.Total != 28 || res.More {
		t.Fatalf("%+v %v", res, err)
	}
	for _, h := range res.Hits {
		if strings.HasSuffix(h.Excerpt, "v4-1") || strings.HasSuffix(h.Excerpt, "v6-9") {
			t.Errorf("%s not excluded", h.Excerpt)
		}
	}
}

// TestExclusionsRead: a query with words to exclude reads at most
// notsFactor × MaxRanked rows of what it looks for, the newest, and
// answers from those; below that it is whole.
func TestExclusionsRead(t *testing.T) {
	store := t.TempDir()
	s := newSession(t, "abcd0000-0000-4000-8000-000000000001", "/home/user/u", time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), 3)
	for i := 0; i < 40; i++ {
		word := "dropped"
		if i%5 == 0 {
			word = "kept"
		}
		s.user("", fmt.Sprintf("alpha %s %d", word, i))
	}
	s.write(store + "/--home-user-u--/u.jsonl")
	x := openIndex(t, store, Options{})
	build(t, x, store)
	// 12 × 2 = 24 rows read: 39…16, of which 35, 30, 25 and 20 are kept.
	x.maxRanked = 12
	for _, q := range []string{"alpha -dropped", "alpha -ropp", "alpha -dropped -zzz"} {
		res, err := x.SearchString(context.Background(), q, nil, Scope{}, 40)
		if err != nil || !res.More || res.Visited != 24 || res.Total != 4 || res.Hits[0].Excerpt != "alpha kept 35" || res.Hits[3].Excerpt != "alpha kept 20" {
			t.Fatalf("%s: %+v %v", q, res, err)
		}
		if c := Caveat(res); !strings.Contains(c, "in more than 24 entries") {
			t.Errorf("caveat %q", c)
		}
	}
	// 20 × 2 = 40: all of them.
	x.maxRanked = 20
	res, _ := x.SearchString(context.Background(), "alpha -dropped", nil, Scope{}, 40)
	if res.More || res.Visited != 0 || res.Total != 8 || !res.Ranked {
		t.Fatalf("%+v", res)
	}
}

// TestReadme: the README says the limits the code keeps.
func TestReadme(t *testing.T) {
	for _, s := range []string{fmt.Sprintf("%d KiB", MaxPart>>10), fmt.Sprintf("%d KiB", KeepPart>>10), "5,000"} {
		if !strings.Contains(README, s) {
			t.Errorf("README does not say %q", s)
		}
	}
	if MaxRanked != 5000 || MaxRanked*notsFactor != 10000 || !strings.Contains(README, "10,000") {
		t.Errorf("README says 5,000 and 10,000, MaxRanked is %d, with exclusions %d", MaxRanked, MaxRanked*notsFactor)
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
// by the text index; none sorts its rows.
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
		c, err := x.compile(context.Background(), q, Scope{}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan := queryPlan(t, x, c.sql, c.args...)
		// Read in the order the answer takes, newest first, so that a
		// pass can stop early: no sort of every row.
		if !strings.Contains(plan, want) || strings.Contains(plan, "SCAN entries") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s: %s\n  %s", qs, c.sql, plan)
		}
	}
}

// TestFileIDs: a file's id follows when its session began (its header's
// time, else its file's mtime), sessions that began in one second get
// ids in turn, one from before 2020 comes before all, and an id once
// given stays through a rewrite.
func TestFileIDs(t *testing.T) {
	store := t.TempDir()
	at := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	write := func(name string, began time.Time) {
		s := newSession(t, "abcd0000-0000-4000-8000-0000000000"+name, "/home/user/u", began, 3)
		s.user("", "hello "+name)
		s.write(store + "/--home-user-u--/" + name + ".jsonl")
	}
	write("01", at)
	write("02", at.Add(300*time.Millisecond)) // the same second
	write("03", at.Add(time.Hour))
	write("04", time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC))
	// No time in its header: its file's mtime.
	noTime := `{"type":"session","version":3,"id":"abcd0000-0000-4000-8000-000000000005","cwd":"/home/user/u"}` + "\n"
	if err := os.WriteFile(store+"/--home-user-u--/05.jsonl", []byte(noTime), 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := at.Add(2 * time.Hour)
	if err := os.Chtimes(store+"/--home-user-u--/05.jsonl", mtime, mtime); err != nil {
		t.Fatal(err)
	}
	x := openIndex(t, store, Options{})
	idx := build(t, x, store)
	ids := map[string]int64{}
	for _, r := range x.files {
		ids[r.name] = r.id
	}
	sec := func(tm time.Time) int64 { return tm.Unix() - idEpoch + 1 }
	want := map[string]int64{"01": sec(at), "02": sec(at) + 1, "03": sec(at.Add(time.Hour)), "04": 1, "05": sec(mtime)}
	if ids["01"] > ids["02"] {
		want["01"], want["02"] = want["02"], want["01"] // indexed in either order
	}
	for name, id := range want {
		if ids[name] != id {
			t.Errorf("%s: id %d, want %d (all: %v)", name, ids[name], id, ids)
		}
	}
	// Rewritten whole, to begin at another time: the same id.
	write("03", at.Add(3*time.Hour))
	follow(t, x, idx, store+"/--home-user-u--/03.jsonl")
	if r := x.paths[store+"/--home-user-u--/03.jsonl"]; r == nil || r.id != want["03"] || x.stats.full.Load() != 6 {
		t.Errorf("03 rewritten: %+v, %d indexed whole, want id %d", r, x.stats.full.Load(), want["03"])
	}
}

// TestLineReader: a line read through the reader's buffer is the line
// readLine gives, for lines next to each other, across the buffer's end,
// longer than it, read out of order, and the last without its newline.
func TestLineReader(t *testing.T) {
	var data []byte
	var offs []int64
	for i := 0; i < 400; i++ {
		n := 40 + (i*7919)%900
		switch i {
		case 100:
			n = readAhead + 1000 // longer than the buffer
		case 200:
			n = readAhead / 2
		}
		offs = append(offs, int64(len(data)))
		data = append(data, fmt.Sprintf(`{"id":"e%d","text":"%s"}`, i, strings.Repeat("x", n))...)
		if i < 399 {
			data = append(data, '\n')
		}
	}
	path := t.TempDir() + "/s.jsonl"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	order := append([]int64(nil), offs...)
	for i := len(offs) - 1; i >= 0; i -= 3 { // some backwards
		order = append(order, offs[i])
	}
	l := &lineReader{f: f, path: path}
	for _, off := range order {
		want := readLine(f, off)
		got := l.line(off)
		if want == nil || string(got) != string(want) {
			t.Fatalf("line at %d: %d bytes, want %d", off, len(got), len(want))
		}
	}
}

// TestNoWaitForConnections: searches at once, each with words to exclude
// in both text tables (a statement beside the pass for each) and read a
// session at a time, more of them than the index has connections, all
// answer: no search waits for a connection while it holds one.
func TestNoWaitForConnections(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	x := openIndex(t, store, Options{})
	build(t, x, store)
	x.byFileAfter = 1
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q, err := Parse("the -cmd -go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := x.compile(ctx, q, Scope{}, false, nil); len(c.nots) != 2 {
		t.Fatalf("%d statements of excluded words, want 2", len(c.nots))
	}
	projects := projectsOf(t, store)
	errs := make(chan error, 4*len(projects))
	for range 4 {
		for _, p := range projects {
			go func() {
				_, err := x.Search(ctx, q, Scope{Project: p}, 10)
				errs <- err
			}()
		}
	}
	for range 4 * len(projects) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestPrefixAsWords: a prefix of ASCII letters and digits is read as the
// OR of the index's words it begins, up to maxExpand of them, with the
// same hits as FTS5's prefix; one of more words, or of other letters, is
// left to FTS5.
func TestPrefixAsWords(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	s := newSession(t, "eeee5555-0000-4000-8000-000000000005", "/home/user/alpha", time.Date(2025, 5, 3, 9, 0, 0, 0, time.UTC), 3)
	var many []string
	for i := 0; i <= maxExpand; i++ {
		many = append(many, fmt.Sprintf("zqw%02d", i))
	}
	s.user("", strings.Join(many, " ")+" zqvone zqvtwo")
	s.write(filepath.Join(store, "--home-user-alpha--", "2025-05-03T09-00-00-000Z_eeee5555-0000-4000-8000-000000000005.jsonl"))
	x := openIndex(t, store, Options{})
	build(t, x, store)
	for qs, want := range map[string]string{
		"sess*":        `("session" OR "sessionmanager")`,
		"zqv*":         `("zqvone" OR "zqvtwo")`,
		`"hash man"*`:  `("hash manager"`,
		"xy*":          `"xy" *`, // shorter than minExpand
		"hash* -sess*": `("session" OR "sessionmanager")`,
		"zqw*":         `"zqw" *`,  // more words than maxExpand
		"中文*":          `"中文" *`,   // not ASCII
		"zzzq*":        `"zzzq" *`, // no word
	} {
		q, err := Parse(qs, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x.compile(context.Background(), q, Scope{}, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		all := fmt.Sprint(c.args...)
		for _, n := range c.nots {
			all += " " + n.match
		}
		if !strings.Contains(all, want) {
			t.Errorf("%s: the statements match %s, want %s", qs, all, want)
		}
	}
	for _, qs := range []string{"sess*", "zqv*", "zqw*", `"the has"*`, "hash* -sess*", "sess* OR zqv*"} {
		before := x.stats.statements.Load()
		got := find(t, x, qs)
		expanded := x.stats.statements.Load() - before
		x.fts5Prefixes = true
		before = x.stats.statements.Load()
		want := find(t, x, qs)
		plain := x.stats.statements.Load() - before
		x.fts5Prefixes = false
		slices.Sort(got)
		slices.Sort(want)
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: hits %v, with FTS5's prefix %v", qs, got, want)
		}
		// The vocabulary is read once a prefix, though the search
		// compiles its query twice (unranked, then ranked).
		if prefixes := int64(strings.Count(qs, "*")); expanded != plain+prefixes {
			t.Errorf("%s: %d statements, %d with FTS5's prefix: want %d more", qs, expanded, plain, prefixes)
		}
	}
}
