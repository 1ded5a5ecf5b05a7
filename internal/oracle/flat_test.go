package oracle

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func paths(l []Listed) []string {
	var p []string
	for _, s := range l {
		p = append(p, s.Path)
	}
	sort.Strings(p)
	return p
}

func TestFlatCorpus(t *testing.T) {
	Dir(t)
	dir := filepath.Join(t.TempDir(), "chosen")
	files := FlatCorpus(t, dir)
	// 4 cwds, a fork, a clone; notes.jsonl is not a session.
	if len(files) != 7 {
		t.Fatalf("wrote %d .jsonl files, want 7: %q", len(files), files)
	}
	for _, f := range files {
		if filepath.Dir(f) != dir {
			t.Errorf("%s is not at the top of %s", f, dir)
		}
	}
	all := ListAll(t, dir)
	if got := paths(all); len(got) != 6 || strings.Join(got, "\n") != strings.Join(without(files, "notes.jsonl"), "\n") {
		t.Fatalf("listAll = %q, want every file but notes.jsonl", got)
	}
	cwds := map[string]int{}
	var forks, named int
	for _, s := range all {
		cwds[s.Cwd]++
		if s.ParentSessionPath != nil {
			forks++
		}
		if s.Name != nil {
			named++
		}
		if s.MessageCount == 0 || s.FirstMessage == "(no messages)" {
			t.Errorf("%s: no messages: %+v", s.Path, s.Info)
		}
	}
	want := map[string]int{"/home/user/proj": 2, "/home/user/other": 2, "/tmp/with space/v1.2:beta/ünïcødé": 1, "/": 1}
	if len(cwds) != len(want) {
		t.Errorf("cwds = %v, want %v", cwds, want)
	}
	for c, n := range want {
		if cwds[c] != n {
			t.Errorf("cwds = %v, want %v", cwds, want)
		}
	}
	if forks != 2 || named != 2 {
		t.Errorf("%d sessions with a parent (want the fork and the clone), %d named (want the session and its fork)", forks, named)
	}
	// list(cwd, dir) filters on the header cwd; a trailing slash resolves away.
	if got := List(t, "/home/user/proj/", dir); len(got) != 2 {
		t.Errorf("list(/home/user/proj/) = %d sessions, want 2", len(got))
	}

	// Reproducible: a second run writes the same bytes (parent paths aside).
	dir2 := filepath.Join(t.TempDir(), "chosen")
	files2 := FlatCorpus(t, dir2)
	if len(files2) != len(files) {
		t.Fatalf("second run wrote %d files, first %d", len(files2), len(files))
	}
	for i := range files {
		a, _ := os.ReadFile(files[i])
		b, _ := os.ReadFile(files2[i])
		if filepath.Base(files[i]) != filepath.Base(files2[i]) || strings.ReplaceAll(string(a), dir, "") != strings.ReplaceAll(string(b), dir2, "") {
			t.Errorf("%s differs between runs", filepath.Base(files[i]))
		}
	}
}

func without(files []string, base string) []string {
	var out []string
	for _, f := range files {
		if filepath.Base(f) != base {
			out = append(out, f)
		}
	}
	return out
}

func TestMixedCorpus(t *testing.T) {
	Dir(t)
	dir := filepath.Join(t.TempDir(), "sessions")
	files := MixedCorpus(t, dir)
	var top, nested []string
	for _, f := range files {
		switch filepath.Dir(f) {
		case dir:
			if filepath.Base(f) != "notes.jsonl" {
				top = append(top, f)
			}
		default:
			nested = append(nested, f)
		}
	}
	if len(top) != 6 || len(nested) != 6 {
		t.Fatalf("%d flat and %d nested sessions, want 6 and 6: %q", len(top), len(nested), files)
	}
	// pi lists the two halves with two calls: listAll(dir) the flat ones,
	// listAll() (dir as the default store) those in folders.
	if got := paths(ListAll(t, dir)); strings.Join(got, "\n") != strings.Join(top, "\n") {
		t.Errorf("listAll(dir) = %q, want %q", got, top)
	}
	if got := paths(ListDefault(t, dir)); strings.Join(got, "\n") != strings.Join(nested, "\n") {
		t.Errorf("listAll() = %q, want %q", got, nested)
	}
	// In the default layout the clone lands next to its source, the fork in
	// the target cwd's folder.
	for _, s := range ListDefault(t, dir) {
		if s.ParentSessionPath == nil {
			continue
		}
		if got := filepath.Base(filepath.Dir(s.Path)); (s.Cwd == "/home/user/proj") != (got == "--home-user-proj--") {
			t.Errorf("%s (cwd %s) is in folder %s", s.Path, s.Cwd, got)
		}
	}
}
