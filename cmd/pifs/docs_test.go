package main

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/mangen"
)

// The reference and the man page made from it, from this package's folder.
var (
	referencePath = filepath.Join("..", "..", "docs", "reference.md")
	manPagePath   = filepath.Join("..", "..", "pifs.1")
)

func readDoc(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestManPageGenerated: pifs.1 is exactly what the generator makes of
// docs/reference.md, so that the man page never drifts from the reference.
func TestManPageGenerated(t *testing.T) {
	want, err := mangen.Reference([]byte(readDoc(t, referencePath)))
	if err != nil {
		t.Fatalf("docs/reference.md: %v", err)
	}
	if got := readDoc(t, manPagePath); got != string(want) {
		t.Errorf("pifs.1 is not what docs/reference.md makes: run go generate ./cmd/pifs (first difference at line %d)", firstDiffLine(got, string(want)))
	}
}

func firstDiffLine(a, b string) int {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// TestManPage: pifs.1 renders without a warning and has the sections and
// words users look for.
func TestManPage(t *testing.T) {
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed (apt-get install groff-base)")
	}
	out, err := exec.Command("groff", "-man", "-ww", "-z", manPagePath).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww -z: %v\n%s", err, out)
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", manPagePath)
	cmd.Env = append(os.Environ(), "MANWIDTH=80")
	text, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	plain := strings.NewReplacer("\u2010", "-", "\u2212", "-").Replace(stripOverstrike(string(text)))
	for _, want := range []string{"SYNOPSIS", "DESCRIPTION", "OPTIONS", "MOUNT OPTIONS", "ENVIRONMENT", "FILES", "CONTROLS",
		"ERRORS", "EXIT STATUS", "EXAMPLES", "FSTAB", "SYSTEMD",
		"--cache-size", "--log-file", "--nonempty", "--pid-file", "--version", "fusermount3 -u",
		"name", "leaf", "append", "fork", "new", "labels/", "by-cwd", "errors", "Type=notify", "EROFS", "%2F"} {
		if !strings.Contains(plain, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
}

// stripOverstrike removes grotty's bold and underline overstrikes.
func stripOverstrike(s string) string {
	r := []rune(s)
	var out []rune
	for i := 0; i < len(r); i++ {
		if i+1 < len(r) && r[i+1] == '\b' {
			i++
			continue
		}
		out = append(out, r[i])
	}
	return string(out)
}

// mdSection is the text of a "## title" section of a Markdown page.
func mdSection(t *testing.T, md, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("docs/reference.md has no section %q", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// manSection is the roff of a .SH section of the man page.
func manSection(t *testing.T, page, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, "\n.SH "+strconv.Quote(title)+"\n")
	if !ok {
		_, rest, ok = strings.Cut(page, "\n.SH "+title+"\n")
	}
	if !ok {
		t.Fatalf("pifs.1 has no section %q", title)
	}
	if i := strings.Index(rest, "\n.SH "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

var codeSpan = regexp.MustCompile("`([^`\\n]+)`")

// tableTags are the code spans of the first cell of each row of the
// tables in a section; plain is the first cell when it holds none.
func tableTags(section string) (tags [][]string, plain []string) {
	body := false
	for _, l := range strings.Split(section, "\n") {
		switch {
		case !strings.HasPrefix(l, "|"):
			body = false
		case !body:
			body = strings.HasPrefix(l, "|-") || strings.HasPrefix(l, "| -")
		default:
			first := strings.TrimSpace(strings.Split(strings.TrimPrefix(l, "|"), "|")[0])
			var spans []string
			for _, m := range codeSpan.FindAllStringSubmatch(first, -1) {
				spans = append(spans, m[1])
			}
			tags = append(tags, spans)
			plain = append(plain, first)
		}
	}
	return tags, plain
}

// realFlags are the flags of the real command line, as --help lists them
// from the flag set: each as its long form and its shorthand, if any.
func realFlags(t *testing.T) map[string]string {
	t.Helper()
	var help bytes.Buffer
	if _, done, err := parseArgs([]string{"--help"}, &help); err != nil || !done {
		t.Fatalf("--help: %v", err)
	}
	flags := map[string]string{}
	re := regexp.MustCompile(`^  (?:(-[a-zA-Z]), )?\s*(--[a-z-]+)`)
	for _, l := range strings.Split(help.String(), "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			flags[m[2]] = m[1]
		}
	}
	if len(flags) < 10 {
		t.Fatalf("found %d flags in --help:\n%s", len(flags), help.String())
	}
	return flags
}

// TestDocsFlags: every flag of the real command line, with its shorthand,
// is in the reference's Options table and in the man page's OPTIONS, and
// the table names no flag the command does not have.
func TestDocsFlags(t *testing.T) {
	flags := realFlags(t)
	ref := readDoc(t, referencePath)
	man := manSection(t, readDoc(t, manPagePath), "OPTIONS")
	documented := map[string]bool{}
	tags, _ := tableTags(mdSection(t, ref, "Options"))
	for _, row := range tags {
		for _, span := range row {
			documented[strings.Fields(span)[0]] = true
		}
	}
	for long, short := range flags {
		for _, f := range []string{long, short} {
			if f == "" {
				continue
			}
			if !documented[f] {
				t.Errorf("docs/reference.md's Options table lacks %s", f)
			}
			if !strings.Contains(man, `\fB`+strings.ReplaceAll(f, "-", `\-`)) {
				t.Errorf("the man page's OPTIONS lacks %s", f)
			}
		}
	}
	for f := range documented {
		if _, long := flags[f]; !long && !slices.Contains(mapValues(flags), f) {
			t.Errorf("docs/reference.md documents %s, which pifs --help does not list", f)
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// exitCodes are the exit* constants of this package's code, by value.
func exitCodes(t *testing.T) map[int]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "exit") {
						continue
					}
					var lit *ast.BasicLit
					if i < len(vs.Values) {
						lit, _ = vs.Values[i].(*ast.BasicLit)
					}
					if lit == nil || lit.Kind != token.INT {
						t.Fatalf("%s: the exit code %s is not an integer literal; this test reads them as such", name, id.Name)
					}
					n, _ := strconv.Atoi(lit.Value)
					codes[n] = id.Name
				}
			}
		}
	}
	if len(codes) < 5 {
		t.Fatalf("found only the exit codes %v", codes)
	}
	return codes
}

// TestDocsExitCodes: the exit codes the code defines are exactly those of
// the reference's Exit status table, the man page's EXIT STATUS and
// --help's "Exit status:".
func TestDocsExitCodes(t *testing.T) {
	codes := exitCodes(t)
	_, plain := tableTags(mdSection(t, readDoc(t, referencePath), "Exit status"))
	var help bytes.Buffer
	parseArgs([]string{"--help"}, &help)
	_, helpExit, _ := strings.Cut(help.String(), "\nExit status:\n")
	man := manSection(t, readDoc(t, manPagePath), "EXIT STATUS")
	lists := map[string][]int{}
	for _, c := range plain {
		n, err := strconv.Atoi(c)
		if err != nil {
			t.Errorf("docs/reference.md's Exit status table has a row %q", c)
		}
		lists["docs/reference.md's Exit status"] = append(lists["docs/reference.md's Exit status"], n)
	}
	for _, m := range regexp.MustCompile(`(?m)^\.TP\n\\fB([0-9]+)\\fR$|^([0-9]+)$`).FindAllStringSubmatch(man, -1) {
		n, _ := strconv.Atoi(m[1] + m[2])
		lists["the man page's EXIT STATUS"] = append(lists["the man page's EXIT STATUS"], n)
	}
	for _, m := range regexp.MustCompile(`(?m)^  ([0-9]+)  `).FindAllStringSubmatch(helpExit, -1) {
		n, _ := strconv.Atoi(m[1])
		lists["pifs --help's Exit status"] = append(lists["pifs --help's Exit status"], n)
	}
	for _, where := range []string{"docs/reference.md's Exit status", "the man page's EXIT STATUS", "pifs --help's Exit status"} {
		got := lists[where]
		for n, name := range codes {
			if !slices.Contains(got, n) {
				t.Errorf("%s lacks exit code %d (%s)", where, n, name)
			}
		}
		for _, n := range got {
			if _, ok := codes[n]; !ok {
				t.Errorf("%s lists exit code %d, which the code does not define", where, n)
			}
		}
	}
}

// ownOptions are the -o options that main.go reads itself (the keys it
// compares with), found in its source.
func ownOptions(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ast.Inspect(f, func(n ast.Node) bool {
		if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.EQL {
			if id, ok := b.X.(*ast.Ident); ok && id.Name == "key" {
				if lit, ok := b.Y.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					keys = append(keys, s)
				}
			}
		}
		return true
	})
	if len(keys) < 5 {
		t.Fatalf("found only the -o options %v in main.go (compared with key): update ownOptions", keys)
	}
	return keys
}

// TestDocsMountOptions: the -o options of the reference are those pifs
// takes. Each one the reference lists is accepted by the real binary (it
// gets as far as the mountpoint check) and auto_unmount is refused; each
// that main.go reads itself and each that --help names is in the reference.
func TestDocsMountOptions(t *testing.T) {
	tags, _ := tableTags(mdSection(t, readDoc(t, referencePath), "Mount options"))
	var documented []string
	for _, row := range tags {
		documented = append(documented, row...)
	}
	has := func(opt string) bool {
		key, _, _ := strings.Cut(opt, "=")
		for _, d := range documented {
			dkey, _, _ := strings.Cut(d, "=")
			if ok, _ := path.Match(dkey, key); ok || dkey == key {
				return true
			}
		}
		return false
	}
	for _, key := range ownOptions(t) {
		if !has(key) {
			t.Errorf("docs/reference.md's Mount options lacks -o %s, which main.go reads", key)
		}
	}
	var help bytes.Buffer
	parseArgs([]string{"--help"}, &help)
	_, opts, _ := strings.Cut(help.String(), "\nMount options")
	opts, _, _ = strings.Cut(opts, "\n\n")
	for _, w := range regexp.MustCompile(`[a-z_][a-z0-9_.*=A-Z-]*`).FindAllString(opts, -1) {
		if strings.ContainsAny(w, "_=") || strings.HasPrefix(w, "x-") {
			if !has(w) {
				t.Errorf("pifs --help names -o %s, which docs/reference.md's Mount options lacks", w)
			}
		}
	}

	bin := buildPifs(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	notDir := filepath.Join(dir, "file")
	os.Mkdir(store, 0o755)
	os.WriteFile(notDir, nil, 0o644)
	values := strings.NewReplacer("=N", "=4096", "=SIZE", "=64MiB", "=FILE", "="+filepath.Join(dir, "f"),
		"=DIR", "="+store, "=INTERVAL", "=1s", "=TEXT", "=x", "=USER", "=root")
	for _, opt := range documented {
		if strings.Contains(opt, "*") {
			continue
		}
		opt = values.Replace(opt)
		cmd := exec.Command(bin, "--sessions-dir", store, "-o", opt, notDir)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		want := exitMountpoint
		if opt == "auto_unmount" {
			want = exitUsage
		}
		if code != want {
			t.Errorf("pifs -o %s on a mountpoint that is a file: exit %d, want %d\n%s", opt, code, want, out)
		}
	}
}

// TestSystemdUnit: contrib/pifs.service passes systemd-analyze verify,
// with ExecStart pointed at the built binary.
func TestSystemdUnit(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed (Debian package systemd)")
	}
	unit, err := os.ReadFile(filepath.Join("..", "..", "contrib", "pifs.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "\nType=notify\n") || !strings.Contains(string(unit), "\nExecStart=/usr/local/bin/pifs ") {
		t.Errorf("the unit is not Type=notify with ExecStart=/usr/local/bin/pifs")
	}
	path := filepath.Join(t.TempDir(), "pifs.service")
	os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/pifs", buildPifs(t))), 0o644)
	if out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestDocsNameRealThings: every test, fuzz target and benchmark the docs
// name exists, and so does every file of the repository they name (as a
// `path/in/the/repo` with a top-level folder of the repository) or link
// to, so that the docs follow when code moves.
func TestDocsNameRealThings(t *testing.T) {
	root := filepath.Join("..", "..")
	funcs := map[string]bool{}
	topDirs := map[string]bool{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			topDirs[e.Name()] = true
		}
	}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)\(`)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range funcRE.FindAllStringSubmatch(string(b), -1) {
				funcs[m[1]] = true
			}
		}
		return nil
	})
	// Paths that git ignores (bench/out/) are made by running something.
	var ignored []string
	for _, l := range strings.Split(readDoc(t, filepath.Join(root, ".gitignore")), "\n") {
		if strings.HasPrefix(l, "/") {
			ignored = append(ignored, strings.TrimPrefix(l, "/"))
		}
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "bench", "README.md"))
	nameRE := regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*`)
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text := readDoc(t, page)
		rel, _ := filepath.Rel(root, page)
		for _, name := range nameRE.FindAllString(text, -1) {
			if !funcs[name] {
				t.Errorf("%s names %s, which no test file defines", rel, name)
			}
		}
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s: %v", rel, m[1], err)
			}
		}
		if strings.HasSuffix(page, "reference.md") || strings.HasSuffix(page, "recipes.md") {
			continue // their paths are the mount's
		}
		for _, m := range codeSpan.FindAllStringSubmatch(withoutFences(text), -1) {
			p := m[1]
			first, _, found := strings.Cut(p, "/")
			if !found || !topDirs[first] || strings.ContainsAny(p, "<>*$~ …") ||
				slices.ContainsFunc(ignored, func(g string) bool { return strings.HasPrefix(p, g) }) {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("%s names %s, which is not in the repository", rel, p)
			}
		}
	}
}

// withoutFences is a Markdown page without its fenced code blocks.
func withoutFences(md string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
