package search

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func formatResult() *Result {
	return &Result{
		Hits: []Hit{
			{Project: "--p--", Session: "s1", Entry: "a/b", Role: RoleUser, Time: 1704067201000, Excerpt: "tab\there\nnewline", Score: 2.5},
			{Project: "--p--", Session: "s2", Entry: "..", Role: RoleTool, Time: math.NaN(), Excerpt: `say "hi"`},
		},
		Total:    2,
		Complete: true,
		Sessions: []SessionHits{{Best: Hit{Project: "--p--", Session: "s1"}, Hits: 1}, {Best: Hit{Project: "--p--", Session: "s2"}, Hits: 1}},
	}
}

// TestHitsTSV: a line a hit, four fields, the entry's path spelled as the
// mount spells entry files, the time in the zone given, the excerpt on one
// line; no caveat for a whole answer.
func TestHitsTSV(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	got := string(HitsTSV(formatResult(), loc))
	want := "--p--/s1/entries/a%2Fb.json\tuser\t2024-01-01T02:00:01+02:00\ttab here newline\n" +
		"--p--/s2/entries/%2E%2E.json\ttool\t\tsay \"hi\"\n"
	if got != want {
		t.Errorf("HitsTSV:\n%q\nwant\n%q", got, want)
	}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if n := len(strings.Split(l, "\t")); n != 4 {
			t.Errorf("%q: %d fields", l, n)
		}
	}
}

// TestCaveat: the first line says that the index is still being built, or
// that the answer holds only the best hits, or that it is of the newest
// matches of more, or both; hits.json has no such line.
func TestCaveat(t *testing.T) {
	r := formatResult()
	r.Complete, r.Total = false, 7
	got := string(HitsTSV(r, time.UTC))
	first, _, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(first, "# ") || !strings.Contains(first, "still being built") || !strings.Contains(first, "best 2 of 7") {
		t.Errorf("caveat line: %q", first)
	}
	if strings.Count(got, "\n") != 3 {
		t.Errorf("hits: %q", got)
	}
	r.Complete = true
	if c := Caveat(r); strings.Contains(c, "built") || !strings.Contains(c, "best 2 of 7") {
		t.Errorf("Caveat of a capped answer: %q", c)
	}
	if strings.HasPrefix(string(HitsJSON(r, time.UTC)), "#") {
		t.Error("hits.json starts with a comment")
	}
	r.More = true
	if c := Caveat(r); !strings.Contains(c, "more than 7 entries match") || strings.Contains(c, "best 2 of 7") {
		t.Errorf("Caveat of a query that matches more than it reads: %q", c)
	}
}

// TestHitsJSON: one object a line, each field there, time null when the
// entry has none; read back, the values are the hit's.
func TestHitsJSON(t *testing.T) {
	got := HitsJSON(formatResult(), time.UTC)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("HitsJSON: %q", got)
	}
	var h struct {
		Project, Session, Entry, Path, Role, Excerpt string
		Time                                         *string
		Score                                        float64
	}
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	if h.Project != "--p--" || h.Session != "s1" || h.Entry != "a/b" || h.Path != "--p--/s1/entries/a%2Fb.json" ||
		h.Role != "user" || h.Time == nil || *h.Time != "2024-01-01T00:00:01Z" || h.Score != 2.5 || h.Excerpt != "tab\there\nnewline" {
		t.Errorf("first line: %s → %+v", lines[0], h)
	}
	h.Time = nil
	if err := json.Unmarshal([]byte(lines[1]), &h); err != nil || h.Time != nil || h.Excerpt != `say "hi"` {
		t.Errorf("second line: %s → %+v %v", lines[1], h, err)
	}
	if !strings.Contains(lines[1], `"time":null`) {
		t.Errorf("no time: %s", lines[1])
	}
}

// TestKeep: what a caller may not see leaves the hits, the sessions and
// the count.
func TestKeep(t *testing.T) {
	r := formatResult().Keep(func(p, s string) bool { return s != "s2" })
	if len(r.Hits) != 1 || r.Hits[0].Session != "s1" || r.Total != 1 || len(r.Sessions) != 1 || r.Sessions[0].Best.Session != "s1" {
		t.Errorf("Keep: %+v", r)
	}
}

// TestStatusText: where the build stands, in each state.
func TestStatusText(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want []string
	}{
		{Progress{}, []string{"index building: listing the store", "sessions\t0 of 0"}},
		{Progress{Listed: true, Sessions: 10, SessionsDone: 4, Bytes: 10 << 20, BytesDone: 4 << 20, Rate: 2 << 20, Left: 3 * time.Second},
			[]string{"index building: queries answer from what is indexed so far", "sessions\t4 of 10", "bytes\t4.0 MiB of 10.0 MiB", "rate\t2.0 MiB/s", "left\t3s"}},
		{Progress{Listed: true, Complete: true, Sessions: 3, SessionsDone: 3}, []string{"index complete"}},
	} {
		got := StatusText(c.p)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("StatusText(%+v) lacks %q:\n%s", c.p, w, got)
			}
		}
	}
	if got := StatusOff("cannot open\nthe file"); got != "index off: cannot open the file\n" {
		t.Errorf("StatusOff: %q", got)
	}
}

// TestAnswers: an answer is kept by all that it depends on: another
// version of the index or of the store, another sight or project is
// another answer (internal/recent tests the keeping).
func TestAnswers(t *testing.T) {
	var as Answers
	made := 0
	get := func(k AnswerKey) *Answer {
		a, err := as.Get(k, func() (*Answer, error) {
			made++
			return NewAnswer(formatResult(), time.UTC), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	k := AnswerKey{Query: "x", Gen: 1}
	a := get(k)
	if get(k) != a || made != 1 {
		t.Errorf("asked twice: made %d", made)
	}
	for _, other := range []AnswerKey{{Query: "x", Gen: 2}, {Query: "x", Gen: 1, Store: 5}, {Query: "x", Gen: 1, Sight: 3}, {Project: "p", Query: "x", Gen: 1}} {
		if get(other) == a {
			t.Errorf("%+v shares %+v's answer", other, k)
		}
	}
}
