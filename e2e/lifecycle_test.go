package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// piHome is the home directory the conformance tests give pi and pifs: pi
// writes paths under it as "~" in /tree.
const piHome = "/home/user"

// corpusSessions writes pi's corpus into a new store and returns the store
// and its session files, by their folder in the mount (<project>/<name>).
func corpusSessions(t *testing.T) (store string, files map[string]string) {
	t.Helper()
	store = t.TempDir()
	oracle.Corpus(t, store)
	files = map[string]string{}
	matches, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	for _, f := range matches {
		rel, _ := filepath.Rel(store, f)
		files[strings.TrimSuffix(rel, ".jsonl")] = f
	}
	if len(files) < 5 {
		t.Fatalf("the corpus has %d sessions", len(files))
	}
	return store, files
}

// TestTreeViewsThroughMountMatchPi: each session folder's tree*.txt and
// prompts.txt, read through the mount, are pi's /tree rows and /fork list
// for pi's own sessions, and stat gives their exact size before they are
// read; branches/<tip>/session.jsonl is pi's /export of that branch
// (serializeSessionBranch) but for the header's fresh timestamp.
func TestTreeViewsThroughMountMatchPi(t *testing.T) {
	store, files := corpusSessions(t)
	var paths []string
	for _, f := range files {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	views := oracle.TreeViews(t, piHome, false, paths...)
	exports := oracle.Export(t, "", paths...)
	mnt := testMount(t, store, func(o *fs.Options) { o.Home = piHome })

	var rows, exported int
	for dir, file := range files {
		v, exp := views[file], exports[file]
		if v == nil || v.Error != nil || exp.Open != "" {
			t.Fatalf("%s: pi did not open it", dir)
		}
		sdir := filepath.Join(mnt, dir)
		for _, f := range tree.Filters {
			name := f.FileName()
			// Stat first, on a session never rendered: the counted size.
			fi, err := os.Stat(filepath.Join(sdir, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(sdir, name))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != int64(len(got)) {
				t.Errorf("%s/%s: stat says %d bytes, cat gives %d", dir, name, fi.Size(), len(got))
			}
			var want strings.Builder
			for _, pv := range v.Views {
				if pv.Mode != f.String() {
					continue
				}
				if pv.Empty != nil {
					want.WriteString(*pv.Empty + "\n") // pi's text for a filter that lists nothing
				}
				for _, r := range pv.Rows {
					if r.Line == nil {
						t.Fatalf("%s %s: pi drew no row for %v", dir, pv.Mode, r.ID)
					}
					want.WriteString(flatRow(*r.Line) + "\t" + r.ID.(string) + "\n")
					rows++
				}
			}
			if string(got) != want.String() {
				t.Errorf("%s/%s through the mount:\n%s\npi:\n%s", dir, name, got, want.String())
			}
		}
		if v.PromptsError != nil {
			t.Logf("%s: pi's /fork list failed: %s", dir, *v.PromptsError)
			continue
		}
		var want strings.Builder
		for _, p := range v.Prompts {
			want.WriteString(jsjson.Trim(flatRow(p.Text)) + "\t" + p.EntryID.(string) + "\n")
		}
		if got := readText(t, filepath.Join(sdir, "prompts.txt")); got != want.String() {
			t.Errorf("%s/prompts.txt:\n%s\npi:\n%s", dir, got, want.String())
		}

		tips := lines(run(t, sdir, "ls", "branches"))
		for _, tip := range tips {
			piText, ok := exp.Text[tip]
			if !ok {
				t.Fatalf("%s: pi exported no branch %s", dir, tip)
			}
			p := filepath.Join(sdir, "branches", tip, "session.jsonl")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			got := readText(t, p)
			if fi.Size() != int64(len(got)) {
				t.Errorf("%s: branches/%s/session.jsonl: stat %d, cat %d bytes", dir, tip, fi.Size(), len(got))
			}
			sameExport(t, dir+" branches/"+tip, got, piText)
			exported++
		}
	}
	t.Logf("%d rows of %d sessions, %d exports compared with pi's", rows, len(files), exported)
	if rows < 100 || exported < len(files) {
		t.Errorf("only %d rows and %d exports compared", rows, exported)
	}
}

// flatRow is a row as pifs writes it: line feeds, carriage returns and
// tabs become spaces.
func flatRow(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
}

// sameExport compares an export with pi's: the same lines, but the
// header's timestamp, which pi makes fresh at every export.
func sameExport(t *testing.T, what, got, pi string) {
	t.Helper()
	g, p := strings.SplitN(got, "\n", 2), strings.SplitN(pi, "\n", 2)
	if len(g) != 2 || len(p) != 2 {
		t.Fatalf("%s: no header line:\n%s\npi:\n%s", what, got, pi)
	}
	var gh, ph map[string]any
	if json.Unmarshal([]byte(g[0]), &gh) != nil || json.Unmarshal([]byte(p[0]), &ph) != nil {
		t.Fatalf("%s: headers %s / %s", what, g[0], p[0])
	}
	delete(gh, "timestamp")
	delete(ph, "timestamp")
	if !reflect.DeepEqual(gh, ph) || g[1] != p[1] {
		t.Errorf("%s: export differs from pi's:\n%s\npi:\n%s", what, got, pi)
	}
}

// TestLineageLinksMatchHeaders: every session's parent link names the
// session its header's parentSession names, and forks/ the sessions that
// name it, for pi's clones in its corpus and for a fork made through the
// mount, which its parent's forks/ shows at once.
func TestLineageLinksMatchHeaders(t *testing.T) {
	store, files := corpusSessions(t)
	mnt := testMount(t, store)
	check := func() (links int) {
		byPath := map[string]string{}
		for dir, f := range files {
			byPath[f] = dir
		}
		wantForks := map[string][]string{}
		for dir, f := range files {
			h, err := sessions.ReadHeader(f)
			if err != nil {
				t.Fatal(err)
			}
			target, err := os.Readlink(filepath.Join(mnt, dir, "parent"))
			parent := ""
			if h.ParentSession != nil {
				p, _ := jsjson.Unquote(h.ParentSession)
				parent = byPath[p]
			}
			switch {
			case parent == "" && !errors.Is(err, os.ErrNotExist):
				t.Errorf("%s: parent -> %q (%v); its header names no session of the store", dir, target, err)
			case parent != "" && target != "../../"+parent:
				t.Errorf("%s: parent -> %q (%v), want ../../%s", dir, target, err, parent)
			case parent != "":
				links++
				wantForks[parent] = append(wantForks[parent], dir)
			}
		}
		for dir := range files {
			var got []string
			for _, name := range lines(run(t, filepath.Join(mnt, dir), "ls", "forks")) {
				target, err := os.Readlink(filepath.Join(mnt, dir, "forks", name))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, strings.TrimPrefix(target, "../../../"))
			}
			want := wantForks[dir]
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: forks/ links %q, want %q", dir, got, want)
			}
		}
		return links
	}
	if n := check(); n == 0 {
		t.Fatal("the corpus has no clone")
	}
	// A fork through the mount joins its parent's forks/ (already listed
	// and held by the kernel).
	var dir string
	for d := range files {
		dir = d
		break
	}
	leaf := strings.TrimSpace(readText(t, filepath.Join(mnt, dir, "leaf")))
	out := run(t, filepath.Join(mnt, dir), "sh", "-c", `exec 3<>fork; echo "$0" >&3; read -r p <&3; echo "$p"`, leaf)
	made := strings.TrimSpace(out)
	files[made] = filepath.Join(store, made+".jsonl")
	check()
}

