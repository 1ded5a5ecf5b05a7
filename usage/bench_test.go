package usage_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

// syntheticStore makes n sessions of 100 records each over 50 projects and
// 90 days; one session in ten is a clone of an earlier one (half its records
// copied).
func syntheticStore(n int) []usage.Session {
	rng := rand.New(rand.NewPCG(1, 2))
	models := [][2]string{{"anthropic", "claude-sonnet-4-5"}, {"anthropic", "claude-opus-4-1"}, {"openai", "gpt-5"}, {"google", "gemini-2.5-pro"}}
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	list := make([]usage.Session, n)
	for i := range list {
		t0 := start + rng.Int64N(90*86400*1000)
		s := usage.Session{
			Project: fmt.Sprintf("--home-user-p%02d--", i%50),
			File:    fmt.Sprintf("%013d_%08x", t0, i),
			Created: float64(t0),
		}
		if i > 10 && i%10 == 0 {
			s.Records = append(s.Records, list[rng.IntN(i)].Records[:50]...)
		}
		m := models[rng.IntN(len(models))]
		for j := len(s.Records); j < 100; j++ {
			s.Records = append(s.Records, usage.Record{
				ID: fmt.Sprintf("%08x", rng.Uint32()), Time: float64(t0 + int64(j)*20000),
				Provider: m[0], Model: m[1],
				Input: 3000, Output: 400, CacheRead: 20000, CacheWrite: 1000, Total: 24400, Cost: 0.02,
			})
		}
		list[i] = s
	}
	return list
}

// BenchmarkReport10k builds every report of a 10,000-session store (a
// million records) from the records already collected.
func BenchmarkReport10k(b *testing.B) {
	list := syntheticStore(10000)
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		usage.Build(list, loc)
	}
}

// BenchmarkRenderDaily renders the root's daily.csv and daily.svg.
func BenchmarkRenderDaily(b *testing.B) {
	r := usage.Build(syntheticStore(10000), time.UTC).Root
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		r.File("daily.csv", now)
		r.File("daily.svg", now)
	}
}

// BenchmarkCollect takes the records of the demo store's largest session
// (what the mount pays once per parsed session).
func BenchmarkCollect(b *testing.B) {
	l, err := sessions.Open("../testdata/demo/--home-user-proj--/2025-05-12T18-06-02-000Z_0196c5ac-d728-70f4-96f8-c0870f84644e.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var c usage.Collector
		c.Add(l.Entries...)
	}
	b.ReportMetric(float64(len(usage.Records(l.Entries))), "records")
}
