package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository's top folder.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestViewShape: no cycle of more than 10 files among view/'s files (a
// file refers to a name defined in another), and view/ under 7,000 lines
// of code besides its tests, so that it stays a package one can hold in
// one's head.
func TestViewShape(t *testing.T) {
	g, err := Load(filepath.Join(root(t), "view"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, n := range g.Lines {
		lines += n
	}
	if lines >= 7000 {
		t.Errorf("view/ has %d lines besides its tests; keep it under 7,000 (move what does not show the mount into a package below it)", lines)
	}
	if cs := g.Cycles(); len(cs) > 0 && len(cs[0]) > 10 {
		t.Errorf("the largest cycle among view/'s files has %d files (%v); keep it to 10 or fewer", len(cs[0]), cs[0])
	}
	t.Logf("view/: %d files, %d lines, %.0f%% of references between files in cycles", len(g.Files), lines, 100*g.InCycles())
}

// TestLayers: the packages below view import nothing above them: the
// session cache and the events hub know nothing of the views, the data
// layer nothing of FUSE.
func TestLayers(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", "./...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, imps, _ := strings.Cut(l, ": ")
		deps[p] = strings.Fields(imps)
	}
	const mod = "github.com/pifs/pifs/"
	// all is every package p imports, directly or not.
	var all func(p string, seen map[string]bool)
	all = func(p string, seen map[string]bool) {
		for _, d := range deps[p] {
			if !seen[d] {
				seen[d] = true
				all(d, seen)
			}
		}
	}
	if len(deps) < 20 {
		t.Fatalf("go list found %d packages", len(deps))
	}
	for _, tc := range []struct {
		pkg    string
		forbid []string
	}{
		{"cache", []string{"view", "nodes", "fs", "events", "github.com/hanwen/go-fuse"}},
		{"events", []string{"view", "nodes", "fs", "cache", "github.com/hanwen/go-fuse"}},
		{"view", []string{"nodes", "fs", "github.com/hanwen/go-fuse"}},
		{"sessions", []string{"tree", "render", "usage", "cache", "view", "nodes", "fs", "github.com/hanwen/go-fuse"}},
		{"tree", []string{"render", "usage", "cache", "view", "nodes", "fs", "github.com/hanwen/go-fuse"}},
		{"render", []string{"cache", "view", "nodes", "fs", "github.com/hanwen/go-fuse"}},
		{"usage", []string{"cache", "view", "nodes", "fs", "github.com/hanwen/go-fuse"}},
	} {
		seen := map[string]bool{}
		all(mod+tc.pkg, seen)
		for d := range seen {
			for _, f := range tc.forbid {
				if d == mod+f || strings.HasPrefix(d, f) {
					t.Errorf("%s imports %s", tc.pkg, d)
				}
			}
		}
	}
}

// TestDocsMap: docs/design.md's map of the packages names every package
// of the module, each once, and no package that is not there.
func TestDocsMap(t *testing.T) {
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(strings.TrimPrefix(p, "github.com/pifs/pifs"), "/"))
	}
	design, err := os.ReadFile(filepath.Join(root(t), "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The map is the first text block of "## The packages": one package a
	// line, its path first.
	m := regexp.MustCompile("(?s)## The packages\n.*?```text\n(.*?)```").FindSubmatch(design)
	if m == nil {
		t.Fatal(`docs/design.md has no "## The packages" map`)
	}
	mapped := map[string]int{}
	for _, l := range strings.Split(string(m[1]), "\n") {
		if l == "" || l[0] == ' ' {
			continue
		}
		mapped[strings.TrimSuffix(strings.Fields(l)[0], "/")]++
	}
	for _, p := range pkgs {
		if p == "" {
			p = "."
		}
		switch n := mapped[p]; {
		case n == 0:
			t.Errorf("docs/design.md's map does not name package %s", p)
		case n > 1:
			t.Errorf("docs/design.md's map names package %s %d times", p, n)
		}
		delete(mapped, p)
	}
	var extra []string
	for p := range mapped {
		extra = append(extra, p)
	}
	sort.Strings(extra)
	for _, p := range extra {
		t.Errorf("docs/design.md's map names %s, which is no package", p)
	}
}

// TestReadmeCode: the README's table of the code names every package of
// the module once.
func TestReadmeCode(t *testing.T) {
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)## The code\n.*?\n\| package \| what it owns \|\n\|---\|---\|\n(.*?)(\n\n|$)`).FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README.md has no "## The code" table`)
	}
	named := map[string]int{}
	for _, row := range strings.Split(string(m[1]), "\n") {
		first, _, _ := strings.Cut(strings.TrimPrefix(row, "| "), " |")
		for _, p := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			named[p[1]]++
		}
	}
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, "github.com/pifs/pifs/")
		if named[p] != 1 {
			t.Errorf("README.md's table of the code names package %s %d times; want once", p, named[p])
		}
		delete(named, p)
	}
	for p := range named {
		t.Errorf("README.md's table of the code names %s, which is no package", p)
	}
}
