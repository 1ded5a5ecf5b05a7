package view

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/gen"
)

// aheadStore makes projects of the same n sessions each.
func aheadStore(t testing.TB, projects []string, n int) *View {
	t.Helper()
	dir := t.TempDir()
	for _, project := range projects {
		if err := gen.Numbered(filepath.Join(dir, project), n, 40, 100); err != nil {
			t.Fatal(err)
		}
	}
	return New(Options{SessionsDir: dir, CacheBytes: 256 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// statFile stats a file of session s%03d as ls -l does.
func statFile(t testing.TB, v *View, project string, i int, name string) {
	t.Helper()
	c, err := v.Lookup(newSessionDir(v, project, fmt.Sprintf("s%03d", i)), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Attr(c.Node(), nil); err != nil {
		t.Fatal(err)
	}
}

// settle waits until no session is being made ready ahead of a walk.
func settle(t testing.TB, v *View) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); v.cache.Stats().AheadBusy != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("reading ahead does not stop")
		}
	}
}

// TestUsageForWalk: a usage report asked for while ls -l walks the store
// (ls -l MNT/*/*/, which lists every project's folder first) reads the
// sessions of the projects listed as the walk will, parsed with the walked
// sizes counted, and scans the others; the reports are the same either
// way.
func TestUsageForWalk(t *testing.T) {
	const n = 8
	projects := []string{"--home-u-p--", "--home-u-q--", "--home-u-r--"}
	files := func(t *testing.T, v *View) map[string][]byte {
		reps, _, err := v.reports(time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		now := time.Unix(1e9, 0)
		for _, name := range []string{"sessions.json", "daily.csv", "models.csv"} {
			data, _ := reps.Root.File(name, now)
			out[name] = data
			for p, rep := range reps.Projects {
				data, _ := rep.File(name, now)
				out[p+"/"+name] = data
			}
		}
		return out
	}
	counted := func(t *testing.T, v *View, p string) (k int) {
		for i := 0; i < n; i++ {
			f, err := v.meta(p, fmt.Sprintf("s%03d", i))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := cache.RecordedSize(f, contextName); ok {
				k++
			}
		}
		return k
	}

	// Without a walk: every session is scanned.
	v := aheadStore(t, projects, n)
	want := files(t, v)
	if got := v.usage.Scanned.Load(); got != 3*n {
		t.Errorf("without a walk, %d sessions scanned, want %d", got, 3*n)
	}

	for _, tc := range []struct {
		name   string
		listed []string // project folders listed before the walk
		parsed []int    // sessions of each project counted, the others scanned
	}{
		{"every project listed", projects, []int{n, n, n}},
		{"one project listed", projects[:1], []int{n, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := aheadStore(t, projects, n)
			v.walk.Gap = time.Minute // one walk, however slow the machine
			for _, p := range tc.listed {
				if _, err := newProjectDir(v, p).list(); err != nil {
					t.Fatal(err)
				}
			}
			a := projects[0]
			statFile(t, v, a, 0, contextName)
			statFile(t, v, a, 1, contextName)
			settle(t, v)
			got := files(t, v)
			for k, data := range want {
				if string(got[k]) != string(data) {
					t.Errorf("%s differs from the report built without a walk", k)
				}
			}
			var scanned int64
			for i, p := range projects {
				if c := counted(t, v, p); c != tc.parsed[i] {
					t.Errorf("%s: %d of %d sessions counted, want %d", p, c, n, tc.parsed[i])
				}
				scanned += int64(n - tc.parsed[i])
			}
			if got := v.usage.Scanned.Load(); got != scanned {
				t.Errorf("%d sessions scanned, want %d", got, scanned)
			}
		})
	}
}

// TestByNameForWalk: by-name/ of a project asked for while ls -l or a glob
// walks the store parses the project's sessions as the walk will (their
// sizes counted) rather than reading each for its name, when the shell
// listed the project; it names the same sessions either way.
func TestByNameForWalk(t *testing.T) {
	const n = 6
	projects := []string{"--home-u-p--", "--home-u-q--"}
	build := func(t *testing.T) *View {
		v := aheadStore(t, projects, n)
		v.walk.Gap = time.Minute
		for i := 0; i < n; i += 2 {
			path := filepath.Join(v.opts.SessionsDir, projects[1], fmt.Sprintf("s%03d.jsonl", i))
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, `{"type":"session_info","id":"name%04d","parentId":null,"timestamp":"2025-05-12T11:00:00.000Z","name":"session %d"}`+"\n", i, i)
			f.Close()
		}
		return v
	}
	ref := build(t)
	want, err := ref.byName(projects[1])
	if err != nil || len(want) != n/2 {
		t.Fatalf("%d names (%v), want %d", len(want), err, n/2)
	}
	for _, listed := range []bool{true, false} {
		v := build(t)
		if _, err := newProjectDir(v, projects[0]).list(); err != nil {
			t.Fatal(err)
		}
		if listed {
			if _, err := newProjectDir(v, projects[1]).list(); err != nil {
				t.Fatal(err)
			}
		}
		statFile(t, v, projects[0], 0, contextName)
		statFile(t, v, projects[0], 1, contextName)
		settle(t, v)
		got, err := v.byName(projects[1])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("listed %v: %d names, want %d", listed, len(got), len(want))
		}
		for name, f := range want {
			if g := got[name]; g == nil || g.Name != f.Name {
				t.Errorf("listed %v: %s names %v, want %s", listed, name, g, f.Name)
			}
		}
		counted := 0
		for i := 0; i < n; i++ {
			f, err := v.meta(projects[1], fmt.Sprintf("s%03d", i))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := cache.RecordedSize(f, contextName); ok {
				counted++
			}
		}
		if want := map[bool]int{true: n, false: 0}[listed]; counted != want {
			t.Errorf("listed %v: %d of %d sessions counted, want %d", listed, counted, n, want)
		}
	}
}
