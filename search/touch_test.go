package search

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// simpleTouches is a plain extractor of the files a message's tool calls
// touched, for the tests: the path argument of read, write and edit
// calls, resolved against the cwd.
func simpleTouches(e *sessions.Entry, cwd string) []Touch {
	if e.Type != schema.TypeMessage || e.Role != schema.RoleAssistant {
		return nil
	}
	var out []Touch
	jsjson.Elements(e.MsgContent, func(b []byte) bool {
		if typ, _ := jsjson.Str(b, "type"); typ != schema.BlockToolCall {
			return true
		}
		name, _ := jsjson.Str(b, "name")
		path, _ := jsjson.Str(jsjson.Get(b, "arguments"), "path")
		if path == "" || (name != OpRead && name != OpWrite && name != OpEdit) {
			return true
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		out = append(out, Touch{Path: filepath.Clean(path), Op: name})
		return true
	})
	return out
}

// touchScan is what a scan of every session's tool calls finds: for each
// file, the sessions that touched it and whether one modified it.
func touchScan(t *testing.T, store string, scope Scope, projects map[string]string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, path := range storeFiles(t, store) {
		rel, _ := filepath.Rel(store, path)
		if scope.Project != "" && projects[rel] != scope.Project {
			continue
		}
		if scope.Visible != nil && !scope.Visible(path) {
			continue
		}
		h, err := sessions.ReadHeader(path)
		if err != nil {
			t.Fatal(err)
		}
		sessions.ScanFrom(path, 0, nil, func(e *sessions.Entry, _ bool) {
			if e.ID == "" {
				return
			}
			for _, tc := range simpleTouches(e, h.Cwd) {
				if out[tc.Path] == nil {
					out[tc.Path] = map[string]bool{}
				}
				out[tc.Path][path] = out[tc.Path][path] || tc.Op != OpRead
			}
		})
	}
	return out
}

// TestTouchesAsScan: the sessions that touched each file, and the names
// under each folder that lead to touched files, are those a scan of every
// session's tool calls finds, in every scope.
func TestTouchesAsScan(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	touchStore(t, store, 40, 30)
	x := openIndex(t, store, Options{Touches: simpleTouches})
	build(t, x, store)
	projects := projectsOf(t, store)
	hide := func(path string) bool { return !strings.Contains(path, "s07") }
	for _, scope := range []Scope{{}, {Project: "--home-user-beta--"}, {Project: "--home-user-tree--"}, {Visible: hide}} {
		scan := touchScan(t, store, scope, projects)
		if len(scan) == 0 && scope.Project == "" {
			t.Fatal("the scan finds no touches")
		}
		dirs := map[string]map[string]bool{}
		for file, want := range scan {
			got, err := x.TouchedBy(context.Background(), file, scope)
			if err != nil {
				t.Fatal(err)
			}
			gotSet := map[string]bool{}
			for _, ft := range got {
				gotSet[ft.Path] = ft.Modified
			}
			if fmt.Sprint(gotSet) != fmt.Sprint(want) {
				t.Errorf("%s (scope %+v): %v, the scan %v", file, scope.Project, gotSet, want)
			}
			for d := file; d != "/"; {
				parent := filepath.Dir(d)
				if dirs[parent] == nil {
					dirs[parent] = map[string]bool{}
				}
				dirs[parent][filepath.Base(d)] = true
				d = parent
			}
		}
		for dir, want := range dirs {
			got, err := x.TouchedUnder(context.Background(), dir, scope)
			if err != nil {
				t.Fatal(err)
			}
			var w []string
			for n := range want {
				w = append(w, n)
			}
			sort.Strings(w)
			if !slices.Equal(got, w) {
				t.Errorf("under %s (scope %q): %q, the scan %q", dir, scope.Project, got, w)
			}
		}
		// A folder nothing under was touched.
		if got, _ := x.TouchedUnder(context.Background(), "/nowhere", scope); len(got) != 0 {
			t.Errorf("/nowhere: %q", got)
		}
		// Leads: every file and folder the scan finds, and nothing else
		// (not "/s/a-" though "/s/a-b" is touched, nor "/s/a/x/y").
		for dir := range dirs {
			for name := range dirs[dir] {
				p := filepath.Join(dir, name)
				if ok, err := x.Leads(context.Background(), p, scope); err != nil || !ok {
					t.Errorf("Leads(%s) (scope %+v): %v %v", p, scope.Project, ok, err)
				}
			}
		}
		for _, p := range []string{"/nowhere", "/s/a-", "/s/a/x/y", "/s/a.tx", "/home/user/tree/files/d9"} {
			want := false
			for file := range scan {
				want = want || file == p || strings.HasPrefix(file, p+"/")
			}
			if ok, err := x.Leads(context.Background(), p, scope); err != nil || ok != want {
				t.Errorf("Leads(%s) (scope %+v): %v %v, want %v", p, scope.Project, ok, err, want)
			}
		}
	}
	// What a touch says.
	got, err := x.TouchedBy(context.Background(), "/home/user/beta/src/session_manager.go", Scope{})
	if err != nil || len(got) != 1 || !got[0].Modified || got[0].Edits != 1 || got[0].Entry != "bbbb0002" || got[0].Project != "--home-user-beta--" {
		t.Fatalf("%+v %v", got, err)
	}
	got, _ = x.TouchedBy(context.Background(), "/home/user/alpha/cmd/main.go", Scope{})
	if len(got) != 1 || got[0].Modified || got[0].Reads != 1 || got[0].Entry != "aaaa0002" {
		t.Fatalf("%+v", got)
	}
}

// touchStore writes sessions of project /home/user/tree that read and
// edit files of a tree: session i touches files/dI/fJ.go, their siblings
// "a", "a-b", "a.txt" and "a/x" (which sort around the folder "a").
func touchStore(t testing.TB, store string, sessionsN, files int) {
	for i := 0; i < sessionsN; i++ {
		s := newSession(t, fmt.Sprintf("%04x0000-0000-4000-8000-%012d", 0x1000+i, i), "/home/user/tree",
			time.Date(2025, 5, 1, 0, 0, i, 0, time.UTC), 3)
		var calls []any
		for j := 0; j < files; j++ {
			op := OpRead
			if (i+j)%5 == 0 {
				op = OpEdit
			}
			calls = append(calls, call(op, map[string]any{"path": fmt.Sprintf("files/d%d/f%d.go", i%7, j)}))
		}
		calls = append(calls, call(OpRead, map[string]any{"path": "/s/a"}), call(OpWrite, map[string]any{"path": "/s/a-b"}),
			call(OpRead, map[string]any{"path": "/s/a/x"}), call(OpRead, map[string]any{"path": "/s/a.txt"}))
		s.assistant("", "anthropic/claude-sonnet-4", calls...)
		s.write(filepath.Join(store, "--home-user-tree--", fmt.Sprintf("s%02d.jsonl", i)))
	}
}

// TestTouchCost: a lookup reads the rows of what it answers, not the
// store's: the sessions of one file cost that file's touches, and a
// folder's names a statement or two each, however many files are
// touched below them.
func TestTouchCost(t *testing.T) {
	store := t.TempDir()
	touchStore(t, store, 40, 50)
	x := openIndex(t, store, Options{Touches: simpleTouches})
	build(t, x, store)
	ctx := context.Background()

	// 40 sessions × 54 touches in the store; /s/a-b is touched by every
	// session once.
	s0 := x.Stats()
	got, err := x.TouchedBy(ctx, "/s/a-b", Scope{})
	if err != nil || len(got) != 40 {
		t.Fatalf("%d sessions, %v", len(got), err)
	}
	s1 := x.Stats()
	if s1.Statements-s0.Statements != 1 || s1.Rows-s0.Rows != 40 {
		t.Fatalf("one file's sessions: %d statements, %d rows", s1.Statements-s0.Statements, s1.Rows-s0.Rows)
	}

	// /home/user/tree/files holds 7 folders and 2,000 touches.
	names, err := x.TouchedUnder(ctx, "/home/user/tree/files", Scope{})
	if err != nil || len(names) != 7 {
		t.Fatalf("%q %v", names, err)
	}
	s2 := x.Stats()
	t.Logf("7 names: %d statements, %d rows", s2.Statements-s1.Statements, s2.Rows-s1.Rows)
	if n := s2.Statements - s1.Statements; n > 2*7+1 {
		t.Fatalf("a folder of 7 names: %d statements", n)
	}
	// Whether a folder leads to a touched file: one statement, past the
	// names that sort between it and its files ("a-b", "a.txt").
	if ok, err := x.Leads(ctx, "/home/user/tree/files", Scope{}); err != nil || !ok {
		t.Fatalf("Leads: %v %v", ok, err)
	}
	if n := x.Stats().Statements - s2.Statements; n != 1 {
		t.Fatalf("Leads of a folder of 2,000 touches: %d statements", n)
	}
	if ok, _ := x.Leads(ctx, "/s/a", Scope{}); !ok {
		t.Fatal("Leads(/s/a)")
	}
	s2 = x.Stats()
	// One project's view of a folder another project touched alone costs
	// the touches it passes (the rows of the folder's first name).
	names, err = x.TouchedUnder(ctx, "/s", Scope{Project: "--home-user-tree--"})
	if err != nil || strings.Join(names, " ") != "a a-b a.txt" {
		t.Fatalf("%q %v", names, err)
	}
	s3 := x.Stats()
	if n := s3.Statements - s2.Statements; n > 2*3+1 {
		t.Fatalf("a folder of 3 names: %d statements", n)
	}
	// The query plans use the index of paths: no scan of the touches.
	for _, q := range []string{
		`SELECT touches.entry, touches.op, entries.eid, entries.time FROM touches CROSS JOIN entries ON entries.rowid = touches.entry WHERE touches.path = ?`,
		`SELECT path, entry FROM touches WHERE (path, entry) > (?, ?) AND path < ? ORDER BY path, entry LIMIT 1`,
	} {
		plan := queryPlan(t, x, q, "x", int64(0), "y")
		t.Logf("plan: %s", plan)
		if !strings.Contains(plan, "touches_path") || strings.Contains(plan, "SCAN touches") {
			t.Errorf("%s: %s", q, plan)
		}
	}
}

// queryPlan is SQLite's plan of a statement.
func queryPlan(t *testing.T, x *Index, q string, args ...any) string {
	t.Helper()
	n := strings.Count(q, "?")
	rows, err := x.r.Query("EXPLAIN QUERY PLAN "+q, args[:n]...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		rows.Scan(&id, &parent, &notused, &detail)
		out = append(out, detail)
	}
	return strings.Join(out, "; ")
}

// TestUpdated: the index's date moves with every commit, so that a folder
// dated by it is listed again, and stays while nothing changed.
func TestUpdated(t *testing.T) {
	store := t.TempDir()
	touchStore(t, store, 2, 3)
	x := openIndex(t, store, Options{Touches: simpleTouches})
	u0 := x.Updated()
	if u0.IsZero() {
		t.Fatal("no date before the first commit")
	}
	idx := build(t, x, store)
	u1 := x.Updated()
	if !u1.After(u0) {
		t.Fatalf("after the first build: %v, opened %v", u1, u0)
	}
	ctx := context.Background()
	if _, err := x.TouchedBy(ctx, "/s/a", Scope{}); err != nil || !x.Updated().Equal(u1) {
		t.Fatalf("a query moved the date: %v %v", x.Updated(), err)
	}
	path := filepath.Join(store, "--home-user-tree--", "s00.jsonl")
	appendLines(t, path, `{"type":"message","id":"zz000001","parentId":null,"timestamp":"2025-05-03T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c9","name":"edit","arguments":{"path":"new.go"}}],"provider":"p","model":"m","timestamp":1746230400000}}`)
	follow(t, x, idx, path)
	if got, _ := x.TouchedBy(ctx, "/home/user/tree/new.go", Scope{}); len(got) != 1 {
		t.Fatalf("the appended edit: %+v", got)
	}
	if u2 := x.Updated(); !u2.After(u1) {
		t.Fatalf("after an append: %v, before %v", u2, u1)
	}
}

// TestFolderAsLookup: what FolderLookup finds of each name is what Folder
// lists: the names below, modified/ where a session changed the file,
// and the sessions to link (in modified/, those that changed it alone);
// names it does not list are not found. A listed folder's Lookup, which
// answers the lookups after a listing, finds the same.
func TestFolderAsLookup(t *testing.T) {
	store := t.TempDir()
	plant(t, store)
	touchStore(t, store, 12, 6)
	x := openIndex(t, store, Options{Touches: simpleTouches})
	build(t, x, store)
	ctx := context.Background()
	scan := touchScan(t, store, Scope{}, projectsOf(t, store))
	paths := map[string]bool{"/": true}
	for file := range scan {
		for p := file; p != "/"; p = filepath.Dir(p) {
			paths[p] = true
		}
	}
	kinds := 0
	for p := range paths {
		for _, modified := range []bool{false, true} {
			f, err := x.Folder(ctx, p, Scope{}, modified)
			if err != nil {
				t.Fatal(err)
			}
			sessions := map[string]bool{}
			for path, mod := range scan[p] {
				if mod || !modified {
					sessions[path] = true
				}
			}
			got := map[string]bool{}
			for _, tc := range f.Touches {
				got[tc.Path] = true
				if modified && !tc.Modified {
					t.Errorf("%s/modified: %s did not change it", p, tc.Path)
				}
				if k, l, err := x.FolderLookup(ctx, p, tc.Session, Scope{}, modified); err != nil || k != NameSession || l.Path != tc.Path {
					t.Errorf("%s (modified %v): lookup %s: %d %s %v", p, modified, tc.Session, k, l.Path, err)
				}
				if k, l := f.Lookup(tc.Session); k != NameSession || l != tc {
					t.Errorf("%s (modified %v): the listing's lookup of %s: %d %+v", p, modified, tc.Session, k, l)
				}
				kinds++
			}
			if fmt.Sprint(got) != fmt.Sprint(sessions) {
				t.Errorf("%s (modified %v): links %v, the scan %v", p, modified, got, sessions)
			}
			if modified && len(f.Names) != 0 {
				t.Errorf("%s/modified has folders %q", p, f.Names)
			}
			for _, n := range f.Names {
				want := NameBelow
				if f.Modified && n == ModifiedName {
					want = NameModified
				}
				if k, _, err := x.FolderLookup(ctx, p, n, Scope{}, modified); err != nil || k != want {
					t.Errorf("%s: lookup %s: %d, want %d (%v)", p, n, k, want, err)
				}
				if k, _ := f.Lookup(n); k != want {
					t.Errorf("%s: the listing's lookup of %s: %d, want %d", p, n, k, want)
				}
				kinds++
			}
			if k, _, _ := x.FolderLookup(ctx, p, "none-such", Scope{}, modified); k != NoName {
				t.Errorf("%s: none-such: %d", p, k)
			}
			if k, _ := f.Lookup("none-such"); k != NoName {
				t.Errorf("%s: the listing's none-such: %d", p, k)
			}
		}
	}
	if f, _ := x.Folder(ctx, "/s/a-b", Scope{}, false); !f.Modified || !slices.Contains(f.Names, ModifiedName) || len(f.Touches) != 12 {
		t.Errorf("/s/a-b: %+v", f)
	}
	t.Logf("%d names looked up", kinds)
}
