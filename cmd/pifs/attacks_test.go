package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttackList runs again, against the binary, the attacks of the third
// adversarial run, as another user (uid 65534) on a shared mount served by
// root (--allow-other), and logs each one's verdict: refused (the caller
// got an error and nothing changed) or harmless (done, within what the
// caller may do without the mount). An attack that is neither fails the
// test. Each attack has its own test besides (see docs/guarantees.md);
// this is the whole list in one run, on one store.
func TestAttackList(t *testing.T) {
	bin := buildPifs(t)
	if os.Getuid() != 0 {
		skipOrFail(t, "needs root to act as another user")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	store, alpha, rootOnly := openStore(t)
	alphaDir := filepath.Dir(alpha)
	// Root's public session P and another, Q, quiet for an hour; root's
	// private session B, whose id starts as the user's own does; the
	// user's own project folder.
	header := func(id, cwd string) string {
		return `{"type":"session","version":3,"id":"` + id + `","timestamp":"2024-01-02T00:00:00.000Z","cwd":"` + cwd + `"}` + "\n" +
			`{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-02T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1704153601000}}` + "\n"
	}
	pFile := filepath.Join(alphaDir, "2024-01-02T00-00-00-000Z_55555555-2222-3333-4444-555555555555.jsonl")
	qFile := filepath.Join(alphaDir, "2024-01-03T00-00-00-000Z_66666666-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(pFile, []byte(header("55555555-2222-3333-4444-555555555555", "/home/dev/alpha")), 0o644)
	os.WriteFile(qFile, []byte(header("66666666-2222-3333-4444-555555555555", "/home/dev/alpha")), 0o644)
	beta := filepath.Join(store, "--home-dev-beta--")
	os.Mkdir(beta, 0o700)
	bFile := filepath.Join(beta, "2024-01-04T00-00-00-000Z_11111111-9999-3333-4444-555555555555.jsonl")
	os.WriteFile(bFile, []byte(header("11111111-9999-3333-4444-555555555555", "/home/dev/beta")), 0o600)
	mine := filepath.Join(store, "--home-nobody--")
	os.Mkdir(mine, 0o755)
	os.Chown(mine, nobody, nobody)
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{alpha, pFile, qFile, bFile} {
		os.Chtimes(f, old, old)
	}
	src := t.TempDir()
	os.Chmod(src, 0o755)
	write := func(name, data string) string {
		p := filepath.Join(src, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	mnt, pid := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	sess := func(f string) string { return sessionDir(mnt, store, f) }
	fails := func(script string) bool { _, code := asNobody(t, script); return code != 0 }
	empty := func(dir string) bool { names, _ := os.ReadDir(dir); return len(names) == 0 }
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	type verdict struct{ attack, result string }
	var table []verdict
	check := func(attack, result string, ok bool, detail string) {
		if !ok {
			result = "FAILED: " + detail
			t.Errorf("%s: %s", attack, detail)
		}
		table = append(table, verdict{attack, result})
	}

	// 1. Concurrent appends through the mount, one transaction a line.
	out, code := asNobody(t, `cd `+sess(alpha)+` && for w in 0 1 2 3; do (i=0; while [ $i -lt 50 ]; do echo "w$w $i" > append || exit 1; i=$((i+1)); done) & done; wait`)
	lost, breaks := chainOf(t, alpha, 200)
	check("4 writers × 50 appends of one transaction each to their own session", "harmless", code == 0 && lost == 0 && breaks == 0,
		fmt.Sprintf("exit %d %s; %d lines lost or doubled, %d chain breaks", code, out, lost, breaks))

	// 2. A project folder that is a link to a folder only root may write.
	asNobody(t, "ln -s "+rootOnly+" "+filepath.Join(store, "--evil--"))
	evil := write("evil.jsonl", header("77777777-2222-3333-4444-555555555555", "/evil"))
	refused := fails(`exec 3<>`+sess(alpha)+`/fork && echo '{"cwd":"/evil"}' >&3 && cat <&3`) &&
		fails(`exec 3<>`+mnt+`/new && echo /evil >&3 && cat <&3`) &&
		fails(`cp `+evil+` `+mnt+`/--evil--/`)
	check("fork, new and cp into a planted link --evil-- -> a root-only folder", "refused", refused && empty(rootOnly), "created through the link")

	// 4. A restore while the user's import holds the trashed session's id.
	if out, err := exec.Command("mv", sess(pFile), mnt+"/trash/").CombinedOutput(); err != nil {
		t.Fatalf("root's trash: %v %s", err, out)
	}
	pCopy := write("p.jsonl", header("55555555-2222-3333-4444-555555555555", "/home/nobody"))
	imported := !fails("cp " + pCopy + " " + mnt + "/--home-nobody--/")
	err := os.Rename(filepath.Join(mnt, "trash", filepath.Base(sess(pFile))), sess(pFile))
	check("a restore while the user's import of a copy holds the trashed session's id", "refused",
		imported && err != nil && !exists(pFile), fmt.Sprintf("import %v, restore %v", imported, err))

	// 5. An import pi opens but cannot resume.
	cycle := write("cycle.jsonl", `{"type":"session","version":3,"id":"88888888-2222-3333-4444-555555555555","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/home/nobody"}
{"type":"message","id":"c1","parentId":"c2","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}
{"type":"message","id":"c2","parentId":"c1","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"y","timestamp":2}}
`)
	check("cp of a session whose last entry sits under a parent cycle (pi cannot resume it)", "refused",
		fails("cp "+cycle+" "+mnt+"/--home-nobody--/") && !exists(filepath.Join(mine, "cycle.jsonl")), "imported")

	// 6. Ids the user may not read.
	ownLink, _ := asNobody(t, "readlink "+mnt+"/by-id/11111111-")
	check("by-id/ prefix shared with root's private session", "harmless",
		strings.Contains(ownLink, "--home-dev-alpha--") && fails("readlink "+mnt+"/by-id/11111111-9"), "by-id/11111111- gives "+ownLink)
	bCopy := write("b.jsonl", header("11111111-9999-3333-4444-555555555555", "/home/nobody"))
	fails("cp " + bCopy + " " + mnt + "/--home-nobody--/")
	errs, _ := asNobody(t, "cat "+mnt+"/--home-nobody--/errors")
	check("an import with a private session's id: what errors tells", "refused",
		strings.Contains(errs, "refused") && !strings.Contains(errs, "--home-dev-beta--"), "errors: "+errs)

	// 7. Another user's 40 readers of events, root's opened after them.
	for i := 0; i < 40; i++ {
		readEvents(t, true, filepath.Join(mnt, "events"))
	}
	rootReader := readEvents(t, false, filepath.Join(mnt, "events"))
	appendLine(t, bFile, "ev1")
	told := false
	for deadline := time.Now().Add(20 * time.Second); !told && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		told = strings.Contains(rootReader.out.String(), `"id":"ev1"`)
	}
	check("40 readers of events by the user", "harmless", told, "root's reader opened after them tells nothing")

	// 8. pi's lines at the path of a session trashed while pi held it.
	if out, err := exec.Command("mv", sess(qFile), mnt+"/trash/").CombinedOutput(); err != nil {
		t.Fatalf("root's trash: %v %s", err, out)
	}
	stray := `{"type":"message","id":"a2","parentId":"a1","timestamp":"2024-01-03T00:00:02.000Z","message":{"role":"user","content":"pi went on","timestamp":2}}` + "\n"
	os.WriteFile(qFile, []byte(stray), 0o644)
	err = os.Rename(filepath.Join(mnt, "trash", filepath.Base(sess(qFile))), sess(qFile))
	data, _ := os.ReadFile(qFile)
	check("pi appending to a session trashed under it, then the restore", "harmless",
		err == nil && string(data) == header("66666666-2222-3333-4444-555555555555", "/home/dev/alpha")+stray, fmt.Sprintf("restore %v: %q", err, data))

	// Earlier groups, again.
	before := storeListing(t, store)
	check("rm -rf of root's session folder and of their own", "refused", fails("rm -rf "+sess(qFile)) && fails("rm -rf "+sess(alpha)), "rm -rf succeeded")
	check("append to root's session", "refused", fails("echo hi >> "+sess(qFile)+"/append"), "appended")
	check("read root's 0600 session's context.json", "refused", fails("cat "+sess(bFile)+"/context.json"), "read")
	check("mv root's session to trash/", "refused", fails("mv "+sess(qFile)+" "+mnt+"/trash/"), "trashed")
	check("sed -i on their own session's name", "refused", fails("sed -i s/x/y/ "+sess(alpha)+"/name"), "rewritten")
	if after := storeListing(t, store); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("the refused attacks changed the store:\nbefore %q\nafter  %q", before, after)
	}

	// 7. A signal while events readers wait: pifs ends.
	syscall.Kill(pid, syscall.SIGTERM)
	ended := false
	for deadline := time.Now().Add(30 * time.Second); !ended && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ended = syscall.Kill(pid, 0) != nil && !mounted(mnt)
	}
	check("SIGTERM with 41 readers of events waiting", "harmless", ended, "pifs still runs or the mount is there")

	// 3. Trash folders another user made, on a file system of its own.
	top, tStore, tFile := tmpfsStore(t)
	asNobody(t, `mkdir -m 777 `+top+`/.Trash-0 && mkdir -m 1777 `+top+`/.Trash && mkdir -m 777 `+top+`/.Trash/0`)
	tMnt, _ := daemon(t, bin, tStore, "--allow-other")
	_, err = exec.Command("mv", sessionDir(tMnt, tStore, tFile), tMnt+"/trash/").CombinedOutput()
	check("root's trash with .Trash-0 and .Trash/0 made by the user", "refused",
		err != nil && exists(tFile) && empty(top+"/.Trash-0") && empty(top+"/.Trash/0"), "trashed into the user's folder")

	if !empty(rootOnly) {
		t.Errorf("the root-only folder beside the store holds files")
	}
	var b strings.Builder
	for _, v := range table {
		fmt.Fprintf(&b, "\n  %-85s %s", v.attack, v.result)
	}
	t.Logf("attacks as uid %d against the binary:%s", nobody, b.String())
}

// chainOf checks the user messages "wK I" appended to a session file: how
// many of want are lost or doubled, and how many of them take a parent
// that has another child.
func chainOf(t *testing.T, file string, want int) (lostOrDoubled, breaks int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	children := map[string]int{}
	type entry struct{ parent, text string }
	var added []entry
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var e struct {
			ParentID *string
			Message  struct {
				Role    string
				Content json.RawMessage
			}
		}
		json.Unmarshal([]byte(line), &e)
		if e.ParentID != nil {
			children[*e.ParentID]++
		}
		var blocks []struct{ Text string }
		var text string
		if json.Unmarshal(e.Message.Content, &text) != nil && json.Unmarshal(e.Message.Content, &blocks) == nil && len(blocks) > 0 {
			text = blocks[0].Text
		}
		if e.Message.Role == "user" && strings.HasPrefix(text, "w") && e.ParentID != nil {
			added = append(added, entry{*e.ParentID, text})
		}
	}
	seen := map[string]int{}
	for _, e := range added {
		seen[e.text]++
		if children[e.parent] != 1 {
			breaks++
		}
	}
	for _, n := range seen {
		if n != 1 {
			lostOrDoubled++
		}
	}
	return lostOrDoubled + want - len(seen), breaks
}
