package e2e

import (
	"encoding/json"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

func TestLayout(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)

	if got, want := lines(run(t, mnt, "ls")), []string{fixProject, "active", "by-cwd", "by-file", "by-id", "latest", "new", "trash", "usage"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ls MOUNT = %q, want %q", got, want)
	}
	if got, want := lines(run(t, mnt, "ls", "./"+fixProject)), []string{fixSession, "active", "by-file", "by-name", "cwd", "errors", "latest", "new", "usage"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ls project = %q, want %q", got, want)
	}
	want := []string{"append", "branches", "changes", "changes.patch", "context.json", "current", "entries", "errors", "files.json", "files.txt", "fork", "forks", "header.json", "images",
		"info.json", "labels", "leaf", "model", "name", "prompts.txt", "reply.md", "session.jsonl", "thinking", "transcript.html", "transcript.md", "tree",
		"tree-all.txt", "tree-labeled-only.txt", "tree-no-tools.txt", "tree-times.txt", "tree-user-only.txt", "tree.txt"}
	if got := lines(run(t, sessionPath(mnt), "ls")); !reflect.DeepEqual(got, want) {
		t.Errorf("ls session = %q, want %q", got, want)
	}
	if got := run(t, mnt, "cat", "./"+fixProject+"/cwd"); got != "/work/proj\n" {
		t.Errorf("cwd = %q", got)
	}
	s := sessionPath(mnt)
	for file, want := range map[string]string{"leaf": "s1\n", "name": "My session\n", "errors": "", "append": ""} {
		if got := run(t, s, "cat", file); got != want {
			t.Errorf("cat %s = %q, want %q", file, got, want)
		}
	}
	if got := run(t, s, "readlink", "current"); got != "branches/s1\n" {
		t.Errorf("current -> %q", got)
	}
	if got := run(t, s, "readlink", "labels/good%2Fone"); got != "../entries/a2.json\n" {
		t.Errorf("label -> %q", got)
	}
	if got := run(t, s, "jq", "-r", ".type", "labels/good%2Fone"); got != "message\n" {
		t.Errorf("label target type = %q", got)
	}
	if got := run(t, mnt, "readlink", "by-id/"+fixID); got != "../"+fixProject+"/"+fixSession+"\n" {
		t.Errorf("by-id -> %q", got)
	}
	if got := run(t, mnt, "jq", "-r", ".id", "by-id/"+fixID+"/header.json"); got != fixID+"\n" {
		t.Errorf("by-id header id = %q", got)
	}
	// ls -l shows modes and the mtimes of entries.
	out := run(t, s, "ls", "-l", "--time-style=+%Y-%m-%dT%H:%M:%S", ".")
	for _, want := range []string{"-rw-r--r-- 1", "drwxr-xr-x", "2024-01-01T00:00:06 info.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("ls -l lacks %q:\n%s", want, out)
		}
	}
	out = run(t, s, "stat", "-c", "%Y %n", "entries/a1.json", ".", "branches/a3/0004-toolResult-a3.json")
	if want := "1704067201 entries/a1.json\n1704067206 .\n1704067203 branches/a3/0004-toolResult-a3.json\n"; out != want {
		t.Errorf("mtimes:\n%s\nwant\n%s", out, want)
	}
}

func TestSessionFileByteForByte(t *testing.T) {
	store, file := writeStore(t)
	// A final line without newline and a blank line stay as they are.
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n{\"type\":\"message\",\"id\":\"c1\",\"parentId\":\"s1\",\"timestamp\":\"2024-01-01T00:00:07.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}")
	f.Close()
	mnt := testMount(t, store)
	want, _ := os.ReadFile(file)
	got := run(t, sessionPath(mnt), "cat", "session.jsonl")
	if got != string(want) {
		t.Errorf("session.jsonl differs:\n%q\nwant\n%q", got, want)
	}
	size := strings.TrimSpace(run(t, sessionPath(mnt), "stat", "-c", "%s", "session.jsonl"))
	if size != strconv.Itoa(len(want)) {
		t.Errorf("size %s, want %d", size, len(want))
	}
	hdr := run(t, sessionPath(mnt), "cat", "header.json")
	if !strings.HasPrefix(hdr, "{\n  \"type\": \"session\",\n") || !strings.HasSuffix(hdr, "}\n") {
		t.Errorf("header.json = %q", hdr)
	}
}

func parseJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

