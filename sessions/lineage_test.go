package sessions_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// lineageFromHeaders is what every header of the store says: each file's
// parentSession when that is a file of the store, by path.
func lineageFromHeaders(t *testing.T, x *sessions.Index) map[string]string {
	t.Helper()
	parents := map[string]string{}
	for _, f := range x.All() {
		if p, ok := parentPath(f); ok {
			if _, err := os.Stat(p); err == nil {
				parents[f.Path] = p
			}
		}
	}
	return parents
}

func parentPath(f *sessions.File) (string, bool) {
	if len(f.Header.ParentSession) < 2 || f.Header.ParentSession[0] != '"' {
		return "", false
	}
	return strings.Trim(string(f.Header.ParentSession), `"`), true
}

// checkLineage compares Parent and Forks of every session with the
// headers.
func checkLineage(t *testing.T, x *sessions.Index, want map[string]string) {
	t.Helper()
	forks := map[string][]string{}
	for child, parent := range want {
		forks[parent] = append(forks[parent], child)
	}
	for _, f := range x.All() {
		p, err := x.Parent(f)
		switch {
		case want[f.Path] == "":
			if !errors.Is(err, sessions.ErrNoParent) {
				t.Errorf("%s: parent %v, %v; its header names none in the store", f.Path, p, err)
			}
		case err != nil || p.Path != want[f.Path]:
			t.Errorf("%s: parent %v, %v; want %s", f.Path, p, err, want[f.Path])
		}
		var got []string
		for _, c := range x.Forks(f) {
			got = append(got, c.Path)
		}
		w := forks[f.Path]
		slices.Sort(got)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: forks %q, want %q", f.Path, got, w)
		}
	}
}

// TestLineagePi: the forks and clones pi wrote, in its default layout
// (a fork into another project) and in its flat one (a fork and a clone),
// are linked both ways as their headers say.
func TestLineagePi(t *testing.T) {
	oracle.Dir(t)
	store := t.TempDir()
	oracle.Corpus(t, store)
	flat := filepath.Join(t.TempDir(), "flat")
	oracle.FlatCorpus(t, flat)
	for _, dir := range []string{store, flat} {
		x := sessions.NewIndex(dir)
		want := lineageFromHeaders(t, x)
		if len(want) == 0 {
			t.Fatalf("%s: pi wrote no fork", dir)
		}
		checkLineage(t, x, want)
	}
	// Reading lineage reads no more than the index does for by-id/.
	x, y := sessions.NewIndex(store), sessions.NewIndex(store)
	for _, f := range x.All() {
		x.Forks(f)
		x.Parent(f)
	}
	y.All()
	hx := x.Stats().Headers
	hy := y.Stats().Headers
	if hx != hy {
		t.Errorf("lineage read %d headers, the index alone %d", hx, hy)
	}
}

