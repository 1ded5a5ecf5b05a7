package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Another user on a mount served by root with --allow-other: what they can
// create, change and read through it is what they could in the store
// itself. Each test runs the same operations as that user directly on the
// store and through the mount, and compares.

const nobody = 65534

// asNobody runs a shell command as uid and gid 65534, with no other
// group, and returns its output and exit code.
func asNobody(t *testing.T, script string) (string, int) {
	t.Helper()
	// A mount that stops answering fails the test, never hangs it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", script)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("setpriv: %v", err)
	}
	return string(out), 0
}

// sharedStore makes, in a folder every user may search, a store where
// user 65534 owns one session file (alice's, in a project folder of
// root's at 0755) and cannot enter a private project (root's, 0700, its
// session 0600); a third project folder belongs to 65534. It returns the
// store and the session files.
func sharedStore(t *testing.T) (store, own, private string) {
	t.Helper()
	if os.Getuid() != 0 {
		skipOrFail(t, "needs root to act as another user")
	}
	top := t.TempDir()
	os.Chmod(top, 0o755)
	os.Chmod(filepath.Dir(top), 0o755)
	store = filepath.Join(top, "store")
	for p, mode := range map[string]os.FileMode{"--home-dev-alpha--": 0o755, "--home-dev-beta--": 0o700, "--home-nobody--": 0o755} {
		os.MkdirAll(filepath.Join(store, p), mode)
		os.Chmod(filepath.Join(store, p), mode)
	}
	os.Chmod(store, 0o755)
	os.Chown(filepath.Join(store, "--home-nobody--"), nobody, nobody)
	own = filepath.Join(store, "--home-dev-alpha--", "2024-01-01T00-00-00-000Z_11111111-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(own, []byte(`{"type":"session","version":3,"id":"11111111-2222-3333-4444-555555555555","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/home/dev/alpha"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1704067201000}}
`), 0o644)
	os.Chown(own, nobody, nobody)
	private = filepath.Join(store, "--home-dev-beta--", "2024-01-02T00-00-00-000Z_22222222-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(private, []byte(`{"type":"session","version":3,"id":"22222222-2222-3333-4444-555555555555","timestamp":"2024-01-02T00:00:00.000Z","cwd":"/home/dev/beta"}
{"type":"session_info","id":"n1","parentId":null,"timestamp":"2024-01-02T00:00:01.000Z","name":"secret plan"}
{"type":"message","id":"b1","parentId":"n1","timestamp":"2024-01-02T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"provider":"p","model":"m","usage":{"input":4242,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":7.77}},"timestamp":1704153602000}}
`), 0o600)
	return store, own, private
}

// storeListing is every path of the store with its owner and mode.
func storeListing(t *testing.T, store string) []string {
	t.Helper()
	var out []string
	filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(store, p)
		out = append(out, rel+" "+fi.Mode().String()+" "+fmt.Sprintf("%d:%d", st.Uid, st.Gid))
		return nil
	})
	sort.Strings(out)
	return out
}

// TestCallerRightsOnWrites: a user who owns one session file and may not
// write the project folders creates nothing through fork or new, neither
// beside their session, nor in a private project, nor in a new project
// folder; what they may do in the store (append to their file, create in
// their own folder) they may do through the mount, and what is created is
// theirs.
func TestCallerRightsOnWrites(t *testing.T) {
	bin := buildPifs(t)
	store, own, private := sharedStore(t)
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	sess := filepath.Join(mnt, "--home-dev-alpha--", strings.TrimSuffix(filepath.Base(own), ".jsonl"))
	before := storeListing(t, store)

	// The same operations, directly and through the mount: allowed in
	// both or refused in both.
	cases := []struct {
		what, direct, mount string
	}{
		{"a new session beside their own", "touch " + filepath.Join(store, "--home-dev-alpha--", "x.jsonl"),
			`exec 3<>` + sess + `/fork && echo "" >&3 && cat <&3`},
		{"a session in a private project", "touch " + filepath.Join(store, "--home-dev-beta--", "x.jsonl"),
			`exec 3<>` + sess + `/fork && echo '{"cwd":"/home/dev/beta"}' >&3 && cat <&3`},
		{"a new project folder", "mkdir " + filepath.Join(store, "--root-evil--"),
			`exec 3<>` + sess + `/fork && echo '{"cwd":"/root/evil"}' >&3 && cat <&3`},
		{"a new session at the root's new", "mkdir " + filepath.Join(store, "--tmp-x--"),
			`exec 3<>` + mnt + `/new && echo /tmp/x >&3 && cat <&3`},
		{"an append to a private session", "echo x >> " + private,
			`echo hi >> ` + filepath.Join(mnt, "--home-dev-beta--", "2024-01-02T00-00-00-000Z_22222222-2222-3333-4444-555555555555", "append")},
	}
	for _, c := range cases {
		dout, dcode := asNobody(t, c.direct)
		mout, mcode := asNobody(t, c.mount)
		if dcode == 0 {
			t.Fatalf("%s: allowed directly in the store (%s): the fixture is wrong", c.what, dout)
		}
		if mcode == 0 {
			t.Errorf("%s: refused in the store (%s) but done through the mount: %s", c.what, strings.TrimSpace(dout), mout)
		}
	}
	if after := storeListing(t, store); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("the refused writes changed the store:\nbefore %q\nafter  %q", before, after)
	}
	errs, _ := os.ReadFile(filepath.Join(sess, "errors"))
	if !strings.Contains(string(errs), "user 65534 may not create files in") {
		t.Errorf("errors does not say why the fork was refused: %s", errs)
	}

	// Allowed in the store, allowed through the mount, and theirs.
	if out, code := asNobody(t, "echo direct >> "+own); code != 0 {
		t.Fatalf("the owner cannot append to their file: %s", out)
	}
	if out, code := asNobody(t, "echo 'through the mount' >> "+sess+"/append"); code != 0 {
		t.Errorf("the owner cannot append through the mount: %s", out)
	}
	out, code := asNobody(t, `exec 3<>`+sess+`/fork && echo '{"cwd":"/home/nobody"}' >&3 && cat <&3`)
	if code != 0 {
		t.Fatalf("fork into the user's own project folder: %s", out)
	}
	made := filepath.Join(store, strings.TrimSpace(out)+".jsonl")
	fi, err := os.Stat(made)
	if err != nil {
		t.Fatalf("the fork's reply %q names no file of the store: %v", out, err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || st.Gid != nobody {
		t.Errorf("the forked session is owned by %d:%d, not by the user who made it", st.Uid, st.Gid)
	}
	if fi, _ := os.Stat(own); fi.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Error("the appended file changed owner")
	}
}

// TestLabelsWritableByOwner: under default_permissions (--allow-other),
// the owner of a session labels and unlabels entries with ln -s and rm;
// another user may not.
func TestLabelsWritableByOwner(t *testing.T) {
	bin := buildPifs(t)
	store, own, private := sharedStore(t)
	os.Chmod(filepath.Dir(private), 0o755)
	os.Chmod(private, 0o644) // readable, not writable, by 65534
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	sess := filepath.Join(mnt, "--home-dev-alpha--", strings.TrimSuffix(filepath.Base(own), ".jsonl"))
	fi, err := os.Stat(filepath.Join(sess, "labels"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("labels/ of a 0644 file: %v %v, want drwxr-xr-x", err, fi.Mode())
	}
	if out, code := asNobody(t, "ln -s a1 "+sess+"/labels/mine"); code != 0 {
		t.Fatalf("the owner cannot label: %s", out)
	}
	if data, _ := os.ReadFile(own); !strings.Contains(string(data), `"label":"mine"`) {
		t.Error("ln -s wrote no label")
	}
	if out, code := asNobody(t, "rm "+sess+"/labels/mine"); code != 0 {
		t.Fatalf("the owner cannot clear a label: %s", out)
	}
	other := filepath.Join(mnt, "--home-dev-beta--", strings.TrimSuffix(filepath.Base(private), ".jsonl"))
	before, _ := os.ReadFile(private)
	if _, code := asNobody(t, "ln -s b1 "+other+"/labels/theirs"); code == 0 {
		t.Error("another user labels a session they may not write")
	}
	if after, _ := os.ReadFile(private); string(after) != string(before) {
		t.Error("a refused label changed the file")
	}
}

// TestVisibilityPerCaller: what the mount tells about a session (id, cwd,
// name, tokens, cost, that it is the newest) reaches only a user who may
// read its file: another user finds nothing of a private session in the
// reports, by-id/, by-cwd/, by-name/, latest or cwd, and a session file's
// mode is its folder's and views' (never widened), while root sees all.
func TestVisibilityPerCaller(t *testing.T) {
	bin := buildPifs(t)
	store, own, private := sharedStore(t)
	// A project others may enter, whose one session is private.
	gamma := filepath.Join(store, "--home-dev-gamma--")
	os.Mkdir(gamma, 0o755)
	os.Chmod(gamma, 0o755)
	data, _ := os.ReadFile(private)
	secret := filepath.Join(gamma, "2024-01-03T00-00-00-000Z_33333333-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(secret, []byte(strings.NewReplacer("22222222-", "33333333-", "/home/dev/beta", "/home/dev/gamma-secret").Replace(string(data))), 0o600)
	// Sessions of the modes that must not be widened, in a folder others
	// may enter.
	modes := map[string]os.FileMode{"m000": 0o000, "m200": 0o200, "m020": 0o020, "m002": 0o002}
	ownData, _ := os.ReadFile(own)
	for name, mode := range modes {
		p := filepath.Join(store, "--home-nobody--", name+".jsonl")
		os.WriteFile(p, ownData, 0o600)
		os.Chmod(p, mode)
	}
	// The private sessions are the newest.
	now := time.Now()
	os.Chtimes(own, now.Add(-time.Hour), now.Add(-time.Hour))
	os.Chtimes(private, now, now)
	os.Chtimes(secret, now, now)
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)

	// Everything that gathers sessions, as the other user reads it.
	gather := `cd ` + mnt + ` && for f in usage/* --home-dev-gamma--/usage/* --home-dev-gamma--/cwd; do echo "== $f"; cat "$f"; done;
		ls -laR by-id by-cwd --home-dev-gamma--/by-name; readlink latest --home-dev-gamma--/latest; ls -la --home-dev-gamma--; true`
	leaks := []string{"22222222", "33333333", "secret plan", "4242", "7.77", "gamma-secret", "home/dev/beta"}
	seen, _ := asNobody(t, gather)
	for _, l := range leaks {
		if strings.Contains(seen, l) {
			t.Errorf("another user learns %q of a session they may not read:\n%s", l, seen)
		}
	}
	if !strings.Contains(seen, "11111111") {
		t.Errorf("the other user does not see their own session:\n%s", seen)
	}
	// Directly in the store, the same user learns none of it either.
	if out, code := asNobody(t, "cat "+private+" "+secret); code == 0 || strings.Contains(out, "secret plan") {
		t.Fatalf("the fixture lets the other user read the private files: %s", out)
	}
	// Root sees all, in the same places.
	all, err := exec.Command("sh", "-c", gather).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"22222222", "33333333", "secret plan", "4242", "gamma-secret"} {
		if !strings.Contains(string(all), l) {
			t.Errorf("root does not see %q through the mount", l)
		}
	}

	// Modes as the file's: no read bit, no x on the folder, and views
	// nobody but root may read.
	for name, mode := range modes {
		dir := filepath.Join(mnt, "--home-nobody--", name)
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0)
		if fi.Mode().Perm()&^0o222 != want {
			t.Errorf("%s (file %04o): session folder %v, want no read or search bit", name, mode, fi.Mode())
		}
		ctx, err := os.Stat(filepath.Join(dir, "context.json"))
		if err != nil || ctx.Mode().Perm()&^0o222 != 0 {
			t.Errorf("%s (file %04o): context.json %v %v, want no read bit", name, mode, err, ctx.Mode())
		}
		if out, code := asNobody(t, "cat "+filepath.Join(dir, "context.json")); code == 0 {
			t.Errorf("%s (file %04o): another user reads context.json: %s", name, mode, out)
		}
	}
}