func TestContextMatchesTree(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	l, err := sessions.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	tr := tree.New(l)
	s := sessionPath(mnt)
	got := run(t, s, "jq", "-c", ".", "context.json")
	if !reflect.DeepEqual(parseJSON(t, []byte(got)), parseJSON(t, tr.Context().JSON())) {
		t.Errorf("context.json = %s\nwant %s", got, tr.Context().JSON())
	}
	for _, id := range []string{"a1", "a2", "a3", "b1", "s1"} {
		got, _ := os.ReadFile(filepath.Join(s, "branches", id, "context.json"))
		if !reflect.DeepEqual(parseJSON(t, got), parseJSON(t, tr.ContextAt(id).JSON())) {
			t.Errorf("branches/%s/context.json = %s\nwant %s", id, got, tr.ContextAt(id).JSON())
		}
	}
	info := parseJSON(t, []byte(run(t, s, "cat", "info.json"))).(map[string]any)
	for k, want := range map[string]any{"id": fixID, "name": "My session", "leaf": "s1", "entryCount": 7.0,
		"messageCount": 4.0, "firstMessage": "hello", "created": "2024-01-01T00:00:00.000Z", "cwd": "/work/proj"} {
		if !reflect.DeepEqual(info[k], want) {
			t.Errorf("info.%s = %v, want %v", k, info[k], want)
		}
	}
	if got := run(t, s, "jq", "-c", ".tips, .usage", "info.json"); got != "[\"a3\",\"s1\"]\n{\"input\":10,\"output\":5,\"cacheRead\":1,\"cacheWrite\":2,\"total\":18,\"cost\":0.01}\n" {
		t.Errorf("tips, usage = %s", got)
	}
	tr2 := run(t, s, "cat", "transcript.md")
	for _, want := range []string{"## user · a1 · 2024-01-01T00:00:01.000Z\n\nhello\n", "## user · b1", "other branch"} {
		if !strings.Contains(tr2, want) {
			t.Errorf("transcript.md lacks %q:\n%s", want, tr2)
		}
	}
	tr3 := run(t, s, "cat", "branches/a3/transcript.md")
	for _, want := range []string{"## assistant · a2", "*Thinking:*\n\nhmm", "hi there", "**Tool call** `bash` (t1)", "\"command\": \"ls\"", "file1\nfile2"} {
		if !strings.Contains(tr3, want) {
			t.Errorf("branch transcript lacks %q:\n%s", want, tr3)
		}
	}
}

