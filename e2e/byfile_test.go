package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
)

// by-file/: the sessions whose tool calls touched a file, across the
// store, from the full-text index.

// bfCall is a tool call of a test session: op read, write or edit.
type bfCall struct {
	op, path string
	at       time.Time
}

// bfSession writes a session file whose assistant messages make calls,
// one message each, with the file's mode perm and mtime mt.
func bfSession(t *testing.T, dir, name, cwd string, calls []bfCall, perm os.FileMode, mt time.Time) {
	t.Helper()
	id := name[strings.IndexByte(name, '_')+1:]
	ts := func(at time.Time) string { return at.UTC().Format("2006-01-02T15:04:05.000Z") }
	first := calls[0].at.Add(-time.Minute)
	lines := []string{
		fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q}`, id, ts(first), cwd),
		fmt.Sprintf(`{"type":"message","id":"u0","parentId":null,"timestamp":%q,"message":{"role":"user","content":"go","timestamp":%d}}`, ts(first), first.UnixMilli()),
	}
	parent := "u0"
	for i, c := range calls {
		args := map[string]any{"path": c.path}
		switch c.op {
		case "write":
			args["content"] = "package x\n"
		case "edit":
			args["edits"] = []any{map[string]any{"oldText": "a", "newText": "b"}}
		}
		a, _ := json.Marshal(args)
		aid, rid := fmt.Sprintf("a%d", i), fmt.Sprintf("r%d", i)
		lines = append(lines,
			fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":%q,"message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":%q,"arguments":%s}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":%d}}`,
				aid, parent, ts(c.at), i, c.op, a, c.at.UnixMilli()),
			fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":%q,"message":{"role":"toolResult","toolCallId":"c%d","toolName":%q,"content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":%d}}`,
				rid, aid, ts(c.at), i, c.op, c.at.UnixMilli()))
		parent = rid
	}
	file := filepath.Join(dir, name+".jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, mt, mt); err != nil {
		t.Fatal(err)
	}
}

// bfStore is a store of two projects whose sessions touch files of
// /work/alpha (some from /work/beta, by a path through ..), and a private
// project (0700, its file 0600) whose session writes x.go and a file of
// its own. The sessions' names, file times and last touches are in
// different orders.
func bfStore(t *testing.T) (store string, private string) {
	store = t.TempDir()
	os.Chmod(store, 0o755)
	day := func(d, h int) time.Time { return time.Date(2025, 2, d, h, 0, 0, 0, time.UTC) }
	alpha, beta, priv := filepath.Join(store, "--work-alpha--"), filepath.Join(store, "--work-beta--"), filepath.Join(store, "--private--")
	for _, d := range []string{alpha, beta} {
		os.Mkdir(d, 0o755)
	}
	os.Mkdir(priv, 0o700)
	old := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	bfSession(t, alpha, "2025-01-01T00-00-00-000Z_00000000-0000-4000-8000-000000000001", "/work/alpha", []bfCall{
		{"read", "src/x.go", day(10, 1)}, {"edit", "/work/alpha/src/x.go", day(10, 2)}, {"read", "/etc/hosts", day(10, 3)},
	}, 0o644, old.Add(4*time.Hour))
	bfSession(t, alpha, "2025-01-02T00-00-00-000Z_00000000-0000-4000-8000-000000000002", "/work/alpha", []bfCall{
		{"read", "/work/alpha/src/x.go", day(1, 1)}, {"write", "src/y.go", day(1, 2)},
	}, 0o644, old.Add(3*time.Hour))
	bfSession(t, alpha, "2025-01-03T00-00-00-000Z_00000000-0000-4000-8000-000000000003", "/work/alpha", []bfCall{
		{"read", "src/z.go", day(3, 1)},
	}, 0o644, old.Add(2*time.Hour))
	bfSession(t, beta, "2025-01-04T00-00-00-000Z_00000000-0000-4000-8000-000000000004", "/work/beta", []bfCall{
		{"read", "/work/alpha/src/x.go", day(5, 1)}, {"edit", "../alpha/src/y.go", day(5, 2)},
	}, 0o644, old.Add(time.Hour))
	bfSession(t, priv, "2025-01-05T00-00-00-000Z_00000000-0000-4000-8000-000000000005", "/work/alpha", []bfCall{
		{"write", "src/x.go", day(20, 1)}, {"read", "/work/secret/p.txt", day(20, 2)},
	}, 0o600, old)
	return store, priv
}

