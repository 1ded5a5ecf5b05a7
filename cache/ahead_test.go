package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
)

// What a walk asks of each session in these tests: the size of its
// context at the leaf (context.json), as a stat counts it, or its
// rendering, as a read makes it.
const contextName = "context.json"

var contextSize = Work{Key: contextName, Count: func(s *Session) int64 { return render.ContextSize(s.Tree.Context()) }}

var contextRead = Work{Key: contextName, Make: func(s *Session) []byte { return render.ContextJSON(s.Tree.Context()) }}

// fixture is a store's index and its cache.
type fixture struct {
	x *sessions.Index
	c *Cache
}

// meta is the index's version of a session file.
func (v *fixture) meta(project, name string) (*sessions.File, error) {
	return v.x.Lookup(project, name)
}

// aheadRoot makes a project of n sessions of a few dozen entries, lists
// it, and reads ahead window sessions (and no further: see TestAheadFurther).
func aheadRoot(t testing.TB, n, window int) (*fixture, string) {
	t.Helper()
	project := "--home-u-p--"
	v := aheadStore(t, []string{project}, n, window)
	if _, err := v.x.Sessions(project); err != nil {
		t.Fatal(err)
	}
	return v, project
}

// aheadStore makes projects of the same n sessions each, and reads ahead
// window sessions.
func aheadStore(t testing.TB, projects []string, n, window int) *fixture {
	t.Helper()
	dir := t.TempDir()
	for _, project := range projects {
		if err := gen.Numbered(filepath.Join(dir, project), n, 40, 100); err != nil {
			t.Fatal(err)
		}
	}
	x := sessions.NewIndex(dir)
	v := &fixture{x, New(x, Options{Budget: 256 << 20})}
	v.c.ahead.window, v.c.ahead.far = window, window
	return v
}