// TestLineageClones: clones and copies pifs makes name their source by
// its path in the store; the index follows them as they come and go, and
// as their parent goes and comes back.
func TestLineageClones(t *testing.T) {
	store := t.TempDir()
	proj := filepath.Join(store, "--p--")
	os.MkdirAll(proj, 0o755)
	src := filepath.Join(proj, "src.jsonl")
	os.WriteFile(src, []byte(`{"type":"session","version":3,"id":"src","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"more"}}
`), 0o644)
	x := sessions.NewIndex(store)
	f, err := x.Lookup("--p--", "src")
	if err != nil {
		t.Fatal(err)
	}
	l, err := sessions.Open(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	tr := tree.New(l)
	clone, err := tr.BranchedLines("a1", "c1", sessions.Now(), "/p", f.Path)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := sessions.Create(proj, "c1.jsonl", clone...)
	if err != nil {
		t.Fatal(err)
	}
	// A copy into another project, flat at the top.
	c2, err := sessions.Create(store, "c2.jsonl", tr.ForkLines("c2", sessions.Now(), "/q", f.Path)...)
	if err != nil {
		t.Fatal(err)
	}
	x.Update(c1)
	x.Update(c2)
	want := map[string]string{c1: src, c2: src}
	checkLineage(t, x, want)

	// A clone of the clone.
	cf, _ := x.Lookup("--p--", "c1")
	c3, err := sessions.Create(proj, "c3.jsonl", sessions.HeaderLine("c3", sessions.Now(), "/p", cf.Path))
	if err != nil {
		t.Fatal(err)
	}
	x.Update(c3)
	want[c3] = c1
	checkLineage(t, x, want)

	// The parent goes (trashed, deleted): no link, and back again.
	os.Rename(src, src+".away")
	x.Update(src)
	if _, err := x.Parent(cf); !errors.Is(err, sessions.ErrNoParent) || !strings.Contains(err.Error(), "gone") {
		t.Errorf("parent gone: %v", err)
	}
	os.Rename(src+".away", src)
	x.Update(src)
	checkLineage(t, x, want)

	// A fork goes.
	os.Remove(c1)
	x.Update(c1)
	delete(want, c1)
	delete(want, c3) // its parent is gone
	checkLineage(t, x, want)
	if sf, _ := x.Lookup("--p--", "src"); len(x.Forks(sf)) != 1 {
		t.Errorf("forks of src after c1 went: %v", x.Forks(sf))
	}
}

// TestLineagePaths: a parent named through another path to the store (a
// symbolic link to it, its real path, a link to one of its project
// folders) is found; one outside the store is not, and says so; a header
// without a parent, or with one that is not an absolute path, has none.
func TestLineagePaths(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real")
	proj := filepath.Join(real, "--p--")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "a.jsonl"), []byte(`{"type":"session","version":3,"id":"a","cwd":"/p"}`+"\n"), 0o644)
	links := t.TempDir()
	viaStore := filepath.Join(links, "store")
	os.Symlink(real, viaStore)
	viaProject := filepath.Join(links, "project")
	os.Symlink(proj, viaProject)
	outside := filepath.Join(t.TempDir(), "o.jsonl")
	os.WriteFile(outside, []byte(`{"type":"session","version":3,"id":"o","cwd":"/p"}`+"\n"), 0o644)

	parents := map[string]string{
		"b1": filepath.Join(viaStore, "--p--", "a.jsonl"),
		"b2": filepath.Join(real, "--p--", "a.jsonl"),
		"b3": filepath.Join(viaProject, "a.jsonl"),
		"b4": filepath.Join(real, "--p--", ".", "x", "..", "a.jsonl"),
		"b5": outside,
		"b6": "--p--/a.jsonl",
	}
	for id, p := range parents {
		os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte(fmt.Sprintf(`{"type":"session","version":3,"id":%q,"cwd":"/p","parentSession":%q}`+"\n", id, p)), 0o644)
	}
	os.WriteFile(filepath.Join(proj, "b7.jsonl"), []byte(`{"type":"session","version":3,"id":"b7","cwd":"/p","parentSession":5}`+"\n"), 0o644)
	for _, store := range []string{real, viaStore} {
		x := sessions.NewIndex(store)
		a, err := x.Lookup("--p--", "a")
		if err != nil {
			t.Fatal(err)
		}
		var forks []string
		for _, f := range x.Forks(a) {
			forks = append(forks, f.Name)
		}
		if want := []string{"b1", "b2", "b3", "b4"}; !slices.Equal(forks, want) {
			t.Errorf("store %s: forks of a %q, want %q", store, forks, want)
		}
		for _, id := range []string{"b1", "b2", "b3", "b4"} {
			f, _ := x.Lookup("--p--", id)
			if p, err := x.Parent(f); err != nil || p.Name != "a" {
				t.Errorf("store %s: parent of %s: %v %v", store, id, p, err)
			}
		}
		for id, why := range map[string]string{"b5": "outside the store", "b6": "names none", "b7": "names none", "a": "names none"} {
			f, _ := x.Lookup("--p--", id)
			if _, err := x.Parent(f); !errors.Is(err, sessions.ErrNoParent) || !strings.Contains(err.Error(), why) {
				t.Errorf("store %s: parent of %s: %v; want %q", store, id, err, why)
			}
		}
	}
}
