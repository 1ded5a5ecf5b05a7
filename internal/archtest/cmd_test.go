package archtest

import (
	"os"
	"sort"
	"testing"
)

func TestPrintGraph(t *testing.T) {
	dir := os.Getenv("ARCH_DIR")
	if dir == "" {
		t.Skip("ARCH_DIR")
	}
	g, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, n := range g.Lines {
		lines += n
	}
	t.Logf("%d files, %d lines, in cycles %.0f%%", len(g.Files), lines, 100*g.InCycles())
	for _, c := range g.Cycles() {
		t.Logf("cycle of %d: %v", len(c), c)
		in := map[string]bool{}
		for _, f := range c {
			in[f] = true
		}
		if os.Getenv("ARCH_EDGES") == "" {
			continue
		}
		for _, f := range c {
			for to, names := range g.Names[f] {
				if in[to] {
					var ns []string
					for n := range names {
						ns = append(ns, n)
					}
					sort.Strings(ns)
					t.Logf("  %s -> %s: %v", f, to, ns)
				}
			}
		}
	}
}
