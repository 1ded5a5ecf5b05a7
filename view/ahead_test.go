package view

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
)

// aheadRoot makes a project of n sessions of a few dozen entries, lists
// it, and reads ahead window sessions (and no further: see TestAheadFurther).
func aheadRoot(t testing.TB, n, window int) (*View, string) {
	t.Helper()
	project := "--home-u-p--"
	v := aheadStore(t, []string{project}, n, window)
	if _, err := v.st.sessionFiles(project); err != nil {
		t.Fatal(err)
	}
	return v, project
}

// aheadStore makes projects of the same n sessions each, and reads ahead
// window sessions.
func aheadStore(t testing.TB, projects []string, n, window int) *View {
	t.Helper()
	dir := t.TempDir()
	for _, project := range projects {
		os.MkdirAll(filepath.Join(dir, project), 0o755)
		for i := 0; i < n; i++ {
			f, err := os.Create(filepath.Join(dir, project, fmt.Sprintf("s%03d.jsonl", i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := gen.Session(f, 40, 100); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	v := New(Options{SessionsDir: dir, CacheBytes: 256 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	v.ahead.window, v.ahead.far = window, window
	return v
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

// readFile reads a file of session s%03d as cat does.
func readFile(t testing.TB, v *View, project string, i int, name string) {
	t.Helper()
	c, err := v.Lookup(newSessionDir(v, project, fmt.Sprintf("s%03d", i)), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Node().(*contextFile).content(); err != nil {
		t.Fatal(err)
	}
}

func settle(t testing.TB, v *View) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !v.ahead.idle(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("reading ahead does not stop")
		}
	}
}

// parsedSet is which of n sessions are in the cache.
func parsedSet(v *View, project string, n int) string {
	b := make([]byte, n)
	for i := range b {
		f, err := v.st.meta(project, fmt.Sprintf("s%03d", i))
		b[i] = '.'
		if err == nil && v.st.isParsed(sessionKey{path: f.Path}) {
			b[i] = 'P'
		}
	}
	return string(b)
}

// TestAheadWalk: statting a view in two sessions in a row, either way,
// makes that view of the next window sessions ready, once each; a walk
// then parses no session twice and finds the rest counted.
func TestAheadWalk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		order []int
		want  string // parsed after the first two
	}{
		{"forward", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "PPPPP....."},
		{"backward", []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, ".....PPPPP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, p := aheadRoot(t, 10, 3)
			statFile(t, v, p, tc.order[0], contextName)
			statFile(t, v, p, tc.order[1], contextName)
			settle(t, v)
			if got := parsedSet(v, p, 10); got != tc.want {
				t.Fatalf("after two sessions, parsed %s, want %s", got, tc.want)
			}
			for _, i := range tc.order[2:] {
				f, _ := v.st.meta(p, fmt.Sprintf("s%03d", i))
				if _, ok := recordedSize(f, contextName); !ok {
					t.Errorf("s%03d: context.json not counted ahead", i)
				}
				statFile(t, v, p, i, contextName)
				settle(t, v)
			}
			if n := v.st.opened.Load(); n != 10 {
				t.Errorf("a walk of 10 sessions parsed %d times, want 10", n)
			}
			if n := v.ahead.ran.Load(); n != 8 {
				t.Errorf("%d sessions read ahead, want 8", n)
			}
		})
	}
}

// TestAheadFurther: once its window is done, reading ahead goes on, one
// session at a time, up to far sessions ahead of the walk and farBytes of
// their files; when the walk moves on, so does the reach.
func TestAheadFurther(t *testing.T) {
	v, p := aheadRoot(t, 20, 2)
	v.ahead.far = 6
	statFile(t, v, p, 0, contextName)
	statFile(t, v, p, 1, contextName)
	settle(t, v)
	if got, want := parsedSet(v, p, 20), "PPPPPPPP............"; got != want {
		t.Errorf("after two sessions, parsed %s, want %s", got, want)
	}
	statFile(t, v, p, 2, contextName)
	settle(t, v)
	if got, want := parsedSet(v, p, 20), "PPPPPPPPP..........."; got != want {
		t.Errorf("after three sessions, parsed %s, want %s", got, want)
	}
	if n := v.st.opened.Load(); n != 9 {
		t.Errorf("%d parses, want 9 (each session once)", n)
	}

	v, p = aheadRoot(t, 20, 2)
	v.ahead.far = 6
	f, _ := v.st.meta(p, "s002")
	v.ahead.farBytes = 3*f.Sig.Size + f.Sig.Size/2 // the files are about the same size
	statFile(t, v, p, 0, contextName)
	statFile(t, v, p, 1, contextName)
	settle(t, v)
	if got, want := parsedSet(v, p, 20), "PPPPP..............."; got != want {
		t.Errorf("with farBytes of three files, parsed %s, want %s", got, want)
	}
}

// TestAheadAlone: sessions looked at out of order, or in a project not
// listed, start nothing; nor does a session too large to read ahead.
func TestAheadAlone(t *testing.T) {
	v, p := aheadRoot(t, 10, 3)
	for _, i := range []int{3, 7, 1, 5, 5, 2, 9} {
		statFile(t, v, p, i, contextName)
	}
	settle(t, v)
	if n := v.ahead.ran.Load(); n != 0 {
		t.Errorf("sessions out of order read %d ahead, want none", n)
	}
	if got := parsedSet(v, p, 10); got != ".PPP.P.P.P" {
		t.Errorf("parsed %s, want the six looked at", got)
	}

	v, p = aheadRoot(t, 10, 3)
	v.ahead.max = 100
	statFile(t, v, p, 0, contextName)
	statFile(t, v, p, 1, contextName)
	settle(t, v)
	if n := v.ahead.ran.Load(); n != 0 {
		t.Errorf("sessions over the limit: %d read ahead, want none", n)
	}

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, p), 0o755)
	for i := 0; i < 4; i++ {
		os.WriteFile(filepath.Join(dir, p, fmt.Sprintf("s%03d.jsonl", i)),
			[]byte(`{"type":"session","version":3,"id":"x`+fmt.Sprint(i)+`","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`+"\n"), 0o644)
	}
	v = New(Options{SessionsDir: dir, CacheBytes: 256 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	statFile(t, v, p, 0, contextName)
	statFile(t, v, p, 1, contextName)
	settle(t, v)
	if _, listed := v.st.x.Listed(p); v.ahead.ran.Load() != 0 || listed {
		t.Errorf("a project not listed: %d read ahead, listed %v; want none, not listed", v.ahead.ran.Load(), listed)
	}
}

// TestAheadRead: reading a view in two sessions in a row keeps that
// view's rendering of the next sessions, which the walk then takes.
func TestAheadRead(t *testing.T) {
	v, p := aheadRoot(t, 6, 2)
	for i := 0; i < 6; i++ {
		readFile(t, v, p, i, contextName)
		settle(t, v)
		if i >= 1 && i+1 < 6 {
			var held bool
			v.st.withSession(p, fmt.Sprintf("s%03d", i+1), func(ss *session) error {
				_, held = ss.renders[contextName]
				return nil
			})
			if !held {
				t.Errorf("after reading s%03d, s%03d's context.json is not rendered", i, i+1)
			}
		}
	}
	if n := v.st.opened.Load(); n != 6 {
		t.Errorf("reading 6 sessions parsed %d times, want 6", n)
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
		reps, _, err := v.st.reports(time.UTC, v.ahead)
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
			f, err := v.st.meta(p, fmt.Sprintf("s%03d", i))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := recordedSize(f, contextName); ok {
				k++
			}
		}
		return k
	}

	// Without a walk: every session is scanned.
	v := aheadStore(t, projects, n, 2)
	want := files(t, v)
	if got := v.st.usage.scanned.Load(); got != 3*n {
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
			v := aheadStore(t, projects, n, 2)
			v.walk.gap = time.Minute // one walk, however slow the machine
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
			if got := v.st.usage.scanned.Load(); got != scanned {
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
		v := aheadStore(t, projects, n, 2)
		v.walk.gap = time.Minute
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
	want, err := ref.st.byName(projects[1], nil)
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
		got, err := v.st.byName(projects[1], v.ahead)
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
			f, err := v.st.meta(projects[1], fmt.Sprintf("s%03d", i))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := recordedSize(f, contextName); ok {
				counted++
			}
		}
		if want := map[bool]int{true: n, false: 0}[listed]; counted != want {
			t.Errorf("listed %v: %d of %d sessions counted, want %d", listed, counted, n, want)
		}
	}
}
