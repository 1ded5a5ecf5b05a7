package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/internal/fakemodel"
	"github.com/pifs/pifs/internal/oracle"
)

// TestPiContinuesACopy: a user who is not root copies a branch's
// session.jsonl (pi's /export of that branch) out of the mount: the copy
// is theirs to write, and pi, run as that user on it, continues it with
// exactly the branch's context.json. cp -r of a session folder gives a
// tree the same user removes with rm -r.
func TestPiContinuesACopy(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	uid, gid := otherUser(t)
	srv, err := fakemodel.Start(fakemodel.Echo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	// Both agents run pi from one place, which the other user may read:
	// pi's system prompt names it.
	linked := oracle.Linked(t)
	a := oracle.NewAgent(t, srv.ModelsJSON(fakemodel.DefaultCosts()), fakemodel.Provider, fakemodel.Model)
	a.UseOracle(linked)
	file := twoTurns(t, a, t.TempDir())
	// The store and the mount, open to the other user.
	for p := file; p != "/"; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			os.Chmod(p, fi.Mode().Perm()|0o044|map[bool]os.FileMode{true: 0o011}[fi.IsDir()])
		}
	}
	mnt := testMount(t, a.Sessions, func(o *fs.Options) { o.AllowOther = true })
	for p := mnt; p != "/"; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && p != mnt {
			os.Chmod(p, fi.Mode().Perm()|0o011)
		}
	}
	dir := filepath.Join(mnt, filepath.Base(filepath.Dir(file)), strings.TrimSuffix(filepath.Base(file), ".jsonl"))
	// The branch that ends at pi's first answer.
	a1 := entryWith(t, sessionEntries(t, file), "assistant", "echo: first")
	branch := filepath.Join(dir, "branches", a1)
	want := append(contextMessages(t, filepath.Join(branch, "context.json")), ctxMessage{Role: "user", Text: "continue"})

	home := t.TempDir()
	os.Chmod(home, 0o777)
	copied := filepath.Join(home, "branch.jsonl")
	if out, code := asUser(t, uid, gid, "cp", filepath.Join(branch, "session.jsonl"), copied); code != 0 {
		t.Fatalf("cp as user %d: %s", uid, out)
	}
	fi, err := os.Stat(copied)
	if err != nil || fi.Mode().Perm()&0o200 == 0 {
		t.Fatalf("the copy %v: %v; want one its owner may write", fi.Mode(), err)
	}

	pi := oracle.NewAgent(t, srv.ModelsJSON(fakemodel.DefaultCosts()), fakemodel.Provider, fakemodel.Model)
	pi.UseOracle(linked)
	pi.RunAs(t, uid, gid)
	n := len(srv.Requests())
	if out := pi.Print(t, home, "continue", "--session", copied); out != "echo: continue\n" {
		t.Errorf("pi printed %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != n+1 {
		t.Fatalf("%d requests for one turn", len(reqs)-n)
	}
	if d := sameMessages(requestMessages(t, reqs[n]), want); d != "" {
		t.Errorf("pi, continuing the copy, did not send the branch's context.json: %s", d)
	}
	if got := sessionEntries(t, copied); got[len(got)-1]["type"] != "message" {
		t.Errorf("pi wrote nothing to the copy")
	}

	// cp -r of the session folder, then rm -r of the copy, as that user.
	tree := filepath.Join(home, "session")
	if out, code := asUser(t, uid, gid, "sh", "-c", "cp -r "+dir+" "+tree+" && rm -r "+tree+" </dev/null"); code != 0 {
		t.Errorf("cp -r and rm -r of a session folder as user %d: %s", uid, out)
	}
	if _, err := os.Stat(tree); !os.IsNotExist(err) {
		t.Errorf("the copy of the session folder is still there: %v", err)
	}
}
