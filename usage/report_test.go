package usage_test

import (
	"encoding/json"
	"encoding/xml"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

const sonnet = "anthropic/claude-sonnet-4-5"

// handStore writes a store with known numbers: an original session in
// project --p--, a full fork of it in the same project, and a clone of its
// first part, plus a new call, in project --a-- (which sorts first, so only
// the header times make the original the first holder).
func handStore(t testing.TB) string {
	dir := t.TempDir()
	s1 := []line{
		header("s1", "2025-03-01T10:00:00.000Z", "/home/u/p", ""),
		user("u1", "", "2025-03-01T11:59:00.000Z", "hello"),
		assistant("a1", "u1", "2025-03-01T12:00:00.000Z", "anthropic", "claude-sonnet-4-5", usageJSON(100, 10, 1000, 50, 0.5)),
		// 23:30 UTC on March 31 is 01:30 on April 1 in Berlin (CEST).
		assistant("a2", "a1", "2025-03-31T23:30:00.000Z", "anthropic", "claude-sonnet-4-5", usageJSON(200, 20, 0, 0, 0.25)),
		`{"type":"message","id":"t1","parentId":"a2","timestamp":"2025-04-02T07:00:00.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"agent","content":[],"isError":false,"usage":` + usageJSON(1, 1, 0, 0, 0.125) + `,"timestamp":0}}`,
		`{"type":"usage","id":"w1","parentId":"t1","timestamp":"2025-04-02T08:00:00.000Z","kind":"cache_warm","provider":"openai","model":"gpt-5","usage":` + usageJSON(0, 0, 0, 4000, 1) + `}`,
		`{"type":"compaction","id":"c1","parentId":"w1","timestamp":"2025-04-02T09:00:00.000Z","summary":"s","firstKeptEntryId":"a2","tokensBefore":9,"usage":` + usageJSON(300, 30, 0, 0, 0.0625) + `}`,
		`{"type":"branch_summary","id":"b1","parentId":"c1","timestamp":"2025-04-02T09:30:00.000Z","fromId":"a1","summary":"s","usage":null}`,
		`{"type":"session_info","id":"n1","parentId":"b1","timestamp":"2025-04-02T09:31:00.000Z","name":"orig"}`,
	}
	p1 := writeSession(t, dir, "--p--", "2025-03-01T10-00-00-000Z_s1", s1...)
	fork := append([]line{header("s3", "2025-04-05T00:00:00.000Z", "/home/u/p", p1)}, s1[1:]...)
	writeSession(t, dir, "--p--", "2025-04-05T00-00-00-000Z_s3", fork...)
	clone := append([]line{header("s2", "2025-04-03T00:00:00.000Z", "/home/u/a", p1)}, s1[1:4]...)
	clone = append(clone, assistant("a3", "a2", "2025-04-03T10:00:00.000Z", "anthropic", "claude-sonnet-4-5", usageJSON(50, 0, 0, 0, 2)))
	writeSession(t, dir, "--a--", "2025-04-03T00-00-00-000Z_s2", clone...)
	return dir
}

func tot(in, out, cr, cw, cost float64, n int) usage.Totals {
	return usage.Totals{Input: in, Output: out, CacheRead: cr, CacheWrite: cw, Total: in + out + cr + cw, Cost: cost, Messages: n}
}

type dayWant struct {
	key string
	t   usage.Totals
}

func checkRows(t *testing.T, what string, rows []usage.Row, want []dayWant) {
	t.Helper()
	var got []dayWant
	for _, r := range rows {
		got = append(got, dayWant{r.Key, r.Totals})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestHandMadeStore(t *testing.T) {
	list := load(t, handStore(t))
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	utc := usage.Build(list, time.UTC)
	ber := usage.Build(list, berlin)

	a2 := tot(200, 20, 0, 0, 0.25, 1)
	checkRows(t, "daily UTC", utc.Root.Daily, []dayWant{
		{"2025-03-01", tot(100, 10, 1000, 50, 0.5, 1)},
		{"2025-03-31", a2},
		{"2025-04-02", tot(301, 31, 0, 4000, 1.1875, 3)},
		{"2025-04-03", tot(50, 0, 0, 0, 2, 1)},
	})
	checkRows(t, "daily Berlin", ber.Root.Daily, []dayWant{
		{"2025-03-01", tot(100, 10, 1000, 50, 0.5, 1)},
		{"2025-04-01", a2},
		{"2025-04-02", tot(301, 31, 0, 4000, 1.1875, 3)},
		{"2025-04-03", tot(50, 0, 0, 0, 2, 1)},
	})
	checkRows(t, "monthly UTC", utc.Root.Monthly, []dayWant{
		{"2025-03", tot(300, 30, 1000, 50, 0.75, 2)},
		{"2025-04", tot(351, 31, 0, 4000, 3.1875, 4)},
	})
	checkRows(t, "monthly Berlin", ber.Root.Monthly, []dayWant{
		{"2025-03", tot(100, 10, 1000, 50, 0.5, 1)},
		{"2025-04", tot(551, 51, 0, 4000, 3.4375, 5)},
	})
	checkRows(t, "models", utc.Root.Models, []dayWant{
		{sonnet, tot(350, 30, 1000, 50, 2.75, 3)},
		{"openai/gpt-5", tot(0, 0, 0, 4000, 1, 1)},
		{"unknown", tot(301, 31, 0, 0, 0.1875, 2)},
	})
	if got := utc.Root.Daily[2].Models; !reflect.DeepEqual(got, []usage.ModelCost{
		{Model: "openai/gpt-5", Cost: 1, Total: 4000}, {Model: "unknown", Cost: 0.1875, Total: 332}}) {
		t.Errorf("models of 2025-04-02: %+v", got)
	}

	// Sessions: pi's totals over the whole file, and the share each is first
	// to hold (the clone's copies and the whole fork belong to the original).
	s1 := tot(601, 61, 1000, 4050, 1.9375, 5)
	type sw struct {
		project, file string
		pi, own       usage.Totals
	}
	var got []sw
	for _, s := range utc.Root.Sessions {
		got = append(got, sw{s.Project, s.File, s.Pi, s.Own})
	}
	want := []sw{
		{"--p--", "2025-03-01T10-00-00-000Z_s1", s1, s1},
		{"--a--", "2025-04-03T00-00-00-000Z_s2", tot(350, 30, 1000, 50, 2.75, 3), tot(50, 0, 0, 0, 2, 1)},
		{"--p--", "2025-04-05T00-00-00-000Z_s3", s1, usage.Totals{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sessions:\n got %+v\nwant %+v", got, want)
	}
	if s := utc.Root.Sessions[0]; s.Name != "orig" || s.ID != "s1" || s.Cwd != "/home/u/p" ||
		!reflect.DeepEqual(s.Models, []string{sonnet, "openai/gpt-5", "unknown"}) {
		t.Errorf("session row: %+v", s)
	}
	if p := utc.Root.Sessions[1].ParentSession; !strings.HasSuffix(p, "/--p--/2025-03-01T10-00-00-000Z_s1.jsonl") {
		t.Errorf("parentSession %q", p)
	}

	// Projects: each session row in its project; root = sum of projects.
	if got := utc.Projects["--p--"].Total; got != s1 {
		t.Errorf("--p-- total %+v", got)
	}
	if got := utc.Projects["--a--"].Total; got != tot(50, 0, 0, 0, 2, 1) {
		t.Errorf("--a-- total %+v", got)
	}
	if got := utc.Root.Total; got != tot(651, 61, 1000, 4050, 3.9375, 6) {
		t.Errorf("root total %+v", got)
	}
	if n := len(utc.Projects["--p--"].Sessions); n != 2 {
		t.Errorf("--p-- has %d session rows", n)
	}
	checkRows(t, "daily --a--", utc.Projects["--a--"].Daily, []dayWant{{"2025-04-03", tot(50, 0, 0, 0, 2, 1)}})
	if utc.Root.TimeZone != "UTC" || ber.Root.TimeZone != "Europe/Berlin" {
		t.Errorf("zones %q %q", utc.Root.TimeZone, ber.Root.TimeZone)
	}
}

// TestFiles pins the rendering of each file of a usage folder.
func TestFiles(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := usage.Build(load(t, handStore(t)), berlin).Root
	now := time.Date(2025, 4, 20, 12, 0, 0, 0, time.UTC)
	file := func(name string) string {
		b, ok := r.File(name, now)
		if !ok {
			t.Fatalf("%s: not a usage file", name)
		}
		return string(b)
	}
	wantDaily := `date,timeZone,input,output,cacheRead,cacheWrite,total,cost,messages,models
2025-03-01,Europe/Berlin,100,10,1000,50,1160,0.5,1,anthropic/claude-sonnet-4-5
2025-04-01,Europe/Berlin,200,20,0,0,220,0.25,1,anthropic/claude-sonnet-4-5
2025-04-02,Europe/Berlin,301,31,0,4000,4332,1.1875,3,openai/gpt-5 unknown
2025-04-03,Europe/Berlin,50,0,0,0,50,2,1,anthropic/claude-sonnet-4-5
`
	if got := file("daily.csv"); got != wantDaily {
		t.Errorf("daily.csv:\n%s\nwant:\n%s", got, wantDaily)
	}
	wantModels := `provider,model,input,output,cacheRead,cacheWrite,total,cost,messages
anthropic,claude-sonnet-4-5,350,30,1000,50,1430,2.75,3
openai,gpt-5,0,0,0,4000,4000,1,1
unknown,unknown,301,31,0,0,332,0.1875,2
`
	if got := file("models.csv"); got != wantModels {
		t.Errorf("models.csv:\n%s\nwant:\n%s", got, wantModels)
	}
	sess := file("sessions.csv")
	if !strings.HasPrefix(sess, "project,session,id,name,cwd,parentSession,created,input,output,cacheRead,cacheWrite,total,cost,messages,ownInput,ownOutput,ownCacheRead,ownCacheWrite,ownTotal,ownCost,ownMessages,models\n") ||
		!strings.Contains(sess, "\n--a--,2025-04-03T00-00-00-000Z_s2,s2,,/home/u/a,") ||
		!strings.Contains(sess, ",2025-04-03T00:00:00.000Z,350,30,1000,50,1430,2.75,3,50,0,0,0,50,2,1,anthropic/claude-sonnet-4-5\n") {
		t.Errorf("sessions.csv:\n%s", sess)
	}
	if got := file("monthly.csv"); !strings.HasSuffix(got, "2025-04,Europe/Berlin,551,51,0,4000,4602,3.4375,5,anthropic/claude-sonnet-4-5 openai/gpt-5 unknown\n") {
		t.Errorf("monthly.csv:\n%s", got)
	}

	// JSON: {"timeZone","totals","rows"}, rows keyed by the CSV's columns.
	for _, name := range []string{"daily.json", "monthly.json", "models.json", "sessions.json"} {
		var doc struct {
			TimeZone string           `json:"timeZone"`
			Totals   map[string]any   `json:"totals"`
			Rows     []map[string]any `json:"rows"`
		}
		if err := json.Unmarshal([]byte(file(name)), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, file(name))
		}
		if doc.TimeZone != "Europe/Berlin" || doc.Totals["cost"] != 3.9375 || len(doc.Rows) == 0 {
			t.Errorf("%s: %+v", name, doc)
		}
		csvName := strings.TrimSuffix(name, ".json") + ".csv"
		cols := strings.Split(strings.SplitN(file(csvName), "\n", 2)[0], ",")
		for _, c := range cols {
			if _, ok := doc.Rows[0][c]; !ok {
				t.Errorf("%s: row lacks %q: %v", name, c, doc.Rows[0])
			}
		}
	}
	var daily struct {
		Rows []struct {
			Date    string   `json:"date"`
			Models  []string `json:"models"`
			ByModel []struct {
				Model string  `json:"model"`
				Cost  float64 `json:"cost"`
			} `json:"byModel"`
		} `json:"rows"`
	}
	json.Unmarshal([]byte(file("daily.json")), &daily)
	if d := daily.Rows[2]; d.Date != "2025-04-02" || !reflect.DeepEqual(d.Models, []string{"openai/gpt-5", "unknown"}) ||
		len(d.ByModel) != 2 || d.ByModel[1].Cost != 0.1875 {
		t.Errorf("daily.json row: %+v", d)
	}
	for _, name := range usage.Files {
		if _, ok := r.File(name, now); !ok {
			t.Errorf("%s listed but not served", name)
		}
	}
	if _, ok := r.File("daily.txt", now); ok {
		t.Error("daily.txt served")
	}
}

func TestZoneName(t *testing.T) {
	t.Setenv("TZ", "Europe/Paris")
	if got := usage.ZoneName(time.Local); got != "Europe/Paris" {
		t.Errorf("local zone named %q", got)
	}
	t.Setenv("TZ", "")
	if got := usage.ZoneName(time.Local); got != "UTC" {
		t.Errorf("TZ= names %q", got)
	}
	if got := usage.ZoneName(time.UTC); got != "UTC" {
		t.Errorf("UTC named %q", got)
	}
}

// TestRecords pins which entries carry usage and what a record holds.
func TestRecords(t *testing.T) {
	data := strings.Join([]string{
		header("s", "2025-01-01T00:00:00.000Z", "/x", ""),
		// responseModel names the model that answered, as in pi's breakdown.
		`{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"openrouter","model":"auto","responseModel":"gpt-5","usage":` + usageJSON(1, 2, 3, 4, 0.5) + `}}`,
		// no entry timestamp: the message's; tokens that are not numbers count 0
		`{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":1735689600000,"usage":{"input":"7","output":1,"cost":{"total":1}}}}`,
		// usage that is not an object counts nothing; nor do user messages
		`{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"usage":5}}`,
		`{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"x","usage":` + usageJSON(1, 0, 0, 0, 1) + `}}`,
		// falsy usage on a compaction: not counted
		`{"type":"compaction","id":"e","parentId":"d","timestamp":"2025-01-01T00:00:04.000Z","summary":"","firstKeptEntryId":"a","tokensBefore":0,"usage":0}`,
		`{"type":"branch_summary","id":"f","parentId":"e","timestamp":"bad","fromId":"a","summary":"","usage":` + usageJSON(0, 9, 0, 0, 0) + `}`,
	}, "\n")
	l, err := sessions.Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	got := usage.Records(l.Entries)
	nan := math.NaN()
	want := []usage.Record{
		{ID: "a", Time: 1735689601000, Provider: "openrouter", Model: "gpt-5", Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Total: 10, Cost: 0.5},
		{ID: "b", Time: 1735689600000, Provider: "p", Model: "m", Output: 1, Total: 1, Cost: 1},
		{ID: "f", Time: nan, Provider: "unknown", Model: "unknown", Output: 9, Total: 9},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records: %+v", len(got), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if math.IsNaN(w.Time) && math.IsNaN(g.Time) {
			g.Time, w.Time = 0, 0
		}
		if g != w {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if got[2].Label() != "unknown" || got[0].Label() != "openrouter/gpt-5" {
		t.Errorf("labels %q %q", got[2].Label(), got[0].Label())
	}

	// Incremental: entries added one by one give the same records and totals.
	var c usage.Collector
	for _, e := range l.Entries {
		c.Add(e)
	}
	if n := len(c.Records()); n != 3 {
		t.Errorf("collector has %d records", n)
	}
	if tt := c.Totals(); tt != tot(1, 12, 3, 4, 1.5, 3) {
		t.Errorf("collector totals %+v", tt)
	}
	r := usage.Build([]usage.Session{{Project: "p", File: "s", Created: nan, Records: c.Records()}}, time.UTC).Root
	if last := r.Daily[len(r.Daily)-1]; last.Key != "unknown" || last.Output != 9 {
		t.Errorf("a record without time: %+v", r.Daily)
	}
}

// FuzzOrder checks that reports do not depend on the order sessions come in,
// that the own shares add up to the root, and the projects to the root.
// Costs are multiples of 1/64 so that sums are exact in any order.
func FuzzOrder(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 1000} {
		f.Add(seed)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 7))
		list := randomStore(rng, 2+rng.IntN(12))
		want := usage.Build(list, berlin)
		shuffled := slices.Clone(list)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := usage.Build(shuffled, berlin)
		for _, rs := range []*usage.Reports{got, want} {
			for _, r := range append([]*usage.Report{rs.Root}, slices.Collect(maps.Values(rs.Projects))...) {
				for i := range r.Sessions {
					if math.IsNaN(r.Sessions[i].Created) {
						r.Sessions[i].Created = -1 // NaN is not DeepEqual to itself
					}
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("reports depend on the order of sessions")
		}
		var own, projects usage.Totals
		for _, s := range want.Root.Sessions {
			addTotals(&own, s.Own)
		}
		for _, p := range want.Projects {
			addTotals(&projects, p.Total)
		}
		own.Total = own.Input + own.Output + own.CacheRead + own.CacheWrite
		projects.Total = projects.Input + projects.Output + projects.CacheRead + projects.CacheWrite
		if own != want.Root.Total || projects != want.Root.Total {
			t.Fatalf("root %+v, sum of own shares %+v, of projects %+v", want.Root.Total, own, projects)
		}
		var days usage.Totals
		for _, d := range want.Root.Daily {
			addTotals(&days, d.Totals)
		}
		days.Total = days.Input + days.Output + days.CacheRead + days.CacheWrite
		if days != want.Root.Total {
			t.Fatalf("root %+v, sum of days %+v", want.Root.Total, days)
		}
	})
}

func addTotals(a *usage.Totals, b usage.Totals) {
	a.Input += b.Input
	a.Output += b.Output
	a.CacheRead += b.CacheRead
	a.CacheWrite += b.CacheWrite
	a.Cost += b.Cost
	a.Messages += b.Messages
}

// randomStore makes n sessions over a few projects; some are forks or
// clones that copy a prefix of an earlier session's records.
func randomStore(rng *rand.Rand, n int) []usage.Session {
	models := [][2]string{{"anthropic", "claude-sonnet-4-5"}, {"openai", "gpt-5"}, {"google", "gemini-2.5-pro"}, {"unknown", "unknown"}}
	base := float64(time.Date(2025, 3, 20, 0, 0, 0, 0, time.UTC).UnixMilli())
	var list []usage.Session
	for i := range n {
		s := usage.Session{
			Project: []string{"--a--", "--b--", "--c--"}[rng.IntN(3)],
			File:    string(rune('a'+i)) + "-session",
			Created: base + float64(rng.IntN(40*86400))*1000,
		}
		if rng.IntN(8) == 0 {
			s.Created = math.NaN()
		}
		if i > 0 && rng.IntN(3) == 0 {
			src := list[rng.IntN(i)]
			s.Records = slices.Clone(src.Records[:rng.IntN(len(src.Records)+1)])
		}
		for range rng.IntN(20) {
			m := models[rng.IntN(len(models))]
			r := usage.Record{
				ID:       string(rune('A'+rng.IntN(26))) + string(rune('A'+rng.IntN(26))),
				Time:     base + float64(rng.IntN(60*86400))*1000,
				Provider: m[0], Model: m[1],
				Input: float64(rng.IntN(1000)), Output: float64(rng.IntN(100)),
				CacheRead: float64(rng.IntN(5000)), CacheWrite: float64(rng.IntN(50)),
				Cost: float64(rng.IntN(640)) / 64,
			}
			r.Total = r.Input + r.Output + r.CacheRead + r.CacheWrite
			s.Records = append(s.Records, r)
		}
		list = append(list, s)
	}
	return list
}

// TestDailySVG parses the chart as XML and checks its bars and legend.
func TestDailySVG(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := usage.Build(load(t, handStore(t)), berlin).Root
	now := time.Date(2025, 5, 31, 12, 0, 0, 0, time.UTC)
	svg := usage.DailySVG(r.Daily, now, berlin)
	type rect struct {
		Class string `xml:"class,attr"`
		W     string `xml:"width,attr"`
		Fill  string `xml:"fill,attr"`
		H     string `xml:"height,attr"`
		Title string `xml:"title"`
	}
	var doc struct {
		XMLName xml.Name
		Rects   []rect   `xml:"rect"`
		Texts   []string `xml:"text"`
		Script  []string `xml:"script"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, svg)
	}
	if doc.XMLName.Local != "svg" || doc.XMLName.Space != "http://www.w3.org/2000/svg" || len(doc.Script) > 0 {
		t.Fatalf("root %v, scripts %d", doc.XMLName, len(doc.Script))
	}
	var bars []string
	fills := map[string]string{}
	for _, rc := range doc.Rects {
		if rc.Class == "bar" {
			bars = append(bars, rc.Title)
			fills[rc.Title[strings.Index(rc.Title, ": ")+2:strings.LastIndex(rc.Title, " $")]] = rc.Fill
		}
	}
	// One bar segment per day and model with a cost (2025-03-01 is more
	// than 90 days before May 31).
	wantBars := []string{
		"Tue Apr 1, 2025: anthropic/claude-sonnet-4-5 $0.25",
		"Wed Apr 2, 2025: openai/gpt-5 $1.00",
		"Wed Apr 2, 2025: unknown $0.19",
		"Thu Apr 3, 2025: anthropic/claude-sonnet-4-5 $2.00",
	}
	if !reflect.DeepEqual(bars, wantBars) {
		t.Errorf("bars:\n%q\nwant\n%q", bars, wantBars)
	}
	if fills[sonnet] == fills["openai/gpt-5"] || fills[sonnet] == fills["unknown"] {
		t.Errorf("models share a color: %v", fills)
	}
	// Legend swatches, in order of cost, in the colors of the bars.
	var swatches []string
	for _, rc := range doc.Rects {
		if rc.Class == "" && rc.W == "12" {
			swatches = append(swatches, rc.Fill)
		}
	}
	if want := []string{fills[sonnet], fills["openai/gpt-5"], fills["unknown"]}; !reflect.DeepEqual(swatches, want) {
		t.Errorf("legend colors %v, bars %v", swatches, want)
	}
	all := strings.Join(doc.Texts, "\n")
	for _, want := range []string{"anthropic/claude-sonnet-4-5 $2.25", "openai/gpt-5 $1.00", "unknown $0.19",
		"Europe/Berlin", "$3.44", "Apr 1", "May 15", "$0.00", "$2.00"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in:\n%s", want, all)
		}
	}
	if strings.Contains(string(svg), "href") {
		t.Error("the chart refers to something outside")
	}

	empty := usage.DailySVG(nil, now, time.UTC)
	if err := xml.Unmarshal(empty, new(struct{})); err != nil || !strings.Contains(string(empty), "no usage") {
		t.Errorf("empty chart: %v\n%s", err, empty)
	}
}

// TestCollectorGrows follows a file as pi appends to it, the way the mount
// does: only the new entries are added.
func TestCollectorGrows(t *testing.T) {
	dir := t.TempDir()
	path := writeSession(t, dir, "p", "s",
		header("s", "2025-01-01T00:00:00.000Z", "/x", ""),
		assistant("a1", "", "2025-01-01T00:00:01.000Z", "anthropic", "claude-sonnet-4-5", usageJSON(1, 2, 3, 4, 0.5)))
	l, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var c usage.Collector
	c.Add(l.Entries...)
	kept := c.Records()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(assistant("a2", "a1", "2025-01-02T00:00:01.000Z", "openai", "gpt-5", usageJSON(10, 20, 0, 0, 1.25)) + "\n")
	f.Close()
	n := len(l.Entries)
	if reset, err := l.Refresh(); err != nil || reset {
		t.Fatalf("refresh: reset %v, %v", reset, err)
	}
	c.Add(l.Entries[n:]...)
	if got, want := c.Records(), usage.Records(l.Entries); !reflect.DeepEqual(got, want) || len(got) != 2 {
		t.Errorf("incremental %+v, whole %+v", got, want)
	}
	if len(kept) != 1 || kept[0].ID != "a1" {
		t.Errorf("records taken before the append changed: %+v", kept)
	}
	if got := c.Totals(); got != tot(11, 22, 3, 4, 1.75, 2) {
		t.Errorf("totals %+v", got)
	}
}

// TestNegativeZero: a hand-written -0 copied by pi (which writes it as 0)
// is still the same call.
func TestNegativeZero(t *testing.T) {
	r := usage.Record{ID: "a", Time: 1, Provider: "p", Model: "m", Input: math.Copysign(0, -1), Cost: 1}
	c := r
	c.Input = 0
	list := []usage.Session{{Project: "p", File: "1", Created: 0, Records: []usage.Record{r}},
		{Project: "p", File: "2", Created: 5, Records: []usage.Record{c}}}
	if got := usage.Build(list, time.UTC).Root.Total; got.Cost != 1 || got.Messages != 1 {
		t.Errorf("counted twice: %+v", got)
	}
}
