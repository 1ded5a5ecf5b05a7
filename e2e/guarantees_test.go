package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pifs/pifs/fs"
)

// TestRmRfChangesNothing: rm -rf of a session folder fails and leaves the
// file byte for byte as it was, labels included; rm of one label alone
// still clears it.
func TestRmRfChangesNothing(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	before, _ := os.ReadFile(file)
	if _, code := runStatus(t, mnt, "rm", "-rf", "./"+fixProject+"/"+fixSession); code == 0 {
		t.Error("rm -rf of a session folder succeeded")
	}
	if _, code := runStatus(t, mnt, "rm", "-rf", "./"+fixProject); code == 0 {
		t.Error("rm -rf of a project folder succeeded")
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Fatalf("rm -rf changed the session file:\n%s", after[len(before):])
	}
	if got := lines(run(t, sessionPath(mnt), "ls", "labels")); len(got) != 1 {
		t.Fatalf("labels after rm -rf: %q", got)
	}
	if !strings.Contains(run(t, sessionPath(mnt), "cat", "errors"), "not cleared") {
		t.Error("errors does not say why the label was kept")
	}
	run(t, sessionPath(mnt), "rm", "labels/good%2Fone")
	eventually(t, "label cleared by rm alone", func() (bool, string) {
		got := lines(run(t, sessionPath(mnt), "ls", "labels"))
		return len(got) == 0, strings.Join(got, " ")
	})
}

// otherUser returns a user that is not root, making one if needed.
func otherUser(t *testing.T) (uid, gid int) {
	t.Helper()
	const name = "pifs-test-other"
	u, err := user.Lookup(name)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd: %v: %s", err, out)
		}
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// asUser runs a command as another user and returns its exit code.
func asUser(t *testing.T, uid, gid int, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("setpriv", append([]string{"--reuid", strconv.Itoa(uid), "--regid", strconv.Itoa(gid), "--clear-groups", "--"}, args...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(out), 0
}

// TestOtherUsersSeeWhatTheStoreShows: with --allow-other, another user
// reads through the mount exactly what the store lets them read: a
// private project (0700, files 0600) not at all, a public one in full.
func TestOtherUsersSeeWhatTheStoreShows(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	uid, gid := otherUser(t)
	store, file := writeStore(t)
	os.Chmod(store, 0o755)
	private := filepath.Join(store, "--private--")
	os.Mkdir(private, 0o700)
	data, _ := os.ReadFile(file)
	os.WriteFile(filepath.Join(private, "s.jsonl"), data, 0o600)
	mnt := testMount(t, store, func(o *fs.Options) { o.AllowOther = true })
	os.Chmod(filepath.Dir(mnt), 0o755) // the test's temp folder

	pub := filepath.Join(mnt, fixProject, fixSession)
	for _, f := range []string{"session.jsonl", "context.json", "transcript.md", "entries/a1.json"} {
		if out, code := asUser(t, uid, gid, "cat", filepath.Join(pub, f)); code != 0 {
			t.Errorf("another user cannot read the public %s: %s", f, out)
		}
	}
	// Directly in the store and through the mount alike: refused.
	for _, p := range []string{filepath.Join(private, "s.jsonl"), filepath.Join(mnt, "--private--", "s", "session.jsonl"), filepath.Join(mnt, "--private--", "s", "context.json")} {
		if _, code := asUser(t, uid, gid, "cat", p); code == 0 {
			t.Errorf("another user reads the private %s", p)
		}
	}
	if _, code := asUser(t, uid, gid, "ls", filepath.Join(mnt, "--private--")); code == 0 {
		t.Error("another user lists the private project")
	}
	// The owner (root) still reads it, with the store's modes shown.
	fi, err := os.Stat(filepath.Join(mnt, "--private--", "s", "context.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("private context.json: %v, mode %v; want 0600", err, fi.Mode())
	}
	if fi, err := os.Stat(filepath.Join(mnt, "--private--", "s")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private session folder: %v, mode %v; want 0700", err, fi.Mode())
	}
	if fi, err := os.Stat(filepath.Join(pub, "leaf")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("public leaf control: %v, mode %v; want 0644", err, fi.Mode())
	}
}

// TestSedInPlaceRefused: sed -i on a control fails, changes nothing, and
// errors says what to do instead.
func TestSedInPlaceRefused(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	before, _ := os.ReadFile(file)
	if _, code := runStatus(t, sessionPath(mnt), "sed", "-i", "s/x/y/", "name"); code == 0 {
		t.Error("sed -i on name succeeded")
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Error("sed -i changed the session file")
	}
	if !strings.Contains(run(t, sessionPath(mnt), "cat", "errors"), "write to the control itself") {
		t.Errorf("errors: %q", run(t, sessionPath(mnt), "cat", "errors"))
	}
}

// TestRewriteInPlaceSeenEverywhere: a file rewritten in place to the same
// size (a message's text changed) shows within a second in every view,
// entry files whose pages the kernel keeps included.
func TestRewriteInPlaceSeenEverywhere(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	views := []string{"session.jsonl", "entries/a2.json", "branches/a3/0003-assistant-a2.json", "branches/a3/context.json", "branches/a3/transcript.md", "branches/a3/transcript.html"}
	for _, v := range views {
		if !strings.Contains(string(readMount(t, filepath.Join(s, v))), "hi there") {
			t.Fatalf("%s lacks the text before the rewrite", v)
		}
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	at := bytes.Index(data, []byte("hi there"))
	f.WriteAt([]byte("HI THERE"), int64(at))
	f.Close()
	for _, v := range views {
		eventually(t, v+" after a rewrite in place", func() (bool, string) {
			got := string(readMount(t, filepath.Join(s, v)))
			return strings.Contains(got, "HI THERE") && !strings.Contains(got, "hi there"), ""
		})
	}
}

// TestRewriteSameTick: a rewrite in place of the same size right after an
// append through the mount (within the same tick of the kernel's clock, so
// that size, mtime and ctime are all as pifs saw them after its own write)
// still shows: the change event for a file that changed within the racy
// window makes a new version, which readers check by its bytes. The race
// is run several times; before, the entry file and context.json kept the
// old text until the next change.
func TestRewriteSameTick(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	for i := range 10 {
		text := fmt.Sprintf("word%02d", i)
		if err := os.WriteFile(filepath.Join(s, "append"), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Read the views once, so that the kernel and pifs hold them.
		readMount(t, filepath.Join(s, "context.json"))
		leaf := strings.TrimSpace(string(readMount(t, filepath.Join(s, "leaf"))))
		readMount(t, filepath.Join(s, "entries", leaf+".json"))
		if err := os.WriteFile(filepath.Join(s, "append"), []byte("more\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// At once: the same size, in the same tick as pifs's last look.
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		at := bytes.LastIndex(data, []byte(text))
		f, err := os.OpenFile(file, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		upper := strings.ToUpper(text)
		_, err = f.WriteAt([]byte(upper), int64(at))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"context.json", "entries/" + leaf + ".json"} {
			eventually(t, fmt.Sprintf("round %d: %s after a same-tick rewrite", i, v), func() (bool, string) {
				got := string(readMount(t, filepath.Join(s, v)))
				return strings.Contains(got, upper) && !strings.Contains(got, text), ""
			})
		}
	}
}
