package sessions

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/oracle"
)

// listing is every name under dir, hidden ones too.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestImportReadByPi imports sessions pi wrote into a store of each
// layout: each lands byte for byte under its own name, pi's
// SessionManager.open reads it back as the session it was, pi's session
// list lists it, and the index finds it in the project it was copied to.
func TestImportReadByPi(t *testing.T) {
	oracle.Dir(t)
	src := t.TempDir()
	oracle.Corpus(t, src)
	files, _ := filepath.Glob(filepath.Join(src, "*", "*.jsonl"))
	if len(files) < 3 {
		t.Fatalf("corpus: %d files", len(files))
	}
	flatSrc := filepath.Join(t.TempDir(), "flat")
	flatFiles := oracle.FlatCorpus(t, flatSrc)

	for _, layout := range []string{"default", "flat"} {
		t.Run(layout, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "sessions")
			flat := layout == "flat"
			from := files[:3]
			if flat {
				from = nil
				for _, f := range flatFiles {
					if h, err := ReadHeader(f); err == nil && h.Cwd != "" {
						from = append(from, f)
					}
				}
			}
			var imported []string
			for _, f := range from {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				h, _ := ReadHeader(f)
				project := "--home-user-proj--"
				if flat {
					project = ProjectFolder(h.Cwd)
				}
				x := NewIndex(store)
				path, err := x.importBytes(flat, project, filepath.Base(f), data)
				if err != nil {
					t.Fatalf("import %s: %v", filepath.Base(f), err)
				}
				want := filepath.Join(store, project, filepath.Base(f))
				if flat {
					want = filepath.Join(store, filepath.Base(f))
				}
				if path != want {
					t.Errorf("imported to %s, want %s", path, want)
				}
				if got, _ := os.ReadFile(path); string(got) != string(data) {
					t.Errorf("%s: the bytes differ", path)
				}
				pi := oracle.Dump(t, path, false)
				if !pi.Valid || string(pi.Header) != string(h.Raw) {
					t.Errorf("pi reads %s: valid %v, header %s (%v)", path, pi.Valid, pi.Header, pi.Error)
				}
				if got, err := NewIndex(store).Lookup(project, strings.TrimSuffix(filepath.Base(f), ".jsonl")); err != nil || got.Header.ID != h.ID {
					t.Errorf("the index does not find %s in %s: %v", filepath.Base(f), project, err)
				}
				imported = append(imported, path)
			}
			// pi lists an imported file as it lists the original (it leaves
			// out sessions without a message).
			names := func(dir string) []string {
				var list []oracle.Listed
				if flat {
					list = oracle.ListAll(t, dir)
				} else {
					list = oracle.ListDefault(t, dir)
				}
				var out []string
				for _, l := range list {
					out = append(out, filepath.Base(l.Path))
				}
				sort.Strings(out)
				return out
			}
			var want []string
			srcListed := names(filepath.Dir(filepath.Dir(from[0])))
			if flat {
				srcListed = names(flatSrc)
			}
			for _, p := range imported {
				if slices.Contains(srcListed, filepath.Base(p)) {
					want = append(want, filepath.Base(p))
				}
			}
			sort.Strings(want)
			if got := names(store); len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("pi lists\n%q\nwant\n%q", got, want)
			}
			for _, n := range listing(t, store) {
				if strings.Contains(n, ".pifs-import") {
					t.Errorf("left behind: %s", n)
				}
			}
		})
	}
}