// bfMount mounts store with a full-text index (for other users too when
// shared) and waits until the index holds its n sessions.
func bfMount(t *testing.T, store string, n int, shared bool) string {
	t.Helper()
	mnt := testMount(t, store, func(o *fs.Options) { o.SearchDir = t.TempDir(); o.AllowOther = shared })
	os.Chmod(filepath.Dir(mnt), 0o755)
	indexed(t, mnt, n)
	return mnt
}

// indexed waits until the mount's full-text index holds n sessions, all
// committed (it builds in the background, at a low priority: up to 30 s
// on a busy machine).
func indexed(t *testing.T, mnt string, n int) {
	t.Helper()
	var data []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var s struct {
			Search struct{ Full, Complete int64 }
		}
		data, _ = os.ReadFile(filepath.Join(mnt, ".pifs", "stats"))
		if json.Unmarshal(data, &s) == nil && s.Search.Full >= int64(n) && s.Search.Complete == 1 {
			return
		}
	}
	t.Fatalf("the index does not hold %d sessions after 30 s: %s", n, data)
}

// bfTouched is what the session folders' files.json say, through the
// mount: for each absolute path, the sessions whose path names it
// (project/session), whether each changed it, and the id of its last
// entry that did.
type bfTouch struct {
	modified bool
	last     string
}

func bfTouched(t *testing.T, mnt string) map[string]map[string]bfTouch {
	t.Helper()
	out := map[string]map[string]bfTouch{}
	for _, p := range []string{"--work-alpha--", "--work-beta--", "--private--"} {
		ents, err := os.ReadDir(filepath.Join(mnt, p))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "2025-") {
				continue
			}
			var fj struct {
				Files []struct {
					List, LastEntryId, AbsolutePath string
					Writes, Edits                   int
				}
			}
			if err := json.Unmarshal(readMount(t, filepath.Join(mnt, p, e.Name(), "files.json")), &fj); err != nil {
				t.Fatal(err)
			}
			for _, f := range fj.Files {
				if out[f.AbsolutePath] == nil {
					out[f.AbsolutePath] = map[string]bfTouch{}
				}
				out[f.AbsolutePath][p+"/"+e.Name()] = bfTouch{f.Writes+f.Edits > 0, f.LastEntryId}
			}
		}
	}
	return out
}

// bfLinks lists a by-file/ folder's links: name → the folder it resolves
// to, relative to the mount.
func bfLinks(t *testing.T, mnt, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		to, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		rel, _ := filepath.Rel(mnt, to)
		out[e.Name()] = rel
	}
	return out
}

