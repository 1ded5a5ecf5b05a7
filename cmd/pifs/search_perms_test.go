package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSearchPerCaller: on a mount others may enter, a query answers each
// caller with the sessions they may read only: another user asking right
// after root, of the same query at the same version of the index, learns
// nothing of root's private session (its links, its hits, its excerpt),
// and root, asking again, still sees it.
func TestSearchPerCaller(t *testing.T) {
	bin := buildPifs(t)
	store, own, private := sharedStore(t)
	const word = "zebracrumble"
	for _, p := range []string{own, private} {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"type":"message","id":"z1","parentId":null,"timestamp":"2024-01-05T00:00:00.000Z","message":{"role":"user","content":"` + word + ` in ` + filepath.Base(filepath.Dir(p)) + `","timestamp":1704412800000}}` + "\n")
		f.Close()
	}
	mnt, _ := daemon(t, bin, store, "--allow-other", "--index", t.TempDir())
	os.Chmod(filepath.Dir(mnt), 0o755)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(mnt, "search", "status"))
		if strings.HasPrefix(string(b), "index complete") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index is never complete: %s", b)
		}
	}
	ask := `cd ` + mnt + ` && ls search/` + word + ` && cat search/` + word + `/hits search/` + word + `/hits.json && ls ./--home-dev-alpha--/search/` + word + `; ls ./--home-dev-beta--/search/` + word + ` 2>/dev/null; true`
	root := func() string {
		out, err := exec.Command("sh", "-c", ask).CombinedOutput()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	all := root()
	for _, s := range []string{"22222222", "11111111", word + " in --home-dev-beta--", word + " in --home-dev-alpha--"} {
		if !strings.Contains(all, s) {
			t.Errorf("root's answer lacks %q:\n%s", s, all)
		}
	}
	seen, _ := asNobody(t, ask)
	if strings.Contains(seen, "22222222") || strings.Contains(seen, "in --home-dev-beta--") {
		t.Errorf("another user learns of a session they may not read:\n%s", seen)
	}
	if !strings.Contains(seen, "2024-01-01T00-00-00-000Z_11111111") || !strings.Contains(seen, word+" in --home-dev-alpha--") {
		t.Errorf("the other user does not find their own session:\n%s", seen)
	}
	if again := root(); again != all {
		t.Errorf("root, asking again after the other user, is answered otherwise:\n%s\nthen\n%s", all, again)
	}
	// A query that cannot be read is refused, and why goes to the errors
	// of whoever asked it, not to another's.
	if out, err := exec.Command("ls", filepath.Join(mnt, "search", "rootsecret OR")).CombinedOutput(); err == nil {
		t.Errorf("ls of a bad query succeeded: %s", out)
	}
	theirs, _ := asNobody(t, `ls "`+mnt+`/search/nobodys OR" 2>/dev/null; cat `+mnt+`/search/errors`)
	if !strings.Contains(theirs, "nobodys OR") || strings.Contains(theirs, "rootsecret") {
		t.Errorf("the other user's search/errors:\n%s", theirs)
	}
	mine, err := os.ReadFile(filepath.Join(mnt, "search", "errors"))
	if err != nil || !strings.Contains(string(mine), "rootsecret OR") || strings.Contains(string(mine), "nobodys") {
		t.Errorf("root's search/errors: %v\n%s", err, mine)
	}
}