func TestBranchesAndTree(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	if got := lines(run(t, s, "ls", "branches")); !reflect.DeepEqual(got, []string{"a3", "s1"}) {
		t.Errorf("branches = %q", got)
	}
	// Any entry resolves, though only tips are listed.
	if got := lines(run(t, s, "ls", "branches/a2")); !reflect.DeepEqual(got, []string{"0001-model_change-m0.json", "0002-user-a1.json", "0003-assistant-a2.json", "changes", "changes.patch", "context.json", "files.json", "files.txt", "images", "reply.md", "session.jsonl", "transcript.html", "transcript.md"}) {
		t.Errorf("branches/a2 = %q", got)
	}
	out, code := runStatus(t, s, "diff", "-r", "branches/a3", "branches/s1")
	if code != 1 {
		t.Fatalf("diff -r exit %d: %s", code, out)
	}
	for _, want := range []string{"Only in branches/a3: 0003-assistant-a2.json", "Only in branches/s1: 0003-user-b1.json", "Only in branches/s1: 0005-session_info-s1.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0002-user-a1.json") {
		t.Errorf("diff shows the shared part:\n%s", out)
	}
	got := lines(run(t, s, "find", "tree", "-mindepth", "1"))
	want := []string{
		"tree/m0",
		"tree/m0/0001-model_change-m0.json",
		"tree/m0/0002-user-a1.json",
		"tree/m0/a2",
		"tree/m0/a2/0003-assistant-a2.json",
		"tree/m0/a2/0004-toolResult-a3.json",
		"tree/m0/b1",
		"tree/m0/b1/0003-user-b1.json",
		"tree/m0/b1/0004-label-l1.json",
		"tree/m0/b1/0005-session_info-s1.json",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("find tree = %q\nwant %q", got, want)
	}
	a, _ := os.ReadFile(filepath.Join(s, "tree/m0/a2/0003-assistant-a2.json"))
	b, _ := os.ReadFile(filepath.Join(s, "entries/a2.json"))
	if string(a) != string(b) || !strings.HasPrefix(string(a), "{\n  \"type\": \"message\",\n") {
		t.Errorf("tree file %q, entry file %q", a, b)
	}
	if _, err := os.Stat(filepath.Join(s, "branches/zz")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("branches/zz: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s, "branches/a3/0004-user-a3.json")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("wrong kind resolves: %v", err)
	}
}

func appendLine(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func TestLiveAppend(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	// Look at everything first, so that the kernel caches it.
	run(t, s, "cat", "leaf", "context.json", "info.json", "transcript.md", "session.jsonl")
	run(t, s, "ls", "-lR", ".")
	run(t, s, "stat", "session.jsonl", "leaf", "context.json")

	appendLine(t, file, `{"type":"message","id":"c1","parentId":"a3","timestamp":"2024-01-02T00:00:00.000Z","message":{"role":"user","content":"more","timestamp":1704153600000}}`)
	fi, _ := os.Stat(file)
	size := strconv.FormatInt(fi.Size(), 10)

	eventually(t, "ls entries", func() (bool, string) {
		out := run(t, s, "ls", "entries")
		return strings.Contains(out, "c1.json"), out
	})
	eventually(t, "cat leaf", func() (bool, string) {
		out := run(t, s, "cat", "leaf")
		return out == "c1\n", out
	})
	eventually(t, "stat session.jsonl", func() (bool, string) {
		out := strings.TrimSpace(run(t, s, "stat", "-c", "%s", "session.jsonl"))
		return out == size, out
	})
	eventually(t, "branches", func() (bool, string) {
		out := run(t, s, "ls", "branches")
		return out == "c1\ns1\n", out
	})
	want, _ := os.ReadFile(file)
	if got := run(t, s, "cat", "session.jsonl"); got != string(want) {
		t.Errorf("session.jsonl after append differs")
	}
	ctx := run(t, s, "cat", "context.json")
	if !strings.Contains(ctx, `"more"`) {
		t.Errorf("context.json lacks the new message:\n%s", ctx)
	}
	// The stat size and the content agree.
	st := strings.TrimSpace(run(t, s, "stat", "-c", "%s", "context.json"))
	if st != strconv.Itoa(len(ctx)) {
		t.Errorf("context.json: stat %s, read %d bytes", st, len(ctx))
	}
	if got := run(t, s, "readlink", "current"); got != "branches/c1\n" {
		t.Errorf("current -> %q", got)
	}
	out := run(t, s, "find", ".", "-newer", "entries/s1.json", "-name", "*.json", "-path", "./entries/*")
	if strings.TrimSpace(out) != "./entries/c1.json" {
		t.Errorf("find -newer = %q", out)
	}
}

func TestNewAndRemovedSessions(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	proj := filepath.Join(mnt, fixProject)
	run(t, sessionPath(mnt), "ls", "-l")

	other := filepath.Join(store, fixProject, "2024-02-01T00-00-00-000Z_other.jsonl")
	os.WriteFile(other, []byte(`{"type":"session","version":3,"id":"other","timestamp":"2024-02-01T00:00:00.000Z","cwd":"/elsewhere"}`+"\n"), 0o644)
	// Not a session: not listed.
	os.WriteFile(filepath.Join(store, fixProject, "junk.jsonl"), []byte("{\"type\":\"message\"}\n"), 0o644)
	eventually(t, "new session listed", func() (bool, string) {
		got := lines(run(t, proj, "ls"))
		return reflect.DeepEqual(got, []string{fixSession, "2024-02-01T00-00-00-000Z_other", "active", "by-file", "by-name", "cwd", "errors", "latest", "new", "usage"}), strings.Join(got, " ")
	})
	if got := run(t, proj, "cat", "cwd"); got != "/elsewhere\n" {
		t.Errorf("cwd = %q", got)
	}
	os.Remove(file)
	eventually(t, "removed session", func() (bool, string) {
		_, err := os.Stat(sessionPath(mnt))
		return errors.Is(err, iofs.ErrNotExist), errString(err)
	})
	if got := lines(run(t, proj, "ls")); !reflect.DeepEqual(got, []string{"2024-02-01T00-00-00-000Z_other", "active", "by-file", "by-name", "cwd", "errors", "latest", "new", "usage"}) {
		t.Errorf("ls = %q", got)
	}
}

func errString(err error) string {
	if err == nil {
		return "exists"
	}
	return err.Error()
}

func TestBrowsingChangesNothing(t *testing.T) {
	store, _ := writeStore(t)
	before := hashTree(t, store)
	mnt := testMount(t, store)
	run(t, mnt, "grep", "-r", "-c", "hello", ".")
	run(t, mnt, "ls", "-lRa", ".")
	run(t, mnt, "find", ".", "-newer", "new")
	run(t, mnt, "tar", "cf", "/dev/null", ".")
	if after := hashTree(t, store); after != before {
		t.Errorf("the store changed while browsing")
	}
}

func TestTarMatchesCat(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	out := t.TempDir()
	run(t, mnt, "sh", "-c", "tar cf - . | tar xf - -C "+out)
	n := 0
	err := filepath.WalkDir(mnt, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(mnt, p)
		got, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			return err
		}
		if want := run(t, mnt, "cat", "./"+rel); string(got) != want {
			t.Errorf("%s: tar gave %d bytes, cat %d", rel, len(got), len(want))
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Errorf("only %d files compared", n)
	}
}

func TestWritesRefused(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	// Controls take writes (write_test.go); nothing else does.
	for _, name := range []string{"session.jsonl", "entries/a1.json", "info.json", "errors"} {
		_, err := os.OpenFile(filepath.Join(s, name), os.O_WRONLY|os.O_TRUNC, 0)
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("open %s for writing: %v, want EROFS", name, err)
		}
	}
	if err := os.Mkdir(filepath.Join(s, "x"), 0o755); !errors.Is(err, syscall.EROFS) {
		t.Errorf("mkdir: %v", err)
	}
	if err := os.Symlink("a1", filepath.Join(s, "entries", "x")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("symlink: %v", err)
	}
	if err := os.Remove(filepath.Join(s, "leaf")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("rm: %v", err)
	}
}

func TestReadOnlyModes(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store, func(o *fs.Options) { o.MountOptions = []string{"ro"} })
	out := run(t, sessionPath(mnt), "stat", "-c", "%A %n", "leaf", "append", "name", "fork", "info.json")
	for _, l := range lines(out) {
		if !strings.HasPrefix(l, "-r--r--r-- ") {
			t.Errorf("read-only mount: %s", l)
		}
	}
	if got := run(t, mnt, "sh", "-c", "grep ' "+mnt+" ' /proc/self/mounts"); !strings.Contains(got, "fuse.pifs") || !strings.Contains(got, store+" "+mnt) {
		t.Errorf("mounts: %s", got)
	}
	if got := run(t, mnt, "df", "-T", "."); !strings.Contains(got, "fuse.pifs") {
		t.Errorf("df -T: %s", got)
	}
}

