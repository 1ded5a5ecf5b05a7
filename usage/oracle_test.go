package usage_test

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
	"github.com/pifs/pifs/usage"
)

// TestSessionsMatchPi checks every session of pi's own corpus and of the
// demo store: its sessions row carries exactly pi's /session totals, and
// the store's totals count copied calls once.
func TestSessionsMatchPi(t *testing.T) {
	corpus := t.TempDir()
	oracle.Corpus(t, corpus)
	for name, store := range map[string]string{"corpus": corpus, "demo": filepath.Join("..", "testdata", "demo")} {
		t.Run(name, func(t *testing.T) {
			list := load(t, store)
			if len(list) < 10 {
				t.Fatalf("only %d sessions", len(list))
			}
			reps := usage.Build(list, time.UTC)
			rows := map[string]usage.SessionRow{}
			for _, r := range reps.Root.Sessions {
				rows[r.Project+"/"+r.File] = r
			}
			compared, copied := 0, 0
			for _, s := range list {
				row := rows[s.Project+"/"+s.File]
				pi := oracle.Dump(t, s.Path, false)
				l, err := sessions.Open(s.Path)
				if err != nil {
					t.Fatal(err)
				}
				tu := tree.New(l).Usage()
				if got, want := row.Pi, (usage.Totals{Input: tu.Input, Output: tu.Output, CacheRead: tu.CacheRead,
					CacheWrite: tu.CacheWrite, Total: tu.Total, Cost: tu.Cost, Messages: row.Pi.Messages}); got != want {
					t.Errorf("%s: row %+v, schema.Usage %+v", s.File, got, want)
				}
				if pi.Usage == nil {
					t.Logf("%s: pi has no totals (%v)", s.File, pi.UsageError)
					continue
				}
				u := *pi.Usage
				got := schema.Usage{Input: row.Pi.Input, Output: row.Pi.Output, CacheRead: row.Pi.CacheRead,
					CacheWrite: row.Pi.CacheWrite, Total: row.Pi.Total, Cost: row.Pi.Cost}
				if got != u {
					t.Errorf("%s: sessions row %+v, pi /session %+v", s.File, got, u)
				}
				compared++
				if row.Own != row.Pi {
					copied++
					if s.ParentSession == "" {
						t.Errorf("%s: shares calls with another session but is no fork or clone", s.File)
					}
				}
			}
			t.Logf("%d sessions compared with pi, %d share calls with an earlier one", compared, copied)
			if compared < 10 || copied == 0 {
				t.Errorf("compared %d sessions, %d forks or clones with copied calls", compared, copied)
			}

			var projects, own float64
			for _, p := range reps.Projects {
				projects += p.Total.Cost
			}
			for _, r := range reps.Root.Sessions {
				own += r.Own.Cost
			}
			if c := reps.Root.Total.Cost; math.Abs(projects-c) > 1e-9*c || math.Abs(own-c) > 1e-9*c || c == 0 {
				t.Errorf("root cost %v, projects %v, own shares %v", c, projects, own)
			}
		})
	}
}
