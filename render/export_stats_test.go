package render

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/internal/oracle"
)

// TestToFixedMatchesJS: appendToFixed and appendTokens write what
// JavaScript's toFixed and pi's formatTokens write, for ties, halves that
// binary cannot hold, and random counts and costs, as node computes them.
func TestToFixedMatchesJS(t *testing.T) {
	xs := []float64{0, 1.25, 1.005, 2.5, 0.05, 0.148, 0.0005, 0.0015, 999.95, 1e20, 123456.789, 0.000001, 1e-7}
	r := rand.New(rand.NewSource(1))
	for range 300 {
		xs = append(xs, math.Round(r.Float64()*2e6)/float64(1+r.Intn(1000)), float64(r.Intn(3000000)), r.Float64())
	}
	digits := []int{0, 1, 2, 3}
	script := filepath.Join(t.TempDir(), "tofixed.mjs")
	js := `const xs = JSON.parse(process.argv[2]), ds = JSON.parse(process.argv[3]);
function formatTokens(count) {
  if (count < 1000) return count.toString();
  if (count < 10000) return (count / 1000).toFixed(1) + 'k';
  if (count < 1000000) return Math.round(count / 1000) + 'k';
  return (count / 1000000).toFixed(1) + 'M';
}
process.stdout.write(JSON.stringify(xs.map(x => [ds.map(d => x.toFixed(d)), formatTokens(x)])));`
	if err := os.WriteFile(script, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	xj, _ := json.Marshal(xs)
	dj, _ := json.Marshal(digits)
	out := oracle.NodeWith(t, oracle.NodeOptions{}, script, string(xj), string(dj))
	var want []struct {
		Fixed  []string
		Tokens string
	}
	var raw [][]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	for _, p := range raw {
		var w struct {
			Fixed  []string
			Tokens string
		}
		json.Unmarshal(p[0], &w.Fixed)
		json.Unmarshal(p[1], &w.Tokens)
		want = append(want, w)
	}
	if len(want) != len(xs) {
		t.Fatalf("node gave %d answers for %d numbers", len(want), len(xs))
	}
	for i, x := range xs {
		for k, d := range digits {
			if got := string(appendToFixed(nil, x, d)); got != want[i].Fixed[k] {
				t.Errorf("(%s).toFixed(%d) = %s, JavaScript %s", strconv.FormatFloat(x, 'g', -1, 64), d, got, want[i].Fixed[k])
			}
		}
		if got := string(appendTokens(nil, x)); got != want[i].Tokens {
			t.Errorf("formatTokens(%s) = %s, pi's %s", strconv.FormatFloat(x, 'g', -1, 64), got, want[i].Tokens)
		}
	}
}

// TestExportStatsInParts: the stats counted in parts, on every core, are
// those counted in one run, the costs added in the file's order.
func TestExportStatsInParts(t *testing.T) {
	var buf bytes.Buffer
	if err := gen.Session(&buf, 3000, 400); err != nil {
		t.Fatal(err)
	}
	tr := parseTree(t, buf.String())
	one := countExportStatsIn(tr.Entries(), 1)
	if one.assistant == 0 || one.cost == 0 || one.input == 0 {
		t.Fatalf("nothing counted: %+v", one)
	}
	for _, k := range []int{2, 3, 7, 64} {
		if got := countExportStatsIn(tr.Entries(), k); !reflect.DeepEqual(got, one) {
			t.Errorf("in %d parts %+v, in one %+v", k, got, one)
		}
	}
}