// TestByFile: by-file/<abs path>/ links exactly the sessions whose
// files.json names the file, ls -t lists them by their last touch of
// it, modified/ those that wrote or edited it; a folder above lists the
// names that lead to touched files; a project's by-file/ is its cwd's;
// and an append through the mount that edits a file shows in files.txt,
// changes/ and by-file/ within a second.
func TestByFile(t *testing.T) {
	store, _ := bfStore(t)
	mnt := bfMount(t, store, 5, false)
	touched := bfTouched(t, mnt)
	if len(touched["/work/alpha/src/x.go"]) != 4 || len(touched["/work/alpha/src/y.go"]) != 2 {
		t.Fatalf("files.json: %v", touched)
	}
	dirs := map[string]map[string]bool{}
	for file, want := range touched {
		dir := filepath.Join(mnt, "by-file", file)
		got := bfLinks(t, mnt, dir)
		wantSet := map[string]string{}
		for k := range want {
			wantSet[filepath.Base(k)] = k
		}
		if fmt.Sprint(got) != fmt.Sprint(wantSet) {
			t.Errorf("by-file%s: %v; files.json: %v", file, got, wantSet)
		}
		// modified/: those that changed it; there only if one did.
		wantMod := map[string]string{}
		for k, tc := range want {
			if tc.modified {
				wantMod[filepath.Base(k)] = k
			}
		}
		if len(wantMod) == 0 {
			if _, err := os.Stat(filepath.Join(dir, "modified")); err == nil {
				t.Errorf("by-file%s/modified/ without a change", file)
			}
		} else if got := bfLinks(t, mnt, filepath.Join(dir, "modified")); fmt.Sprint(got) != fmt.Sprint(wantMod) {
			t.Errorf("by-file%s/modified: %v; files.json: %v", file, got, wantMod)
		}
		// ls -t: by the time of each session's last entry naming it.
		type last struct {
			name string
			at   string
		}
		var order []last
		for k, tc := range want {
			var e struct{ Timestamp string }
			json.Unmarshal(readMount(t, filepath.Join(mnt, k, "entries", tc.last+".json")), &e)
			order = append(order, last{filepath.Base(k), e.Timestamp})
		}
		sort.Slice(order, func(i, j int) bool { return order[i].at > order[j].at })
		var wantOrder []string
		for _, o := range order {
			wantOrder = append(wantOrder, o.name)
		}
		var gotOrder []string
		for _, l := range lines(run(t, "", "ls", "-t", dir)) {
			if l != "modified" {
				gotOrder = append(gotOrder, l)
			}
		}
		if !slices.Equal(gotOrder, wantOrder) {
			t.Errorf("ls -t by-file%s: %q; by last touch: %q", file, gotOrder, wantOrder)
		}
		for d := file; d != "/"; d = filepath.Dir(d) {
			if dirs[filepath.Dir(d)] == nil {
				dirs[filepath.Dir(d)] = map[string]bool{}
			}
			dirs[filepath.Dir(d)][filepath.Base(d)] = true
		}
	}
	for dir, want := range dirs {
		var w []string
		for n := range want {
			w = append(w, n)
		}
		sort.Strings(w)
		if got := lines(run(t, "", "ls", filepath.Join(mnt, "by-file", dir))); !slices.Equal(got, w) {
			t.Errorf("by-file%s: %q; want %q", dir, got, w)
		}
	}
	if _, err := os.Stat(filepath.Join(mnt, "by-file", "work", "alpha", "src", "x.g")); err == nil {
		t.Error("by-file/…/x.g: a prefix of a touched name is there")
	}

	// A project's by-file/: relative to its cwd, its own sessions alone.
	got := bfLinks(t, mnt, filepath.Join(mnt, "--work-alpha--", "by-file", "src", "x.go"))
	want := map[string]string{}
	for k := range touched["/work/alpha/src/x.go"] {
		if strings.HasPrefix(k, "--work-alpha--/") {
			want[filepath.Base(k)] = k
		}
	}
	if len(want) != 2 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("--work-alpha--/by-file/src/x.go: %v; want %v", got, want)
	}

	// ls -l of a folder: the lookups of its names are answered from its
	// listing, the folders above it looked up again for each name from the
	// first lookup, and a listing again at the same version of the index
	// from the one before: no statement of the index after the first.
	statements := func() float64 {
		var st map[string]map[string]float64
		json.Unmarshal([]byte(run(t, mnt, "cat", ".pifs/stats")), &st)
		return st["search"]["statements"]
	}
	x := filepath.Join(mnt, "by-file/work/alpha/src/x.go") // listed above
	s0 := statements()
	if n := len(lines(run(t, "", "ls", "-l", x))); n != 6 { // total, 4 links, modified
		t.Errorf("ls -l by-file/…/x.go: %d lines", n)
	}
	if n := statements() - s0; n != 0 {
		t.Errorf("ls -l of a folder listed before ran %v statements of the index", n)
	}
	y := filepath.Join(mnt, "--work-alpha--/by-file/src") // not listed yet
	s0 = statements()
	names := len(lines(run(t, "", "ls", "-l", y))) - 1
	s1 := statements()
	run(t, "", "ls", "-l", y)
	// The folder's own lookup and its listing, at most 3 statements each
	// (33 when each name's lookup walked the path again).
	if first, again := s1-s0, statements()-s1; names < 3 || first == 0 || first > 6 || again != 0 {
		t.Errorf("ls -l of %d names ran %v statements of the index, again %v (want 1-6, then 0)", names, first, again)
	}

	// An edit appended through the mount shows everywhere within a second.
	s3 := filepath.Join(mnt, "--work-alpha--", "2025-01-03T00-00-00-000Z_00000000-0000-4000-8000-000000000003")
	entry := `{"role":"assistant","content":[{"type":"toolCall","id":"n1","name":"edit","arguments":{"path":"src/w.go","edits":[{"oldText":"old line","newText":"new line"}]}}],"provider":"p","model":"m","stopReason":"toolUse"}`
	if err := os.WriteFile(filepath.Join(s3, "append"), []byte(entry+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "files.txt after the edit", func() (bool, string) {
		s := string(readMount(t, filepath.Join(s3, "files.txt")))
		return strings.Contains(s, "modified\t0\t0\t1\t") && strings.HasSuffix(s, "\tsrc/w.go\n"), s
	})
	eventually(t, "changes/ after the edit", func() (bool, string) {
		ents, _ := os.ReadDir(filepath.Join(s3, "changes"))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return slices.Equal(names, []string{"src%2Fw.go.diff"}), strings.Join(names, " ")
	})
	if d := string(readMount(t, filepath.Join(s3, "changes.patch"))); !strings.Contains(d, "+new line") {
		t.Errorf("changes.patch: %q", d)
	}
	wantLink := map[string]string{filepath.Base(s3): "--work-alpha--/" + filepath.Base(s3)}
	for _, d := range []string{"by-file/work/alpha/src/w.go", "by-file/work/alpha/src/w.go/modified", "--work-alpha--/by-file/src/w.go/modified"} {
		eventually(t, d+" after the edit", func() (bool, string) {
			if _, err := os.Stat(filepath.Join(mnt, d)); err != nil {
				return false, err.Error()
			}
			got := bfLinks(t, mnt, filepath.Join(mnt, d))
			return fmt.Sprint(got) == fmt.Sprint(wantLink), fmt.Sprint(got)
		})
	}
	if got := lines(run(t, "", "ls", filepath.Join(mnt, "by-file/work/alpha/src"))); !slices.Contains(got, "w.go") {
		t.Errorf("by-file/work/alpha/src after the edit: %q", got)
	}
}