// statFile counts context.json of session s%03d as a stat of it does.
func statFile(t testing.TB, v *fixture, project string, i int) {
	t.Helper()
	name := fmt.Sprintf("s%03d", i)
	f, err := v.meta(project, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := RecordedSize(f, contextName); ok {
		v.c.Saw(project, name, contextSize)
		return
	}
	v.c.Saw(project, name, contextSize)
	if err := v.c.With(project, name, f, func(s *Session) error { SizeOf(s, contextName, contextSize.Count); return nil }); err != nil {
		t.Fatal(err)
	}
}

// readFile renders context.json of session s%03d as a read of it does.
func readFile(t testing.TB, v *fixture, project string, i int) {
	t.Helper()
	name := fmt.Sprintf("s%03d", i)
	f, err := v.meta(project, name)
	if err != nil {
		t.Fatal(err)
	}
	v.c.Saw(project, name, contextRead)
	if err := v.c.With(project, name, f, func(s *Session) error {
		Rendered(v.c, s, contextName, BytesSize, func() []byte { return contextRead.Make(s) })
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func settle(t testing.TB, v *fixture) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !v.c.ahead.idle(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("reading ahead does not stop")
		}
	}
}

// parsedSet is which of n sessions are in the cache.
func parsedSet(v *fixture, project string, n int) string {
	b := make([]byte, n)
	for i := range b {
		f, err := v.meta(project, fmt.Sprintf("s%03d", i))
		b[i] = '.'
		if err == nil && v.c.IsParsed(f.Path) {
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
			statFile(t, v, p, tc.order[0])
			statFile(t, v, p, tc.order[1])
			settle(t, v)
			if got := parsedSet(v, p, 10); got != tc.want {
				t.Fatalf("after two sessions, parsed %s, want %s", got, tc.want)
			}
			for _, i := range tc.order[2:] {
				f, _ := v.meta(p, fmt.Sprintf("s%03d", i))
				if _, ok := RecordedSize(f, contextName); !ok {
					t.Errorf("s%03d: context.json not counted ahead", i)
				}
				statFile(t, v, p, i)
				settle(t, v)
			}
			if n := v.c.opened.Load(); n != 10 {
				t.Errorf("a walk of 10 sessions parsed %d times, want 10", n)
			}
			if n := v.c.ahead.ran.Load(); n != 8 {
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
	v.c.ahead.far = 6
	statFile(t, v, p, 0)
	statFile(t, v, p, 1)
	settle(t, v)
	if got, want := parsedSet(v, p, 20), "PPPPPPPP............"; got != want {
		t.Errorf("after two sessions, parsed %s, want %s", got, want)
	}
	statFile(t, v, p, 2)
	settle(t, v)
	if got, want := parsedSet(v, p, 20), "PPPPPPPPP..........."; got != want {
		t.Errorf("after three sessions, parsed %s, want %s", got, want)
	}
	if n := v.c.opened.Load(); n != 9 {
		t.Errorf("%d parses, want 9 (each session once)", n)
	}

	v, p = aheadRoot(t, 20, 2)
	v.c.ahead.far = 6
	f, _ := v.meta(p, "s002")
	v.c.ahead.farBytes = 3*f.Sig.Size + f.Sig.Size/2 // the files are about the same size
	statFile(t, v, p, 0)
	statFile(t, v, p, 1)
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
		statFile(t, v, p, i)
	}
	settle(t, v)
	if n := v.c.ahead.ran.Load(); n != 0 {
		t.Errorf("sessions out of order read %d ahead, want none", n)
	}
	if got := parsedSet(v, p, 10); got != ".PPP.P.P.P" {
		t.Errorf("parsed %s, want the six looked at", got)
	}

	v, p = aheadRoot(t, 10, 3)
	v.c.ahead.max = 100
	statFile(t, v, p, 0)
	statFile(t, v, p, 1)
	settle(t, v)
	if n := v.c.ahead.ran.Load(); n != 0 {
		t.Errorf("sessions over the limit: %d read ahead, want none", n)
	}

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, p), 0o755)
	for i := 0; i < 4; i++ {
		os.WriteFile(filepath.Join(dir, p, fmt.Sprintf("s%03d.jsonl", i)),
			[]byte(`{"type":"session","version":3,"id":"x`+fmt.Sprint(i)+`","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`+"\n"), 0o644)
	}
	x := sessions.NewIndex(dir)
	v = &fixture{x, New(x, Options{Budget: 256 << 20})}
	statFile(t, v, p, 0)
	statFile(t, v, p, 1)
	settle(t, v)
	if _, listed := v.x.Listed(p); v.c.ahead.ran.Load() != 0 || listed {
		t.Errorf("a project not listed: %d read ahead, listed %v; want none, not listed", v.c.ahead.ran.Load(), listed)
	}
}

// TestAheadRead: reading a view in two sessions in a row keeps that
// view's rendering of the next sessions, which the walk then takes.
func TestAheadRead(t *testing.T) {
	v, p := aheadRoot(t, 6, 2)
	for i := 0; i < 6; i++ {
		readFile(t, v, p, i)
		settle(t, v)
		if i >= 1 && i+1 < 6 {
			var held bool
			f, _ := v.meta(p, fmt.Sprintf("s%03d", i+1))
			v.c.With(p, f.Name, f, func(ss *Session) error {
				_, held = ss.renders[contextName]
				return nil
			})
			if !held {
				t.Errorf("after reading s%03d, s%03d's context.json is not rendered", i, i+1)
			}
		}
	}
	if n := v.c.opened.Load(); n != 6 {
		t.Errorf("reading 6 sessions parsed %d times, want 6", n)
	}
}

// TestPinHeldWhileServed: a session made ahead stays pinned while the
// cache serves renderings (a walk going on, however slowly), and may be
// dropped once nothing was served for pinSpan (a walk that stopped).
func TestPinHeldWhileServed(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name   string
		served time.Duration // after t0, or 0: nothing served
		now    time.Duration
		want   bool
	}{
		{"pinned just now", 0, time.Second, false},
		{"nothing served for longer than pinSpan", 0, pinSpan + time.Second, true},
		{"served a moment ago", pinSpan, pinSpan + time.Second, false},
		{"served, then nothing for pinSpan", time.Second, pinSpan + 2*time.Second, true},
	} {
		c := &Cache{}
		if tc.served > 0 {
			c.served.Store(t0.Add(tc.served).UnixNano())
		}
		s := &Session{pin: &pin{since: t0}}
		if got := c.evictable(s, t0.Add(tc.now)); got != tc.want {
			t.Errorf("%s: evictable %v, want %v", tc.name, got, tc.want)
		}
	}
	if !(&Cache{}).evictable(&Session{}, t0) {
		t.Error("a session not pinned is not evictable")
	}
}