// oldStore backdates every session file of a store past the minute within
// which a session counts as being written.
func oldStore(t *testing.T, store string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	matches, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	for _, f := range matches {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTrashAndRestore: mv of a session folder into trash/ moves its file
// into the user's trash, where trash-list sees it and pi's session list no
// longer does; trash/ shows it read-only; mv back restores it, leaving the
// store byte for byte as it was. A busy session, a restore onto a file
// there and every other rename are refused with the reason, changing
// nothing.
func TestTrashAndRestore(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	store, file := writeStore(t)
	oldStore(t, store)
	before := hashFiles(t, store)
	mnt := testMount(t, store)
	proj := filepath.Join(mnt, fixProject)

	if n := len(oracle.ListDefault(t, store)); n != 1 {
		t.Fatalf("pi lists %d sessions before", n)
	}
	// Other renames: EROFS with what works.
	for _, mv := range [][2]string{
		{filepath.Join(proj, fixSession), filepath.Join(proj, "renamed")},
		{filepath.Join(proj, fixSession, "leaf"), filepath.Join(proj, fixSession, "leaf2")},
	} {
		if err := os.Rename(mv[0], mv[1]); !errors.Is(err, syscall.EROFS) {
			t.Errorf("rename %s: %v, want EROFS", mv[0], err)
		}
	}
	if got := readText(t, filepath.Join(proj, fixSession, "errors")); !strings.Contains(got, "MOUNT/trash/") {
		t.Errorf("errors after a refused rename says nothing of the trash:\n%s", got)
	}

	events := followLines(t, "cat", filepath.Join(mnt, "events"))
	events.waitLines(t, "the open line", 1, "open")
	run(t, mnt, "mv", "./"+fixProject+"/"+fixSession, "trash/")
	events.waitLines(t, "events after the trash", 1, "trashed")
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the session file is still in the store: %v", err)
	}
	if got := run(t, "", "trash-list"); !strings.Contains(got, file) {
		t.Errorf("trash-list does not list %s:\n%s", file, got)
	}
	if n := len(oracle.ListDefault(t, store)); n != 0 {
		t.Errorf("pi lists %d sessions with the only one trashed", n)
	}
	eventually(t, "the project without the session", func() (bool, string) {
		got := lines(run(t, proj, "ls"))
		return !strings.Contains(strings.Join(got, " "), fixSession), strings.Join(got, " ")
	})
	trashed := filepath.Join(mnt, "trash", fixSession)
	eventually(t, "trash/ listing the session", func() (bool, string) {
		got := run(t, mnt, "ls", "trash")
		return got == fixSession+"\n", got
	})
	// Browsable, read-only.
	if got := readText(t, filepath.Join(trashed, "leaf")); got != "s1\n" {
		t.Errorf("trash/…/leaf = %q", got)
	}
	if got := readText(t, filepath.Join(trashed, "tree-all.txt")); !strings.Contains(got, "\ta1\n") {
		t.Errorf("trash/…/tree-all.txt:\n%s", got)
	}
	err := os.WriteFile(filepath.Join(trashed, "append"), []byte("hi\n"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("append to a trashed session: %v, want EROFS", err)
	}
	if got := readText(t, filepath.Join(trashed, "errors")); !strings.Contains(got, "in the trash") {
		t.Errorf("errors of the trashed session: %q", got)
	}
	if fi, err := os.Stat(filepath.Join(trashed, "leaf")); err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("trash/…/leaf: %v %v, want read-only", fi.Mode(), err)
	}

	// A restore onto a file that is there: EEXIST, nothing changed.
	if err := os.WriteFile(file, []byte("in the way\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code := runStatus(t, mnt, "mv", "trash/"+fixSession, "./"+fixProject+"/"); code == 0 {
		t.Error("a restore onto a file there succeeded")
	}
	if got := readText(t, file); got != "in the way\n" {
		t.Errorf("the file in the way became %q", got)
	}
	if err := os.Rename(trashed, filepath.Join(proj, fixSession)); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("rename onto a file there: %v, want EEXIST", err)
	}
	os.Remove(file)

	run(t, mnt, "mv", "trash/"+fixSession, "./"+fixProject+"/")
	for _, l := range events.waitLines(t, "events after the restore", 1, "restored") {
		if l["event"] == "removed" || l["event"] == "created" {
			t.Errorf("pifs's own move told as %v: %v", l["event"], l)
		}
	}
	if after := hashFiles(t, store); after != before {
		t.Error("the store is not as it was after trash and restore")
	}
	if got := run(t, "", "trash-list"); strings.Contains(got, file) {
		t.Errorf("trash-list still lists it:\n%s", got)
	}
	if n := len(oracle.ListDefault(t, store)); n != 1 {
		t.Errorf("pi lists %d sessions after the restore", n)
	}
	eventually(t, "the restored session", func() (bool, string) {
		got, err := os.ReadFile(filepath.Join(proj, fixSession, "leaf"))
		return err == nil && string(got) == "s1\n", string(got)
	})
	if got := run(t, mnt, "ls", "trash"); got != "" {
		t.Errorf("trash/ after the restore: %q", got)
	}

	// A session written in the last minute: EBUSY, and why.
	now := time.Now()
	os.Chtimes(file, now, now)
	if err := os.Rename(filepath.Join(proj, fixSession), trashed); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("trash of a busy session: %v, want EBUSY", err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the busy session moved: %v", err)
	}
	if got := readText(t, filepath.Join(proj, fixSession, "errors")); !strings.Contains(got, "last minute") {
		t.Errorf("errors after EBUSY: %q", got)
	}
}

// TestRmRfSaysHowToDelete: rm -rf of a session folder changes nothing and
// its errors file says how to delete it.
func TestRmRfSaysHowToDelete(t *testing.T) {
	store, _ := writeStore(t)
	before := hashFiles(t, store)
	mnt := testMount(t, store)
	if _, code := runStatus(t, mnt, "rm", "-rf", "./"+fixProject+"/"+fixSession); code == 0 {
		t.Error("rm -rf succeeded")
	}
	if hashFiles(t, store) != before {
		t.Error("rm -rf changed the store")
	}
	if got := readText(t, filepath.Join(sessionPath(mnt), "errors")); !strings.Contains(got, "mv MOUNT/"+fixProject+"/"+fixSession+" MOUNT/trash/") {
		t.Errorf("errors after rm -rf does not say how to delete:\n%s", got)
	}
}

// TestTrashRefusedToOthers: a user who may not rename the session file in
// the store may not trash it through the mount either (EACCES), as the
// same mv done directly is refused.
func TestTrashRefusedToOthers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	uid, gid := otherUser(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	store, file := writeStore(t)
	os.Chmod(store, 0o755)
	oldStore(t, store)
	before := hashFiles(t, store)
	mnt := testMount(t, store, func(o *fs.Options) { o.AllowOther = true })
	os.Chmod(filepath.Dir(mnt), 0o755)
	if _, code := asUser(t, uid, gid, "mv", file, "/tmp/"); code == 0 {
		t.Fatal("the other user renames the file directly")
	}
	out, code := asUser(t, uid, gid, "mv", filepath.Join(mnt, fixProject, fixSession), filepath.Join(mnt, "trash")+"/")
	if code == 0 || !strings.Contains(out, "Permission denied") {
		t.Errorf("another user trashed the session through the mount (%d): %s", code, out)
	}
	if hashFiles(t, store) != before {
		t.Error("the store changed")
	}
	out, code = asUser(t, uid, gid, "cp", file, filepath.Join(mnt, fixProject, "copy.jsonl"))
	if code == 0 || !strings.Contains(out, "Permission denied") {
		t.Errorf("another user imported into a folder they may not write (%d): %s", code, out)
	}
	if hashFiles(t, store) != before {
		t.Error("the store changed")
	}
}

// TestImport: cp x.jsonl MOUNT/<project>/ stores the file as pi's /import
// does (pi opens it as the same session; its name, then NAME-1 on a
// clash); a file pi cannot open and a session id in the store already are
// refused whole at close, leaving nothing, with the reason in the
// project's errors file.
func TestImport(t *testing.T) {
	_, files := corpusSessions(t)
	var src string
	for _, f := range files {
		if src == "" || f < src {
			src = f
		}
	}
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	projDir := filepath.Join(store, fixProject)
	proj := filepath.Join(mnt, fixProject)
	base := filepath.Base(src)

	wantDest := oracle.ImportDest(t, projDir, src)[src]
	run(t, "", "cp", src, proj+"/")
	dest := filepath.Join(projDir, base)
	if wantDest != dest {
		t.Errorf("pi would import to %s, pifs stored %s", wantDest, dest)
	}
	if got, want := readText(t, dest), readText(t, src); got != want {
		t.Error("the stored file differs from the one copied")
	}
	opened := oracle.Navigate(t, []oracle.NavigateRequest{{Op: "open", File: src}, {Op: "open", File: dest}})
	a, _ := json.Marshal(opened[0])
	b, _ := json.Marshal(opened[1])
	if opened[1].Error != nil || !bytes.Equal(a, b) {
		t.Errorf("pi opens the import otherwise than the original:\n%s\n%s", a, b)
	}
	name := strings.TrimSuffix(base, ".jsonl")
	eventually(t, "the imported session in the project", func() (bool, string) {
		got, err := os.ReadFile(filepath.Join(proj, name, "session.jsonl"))
		return err == nil && string(got) == readText(t, src), ""
	})
	if _, err := os.Lstat(filepath.Join(proj, base)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s shows in the project folder: %v", base, err)
	}

	// The same name with another id: NAME-1.jsonl, as pi names it.
	other := filepath.Join(t.TempDir(), base)
	data := readText(t, src)
	h, _ := sessions.ReadHeader(src)
	os.WriteFile(other, []byte(strings.Replace(data, h.ID, "0123abcd-0000-7000-8000-000000000000", 1)), 0o644)
	run(t, "", "cp", other, proj+"/")
	if _, err := os.Stat(filepath.Join(projDir, name+"-1.jsonl")); err != nil {
		t.Errorf("a clash was not stored as %s-1.jsonl: %v", name, err)
	}

	before := hashFiles(t, store)
	garbage := filepath.Join(t.TempDir(), "garbage.jsonl")
	os.WriteFile(garbage, []byte("not a session\n{\"type\":\"message\"}\n"), 0o644)
	for _, c := range []struct {
		file, errno, why string
	}{
		{garbage, "Invalid argument", "no session header"},
		{src, "File exists", "a session with this id is in the store already"},
	} {
		out, code := runStatus(t, "", "cp", c.file, proj+"/")
		if code == 0 || !strings.Contains(out, c.errno) {
			t.Errorf("cp %s: %d %s, want %s", filepath.Base(c.file), code, out, c.errno)
		}
		if got := readText(t, filepath.Join(proj, "errors")); !strings.Contains(got, c.why) {
			t.Errorf("project errors after cp %s:\n%s", filepath.Base(c.file), got)
		}
		if hashFiles(t, store) != before {
			t.Errorf("a refused import of %s left something in the store", filepath.Base(c.file))
		}
	}
}

// TestByIDPrefix: by-id/<prefix> resolves a unique prefix of a session id
// to the session pi --session takes it for, is never listed, and an
// ambiguous prefix is not found, the log naming the candidates.
func TestByIDPrefix(t *testing.T) {
	store, file := writeStore(t)
	data := readText(t, file)
	second := filepath.Join(store, fixProject, "2024-01-02T00-00-00-000Z_11111111-2222-3333-4444-666666666666.jsonl")
	os.WriteFile(second, []byte(strings.Replace(data, fixID, "11111111-2222-3333-4444-666666666666", 1)), 0o644)
	var log syncBuffer
	mnt := testMount(t, store, func(o *fs.Options) { o.Logger = newLogger(&log) })

	got, err := os.Readlink(filepath.Join(mnt, "by-id", "11111111-2222-3333-4444-5"))
	if err != nil || got != "../"+fixProject+"/"+fixSession {
		t.Errorf("by-id/<unique prefix> -> %q, %v", got, err)
	}
	pi := oracle.SessionArg(t, "/work/proj", store+"/"+fixProject, nil, "11111111-2222-3333-4444-5")
	if pi["11111111-2222-3333-4444-5"] != file {
		t.Errorf("pi --session takes the prefix for %q, not %s", pi["11111111-2222-3333-4444-5"], file)
	}
	if _, err := os.Lstat(filepath.Join(mnt, "by-id", "1111")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an ambiguous prefix: %v, want ENOENT", err)
	}
	if !strings.Contains(log.String(), "matches 2 sessions") {
		t.Errorf("the log does not name the candidates:\n%s", log.String())
	}
	if got := lines(run(t, mnt, "ls", "by-id")); len(got) != 2 {
		t.Errorf("by-id lists %q", got)
	}
}

// TestCaretThroughMount: `echo ID^ > leaf` is pi's "select a user message"
// in /tree, and `echo ID^ > fork` its /fork from that prompt: pi, opening
// the sessions pifs wrote, builds the contexts its own commands make.
func TestCaretThroughMount(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	orig := filepath.Join(t.TempDir(), "orig.jsonl")
	os.WriteFile(orig, []byte(readText(t, file)), 0o644)

	out := run(t, s, "sh", "-c", `exec 3<>fork; echo "b1^" >&3; read -r p <&3; echo "$p"`)
	forked := filepath.Join(store, strings.TrimSpace(out)+".jsonl")
	run(t, s, "sh", "-c", `echo 'a1^' > leaf`)
	pi := oracle.Navigate(t, []oracle.NavigateRequest{
		{Op: "tree", File: orig, EntryID: "a1"},
		{Op: "open", File: file},
		{Op: "fork", File: orig, EntryID: "b1"},
		{Op: "open", File: forked},
	})
	for _, a := range pi {
		if a.Error != nil {
			t.Fatalf("pi failed: %s", *a.Error)
		}
	}
	if !jsonEqual(pi[0].Context, pi[1].Context) {
		t.Errorf("leaf a1^: pi's context\n%s\npi's /tree selection of a1\n%s", pi[1].Context, pi[0].Context)
	}
	if !jsonEqual(pi[2].Context, pi[3].Context) {
		t.Errorf("fork b1^: pi opens\n%s\npi's /fork from b1 makes\n%s", pi[3].Context, pi[2].Context)
	}
}

// syncBuffer is a log written by the mount and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// hashFiles hashes the files of a tree (names, modes, mtimes, bytes):
// folders' mtimes, which a rename or a temporary file changes, aside.
func hashFiles(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(&b, "%s %v %d %x\n", rel, fi.Mode(), fi.ModTime().UnixNano(), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