// TestByFileOtherUser: with --allow-other, another user's by-file/ shows
// only the sessions they may read: not the private project's links, nor
// the folders only its sessions lead to.
func TestByFileOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	uid, gid := otherUser(t)
	store, _ := bfStore(t)
	mnt := bfMount(t, store, 5, true)
	priv := "2025-01-05T00-00-00-000Z_00000000-0000-4000-8000-000000000005"
	x := filepath.Join(mnt, "by-file", "work", "alpha", "src", "x.go")
	// The owner sees it, then the other user does not, then the owner
	// again: nothing the kernel kept for one is given to the other.
	for round := 0; round < 2; round++ {
		if got, mod := run(t, "", "ls", x), run(t, "", "ls", x+"/modified"); !strings.Contains(got, priv) || !strings.Contains(mod, priv) {
			t.Fatalf("round %d: the owner does not see the private session in by-file/: %q, modified/ %q", round, got, mod)
		}
		if !slices.Contains(lines(run(t, "", "ls", filepath.Join(mnt, "by-file", "work"))), "secret") {
			t.Fatalf("round %d: the owner does not see by-file/work/secret", round)
		}
		out, code := asUser(t, uid, gid, "ls", x)
		if code != 0 || strings.Contains(out, priv) || len(lines(out)) != 4 { // 3 sessions and modified/
			t.Errorf("round %d: another user's ls by-file/…/x.go (%d): %q", round, code, out)
		}
		if out, code := asUser(t, uid, gid, "ls", x+"/modified"); code != 0 || strings.Contains(out, priv) || len(lines(out)) != 1 {
			t.Errorf("round %d: another user's modified/ (%d): %q", round, code, out)
		}
		if out, code := asUser(t, uid, gid, "ls", filepath.Join(mnt, "by-file", "work")); code != 0 || strings.Contains(out, "secret") {
			t.Errorf("round %d: another user's by-file/work (%d): %q", round, code, out)
		}
		for _, p := range []string{filepath.Join(x, priv), filepath.Join(mnt, "by-file", "work", "secret")} {
			if out, code := asUser(t, uid, gid, "stat", p); code == 0 {
				t.Errorf("round %d: another user stats %s: %s", round, p, out)
			}
		}
	}
}

// TestByFileIndexOff: without the index, by-file/ holds a README saying so
// and how to have it.
func TestByFileIndexOff(t *testing.T) {
	store, _ := bfStore(t)
	mnt := testMount(t, store)
	if got := lines(run(t, "", "ls", filepath.Join(mnt, "by-file"))); !slices.Equal(got, []string{"README"}) {
		t.Fatalf("by-file/ without the index: %q", got)
	}
	if s := string(readMount(t, filepath.Join(mnt, "by-file", "README"))); !strings.Contains(s, "--index") {
		t.Errorf("README: %q", s)
	}
	if _, err := os.Stat(filepath.Join(mnt, "by-file", "work")); err == nil {
		t.Error("by-file/work without the index")
	}
}