// TestImportNames: a name taken gets -1, -2… as pi's /import gives it,
// after the last dot's extension, whatever is at the name (a folder too).
func TestImportNames(t *testing.T) {
	oracle.Dir(t)
	store := t.TempDir()
	dir := filepath.Join(store, "--p--")
	session := func(id string) []byte {
		return []byte(fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}`+"\n", id))
	}
	os.MkdirAll(filepath.Join(dir, "a-3.jsonl"), 0o755)
	for _, n := range []string{"a.jsonl", "a-1.jsonl", "b.c.jsonl"} {
		os.WriteFile(filepath.Join(dir, n), session("old-"+n), 0o644)
	}
	src := t.TempDir()
	names := []string{"a.jsonl", "b.c.jsonl", "new.jsonl", "a-1.jsonl"}
	var srcs []string
	for i, n := range names {
		p := filepath.Join(src, n)
		os.WriteFile(p, session(fmt.Sprint("new", i)), 0o644)
		srcs = append(srcs, p)
	}
	for round := 0; round < 2; round++ {
		pi := oracle.ImportDest(t, dir, srcs...)
		for i, n := range names {
			// The content does not choose the name; a new id each round
			// (Index.Import refuses an id twice).
			got, err := importBytes(store, false, "--p--", n, session(fmt.Sprint("round", round, "-", i)))
			if err != nil {
				t.Fatalf("import %s: %v", n, err)
			}
			if got != pi[srcs[i]] {
				t.Errorf("round %d: %s imported to %s, pi's /import copies it to %s", round, n, got, pi[srcs[i]])
			}
		}
	}
	for _, n := range []string{"a.jsonl", "a-1.jsonl", "b.c.jsonl"} {
		if got, _ := os.ReadFile(filepath.Join(dir, n)); string(got) != string(session("old-"+n)) {
			t.Errorf("%s was replaced", n)
		}
	}
}

// TestImportRefused: what pi cannot open is refused whole, with the
// reason, and so is a file pi can open whose id is in the store already,
// a name pi does not list, and a session a flat store would list in
// another project; nothing is left in the store. pi's SessionManager.open
// agrees on every file content (an empty file aside, which pi makes a new
// session of).
func TestImportRefused(t *testing.T) {
	oracle.Dir(t)
	const header = `{"type":"session","version":3,"id":"s1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n"
	contents := []struct {
		name, data string
		ok         bool
	}{
		{"garbage", "hello\nworld\n", false},
		{"entry first", `{"type":"message","id":"m"}` + "\n" + header, false},
		{"id not a string", `{"type":"session","version":3,"id":5}` + "\n", false},
		{"v1 with a string line", `{"type":"session","id":"v1s","cwd":"/p"}` + "\n" + `{"type":"message","message":{"role":"user","content":"x"}}` + "\n\"text\"\n", false},
		{"v1 with a number line", `{"type":"session","id":"v1n","cwd":"/p"}` + "\n7\n", false},
		{"v1 with an array line", `{"type":"session","id":"v1a","cwd":"/p"}` + "\n[1,2]\n", true},
		{"v1 with falsy lines", `{"type":"session","id":"v1f","cwd":"/p"}` + "\n0\nnull\nfalse\n\"\"\n", true},
		{"v3 with a number line", `{"type":"session","version":3,"id":"v3n","cwd":"/p"}` + "\n7\n", true},
		{"junk before the header", "\n{bad\nnull\n" + `{"type":"session","version":3,"id":"j","cwd":"/p"}`, true},
		{"empty", "", false},
	}
	store := filepath.Join(t.TempDir(), "sessions")
	os.MkdirAll(filepath.Join(store, "--p--"), 0o755)
	os.WriteFile(filepath.Join(store, "--p--", "s1.jsonl"), []byte(header), 0o644)
	before := listing(t, store)
	for _, c := range contents {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "x.jsonl")
			os.WriteFile(f, []byte(c.data), 0o644)
			pi := oracle.Dump(t, f, false)
			h, err := CheckImport([]byte(c.data))
			if (err == nil) != c.ok {
				t.Fatalf("CheckImport: %v, want ok %v", err, c.ok)
			}
			if c.data == "" {
				if !pi.Empty {
					t.Errorf("pi does not take it as empty: %+v", pi)
				}
			} else if pi.Valid != c.ok {
				t.Errorf("pi opens it: %v (%v); pifs: %v", pi.Valid, pi.Error, err)
			}
			if err != nil {
				if !errors.Is(err, ErrNotSession) {
					t.Errorf("error %v is not ErrNotSession", err)
				}
				if _, ierr := NewIndex(store).importBytes(false, "--p--", "x.jsonl", []byte(c.data)); ierr == nil || ierr.Error() != err.Error() {
					t.Errorf("Import: %v", ierr)
				}
				if after := listing(t, store); !slices.Equal(after, before) {
					t.Errorf("the store changed:\n%q\nwas\n%q", after, before)
				}
				return
			}
			if h == nil {
				t.Fatal("no header")
			}
		})
	}

	refusals := []struct {
		what          string
		flat          bool
		project, name string
		data          string
		want          error
	}{
		{"duplicate id", false, "--p--", "copy.jsonl", header, ErrDuplicate},
		{"not .jsonl", false, "--p--", "x.txt", `{"type":"session","version":3,"id":"n1","cwd":"/p"}`, ErrImportName},
		{"only .jsonl", false, "--p--", ".jsonl", `{"type":"session","version":3,"id":"n2","cwd":"/p"}`, ErrImportName},
		{"a slash", false, "--p--", "a/b.jsonl", `{"type":"session","version":3,"id":"n3","cwd":"/p"}`, ErrImportName},
		{"flat, other project", true, "--p--", "o.jsonl", `{"type":"session","version":3,"id":"n4","cwd":"/elsewhere"}`, ErrOtherProject},
	}
	for _, r := range refusals {
		_, err := NewIndex(store).importBytes(r.flat, r.project, r.name, []byte(r.data))
		if !errors.Is(err, r.want) {
			t.Errorf("%s: %v, want %v", r.what, err, r.want)
		}
		if after := listing(t, store); !slices.Equal(after, before) {
			t.Errorf("%s: the store changed:\n%q\nwas\n%q", r.what, after, before)
		}
	}
	// The duplicate's error names the session it duplicates by its by-id/
	// link (which the mount shows only to whoever may read it), never by
	// its project and file, and says the way out.
	_, err := NewIndex(store).importBytes(false, "--p--", "copy.jsonl", []byte(header))
	if err == nil || !strings.Contains(err.Error(), "by-id/s1") || strings.Contains(err.Error(), "--p--") || !strings.Contains(err.Error(), "fork") {
		t.Errorf("duplicate: %v", err)
	}
	// In a flat store, a session of the project goes to the top.
	path, err := NewIndex(store).importBytes(true, "--p--", "f.jsonl", []byte(`{"type":"session","version":3,"id":"f1","cwd":"/p"}`))
	if err != nil || path != filepath.Join(store, "f.jsonl") {
		t.Errorf("flat import: %s %v", path, err)
	}
}