func TestNameEncoding(t *testing.T) {
	store := t.TempDir()
	dir := filepath.Join(store, "p")
	os.MkdirAll(dir, 0o755)
	data := strings.Join([]string{
		`{"type":"session","version":3,"id":"s/1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/x"}`,
		`{"type":"message","id":"..","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}`,
		`{"type":"message","id":"a/b%c","parentId":"..","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"b"}}`,
		`{"type":"message","id":"` + strings.Repeat("x", 300) + `","parentId":"a/b%c","timestamp":"2024-01-01T00:00:03.000Z","message":{"role":"user","content":"c"}}`,
		`{"type":"label","id":"l","parentId":"` + strings.Repeat("x", 300) + `","timestamp":"2024-01-01T00:00:04.000Z","targetId":"..","label":"."}`,
	}, "\n") + "\n"
	os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(data), 0o644)
	mnt := testMount(t, store)
	s := filepath.Join(mnt, "p", "s")
	got := lines(run(t, s, "ls", "entries"))
	long := "x"
	for len(long) < 64 {
		long += "x"
	}
	want := []string{"%2E%2E.json", "a%2Fb%25c.json", "l.json", long + "%~"}
	if len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || !strings.HasPrefix(got[3], want[3]) {
		t.Errorf("entries = %q", got)
	}
	if got := run(t, s, "readlink", "labels/%2E"); got != "../entries/%2E%2E.json\n" {
		t.Errorf("label . -> %q", got)
	}
	if got := run(t, mnt, "readlink", "by-id/s%2F1"); got != "../p/s\n" {
		t.Errorf("by-id -> %q", got)
	}
	// Every listed name resolves, and the long one holds its entry.
	out := run(t, s, "sh", "-c", "cat entries/*")
	if !strings.Contains(out, strings.Repeat("x", 300)) {
		t.Errorf("long entry unreadable")
	}
	if _, err := os.Stat(filepath.Join(s, "entries", "%2e%2e.json")); err == nil {
		t.Errorf("a non-canonical spelling resolves")
	}
	run(t, s, "find", "branches/", "tree/", "-type", "f", "-exec", "cat", "{}", "+")
}

func TestOverlapRefused(t *testing.T) {
	store, _ := writeStore(t)
	inside := filepath.Join(store, fixProject)
	if _, err := fs.Mount(inside, fs.Options{SessionsDir: store}); err == nil || !strings.Contains(err.Error(), "inside the sessions directory") {
		t.Errorf("mount inside the store: %v", err)
	}
	if _, err := fs.Mount(filepath.Dir(store), fs.Options{SessionsDir: store}); err == nil || !strings.Contains(err.Error(), "inside the mountpoint") {
		t.Errorf("mount over the store's parent: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(store, link)
	if _, err := fs.Mount(link, fs.Options{SessionsDir: store}); err == nil {
		t.Errorf("mount on a symlink to the store succeeded")
	}
}
