package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

type usageJSON struct {
	TimeZone string `json:"timeZone"`
	Totals   struct {
		Input, Output, CacheRead, CacheWrite, Total, Cost float64
	} `json:"totals"`
	Rows []struct {
		Project, Session                           string
		Input, Output, CacheRead, CacheWrite, Cost float64
	} `json:"rows"`
}

func readUsage(t *testing.T, path string) usageJSON {
	t.Helper()
	var u usageJSON
	if err := json.Unmarshal(readMount(t, path), &u); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return u
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestUsageMatchesPi: through the mount, usage/sessions.json has a row per
// session whose totals are pi's own /session totals; the root's totals are
// the sum of the projects'; a call appended by pi shows within a second.
func TestUsageMatchesPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	mnt := testMount(t, store)
	root := readUsage(t, filepath.Join(mnt, "usage", "sessions.json"))
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	if len(root.Rows) != len(files) {
		t.Fatalf("usage/sessions.json has %d rows for %d sessions", len(root.Rows), len(files))
	}
	byName := map[string]int{}
	for i, r := range root.Rows {
		byName[r.Project+"/"+r.Session] = i
	}
	checked := 0
	for _, f := range files {
		key := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".jsonl")
		i, ok := byName[key]
		if !ok {
			t.Errorf("no row for %s", key)
			continue
		}
		pi := oracle.Dump(t, f, false)
		if pi.Usage == nil {
			continue // pi's own loop threw on this file
		}
		r, u := root.Rows[i], pi.Usage
		if !near(r.Input, u.Input) || !near(r.Output, u.Output) || !near(r.CacheRead, u.CacheRead) || !near(r.CacheWrite, u.CacheWrite) || !near(r.Cost, u.Cost) {
			t.Errorf("%s: row %+v, pi's /session %+v", key, r, *u)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("pi gave totals for no session")
	}
	var sum float64
	projects, _ := filepath.Glob(filepath.Join(store, "*"))
	for _, p := range projects {
		sum += readUsage(t, filepath.Join(mnt, filepath.Base(p), "usage", "daily.json")).Totals.Cost
	}
	if !near(sum, root.Totals.Cost) {
		t.Errorf("projects' costs sum to %v, the root's is %v", sum, root.Totals.Cost)
	}

	// Live: a call appended by pi counts within a second.
	before := readUsage(t, filepath.Join(mnt, "usage", "daily.json")).Totals.Cost
	line := `{"type":"message","id":"usage-live","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.5}},"timestamp":1767225600000}}`
	f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, line)
	f.Close()
	eventually(t, "the appended call in usage/daily.json", func() (bool, string) {
		after := readUsage(t, filepath.Join(mnt, "usage", "daily.json")).Totals.Cost
		return near(after, before+0.5), fmt.Sprint(after)
	})
}