// TestImportRefusesUnresumable: a file whose entries above its last form a
// parent cycle is one pi's SessionManager.open takes but pi cannot resume:
// its buildSessionContext walks the cycle until V8 gives up (run here, in
// a node of 64 MiB heap, which it kills). Such a file is refused with the
// reason, from bytes and from a file (of more than the first MiB too);
// a cycle away from the way up from the last entry, which pi resumes, is
// taken.
func TestImportRefusesUnresumable(t *testing.T) {
	dir := oracle.Dir(t)
	script, _ := filepath.Abs(filepath.Join("testdata", "pi_resume.mjs"))
	const header = `{"type":"session","version":3,"id":"cyc","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n"
	msg := func(id, parent string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"` + id + `","timestamp":1704067201000}}` + "\n"
	}
	pad := strings.Repeat(msg("r0", "")+msg("r1", "r0"), 5000) // past the first MiB
	for _, c := range []struct {
		what, body string
		resumes    bool
	}{
		{"only a cycle", msg("a1", "a2") + msg("a2", "a1"), false},
		{"a cycle of one", msg("a1", "a1"), false},
		{"a leaf under a cycle", msg("r", "") + msg("c1", "c2") + msg("c2", "c1") + msg("x", "c1"), false},
		{"a cycle through a later duplicate", msg("a1", "") + msg("a2", "a1") + msg("a1", "a2") + msg("x", "a2"), false},
		{"a large file ending in a cycle", pad + msg("c1", "c2") + msg("c2", "c1"), false},
		{"a cycle off the way up", msg("c1", "c2") + msg("c2", "c1") + msg("r", "") + msg("x", "r"), true},
		{"a leaf under a broken parent", msg("a1", "gone") + msg("a2", "a1"), true},
	} {
		t.Run(c.what, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.jsonl")
			os.WriteFile(file, []byte(header+c.body), 0o644)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			node := exec.CommandContext(ctx, "node", "--max-old-space-size=64", script, file)
			node.Env = append(os.Environ(), "PIFS_ORACLE_DIR="+dir)
			out, err := node.CombinedOutput()
			opened, resumed := strings.Contains(string(out), "opened "), strings.Contains(string(out), "resumed ")
			if !opened {
				t.Fatalf("pi does not open it: %v\n%.2000s", err, out)
			}
			if resumed != c.resumes || (err == nil) != c.resumes {
				t.Fatalf("pi resumes it: %v (%v), want %v\n%.2000s", resumed, err, c.resumes, out)
			}
			_, berr := CheckImport([]byte(header + c.body))
			_, ferr := checkImportFile(file)
			for _, err := range []error{berr, ferr} {
				if c.resumes && err != nil {
					t.Errorf("refused, though pi resumes it: %v", err)
				}
				if !c.resumes && (!errors.Is(err, ErrUnresumable) || !errors.Is(err, ErrNotSession) || !strings.Contains(fmt.Sprint(err), "parent cycle")) {
					t.Errorf("taken, though pi cannot resume it: %v", err)
				}
			}
			if !c.resumes {
				t.Logf("pi: %v; pifs: %v", err, ferr)
			}
		})
	}
}
