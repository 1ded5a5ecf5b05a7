// Package archtest measures the shape of pifs's own packages, for the tests
// that keep it: which files of a package refer to names defined in which
// others, and the cycles that makes.
package archtest

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Graph is the files of one package (tests left out) and, for each, the
// other files whose top-level names, fields or methods it refers to.
type Graph struct {
	Files []string                  // base names, sorted
	Lines map[string]int            // lines of each file
	Refs  map[string]map[string]int // from → to → references
	// Names are the names each reference of from to to is to.
	Names map[string]map[string]map[string]bool
}

// Load type-checks the package in dir (its non-test files) against the
// export data of its dependencies, as go list gives them.
func Load(dir string) (*Graph, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export in %s: %w", dir, err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		exports[path] = file
	}
	cmd = exec.Command("go", "list", "-f", "{{range .GoFiles}}{{.}}\n{{end}}", ".")
	cmd.Dir = dir
	if out, err = cmd.Output(); err != nil {
		return nil, fmt.Errorf("go list in %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range strings.Fields(string(out)) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(dir, fset, files, info)
	if err != nil {
		return nil, err
	}
	g := &Graph{Lines: map[string]int{}, Refs: map[string]map[string]int{}, Names: map[string]map[string]map[string]bool{}}
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		g.Files = append(g.Files, name)
		g.Lines[name] = fset.File(f.Pos()).LineCount()
	}
	sort.Strings(g.Files)
	add := func(at token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		// Only names declared at the package's top level, or fields and
		// methods of its types; not locals.
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			return
		}
		if _, ok := obj.(*types.Func); !ok {
			if _, isVar := obj.(*types.Var); !isVar && obj.Parent() != pkg.Scope() {
				return
			}
		}
		from := filepath.Base(fset.Position(at).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			return
		}
		if g.Refs[from] == nil {
			g.Refs[from] = map[string]int{}
			g.Names[from] = map[string]map[string]bool{}
		}
		g.Refs[from][to]++
		if g.Names[from][to] == nil {
			g.Names[from][to] = map[string]bool{}
		}
		g.Names[from][to][obj.Name()] = true
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	return g, nil
}

// Cycles are the graph's strongly connected components of more than one
// file, largest first.
func (g *Graph) Cycles() [][]string {
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		var next []string
		for w := range g.Refs[v] {
			next = append(next, w)
		}
		sort.Strings(next)
		for _, w := range next {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			if len(c) > 1 {
				sort.Strings(c)
				out = append(out, c)
			}
		}
	}
	for _, f := range g.Files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// InCycles is the share of file-to-file references (counted once per
// pair of files) that lie inside a cycle.
func (g *Graph) InCycles() float64 {
	comp := map[string]int{}
	for i, c := range g.Cycles() {
		for _, f := range c {
			comp[f] = i + 1
		}
	}
	var in, all int
	for from, tos := range g.Refs {
		for to := range tos {
			all++
			if comp[from] != 0 && comp[from] == comp[to] {
				in++
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(in) / float64(all)
}
