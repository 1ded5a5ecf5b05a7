package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attacks by another user (uid 65534) on a shared mount (--allow-other,
// pifs running as root), each refused or harmless: nothing is created,
// moved, restored, shown or ended beyond what that user could do without
// the mount.

// openStore makes a store in a folder every user may write (1777, as a
// shared store may be), holding user 65534's session alpha (in a project
// folder of root's at 0755), and a folder only root may enter beside it.
// It returns the store, alpha's file and the root-only folder.
func openStore(t *testing.T) (store, alpha, rootOnly string) {
	t.Helper()
	if os.Getuid() != 0 {
		skipOrFail(t, "needs root to act as another user")
	}
	top := t.TempDir()
	os.Chmod(top, 0o755)
	os.Chmod(filepath.Dir(top), 0o755)
	store = filepath.Join(top, "store")
	os.Mkdir(store, 0o777)
	os.Chmod(store, 0o1777)
	proj := filepath.Join(store, "--home-dev-alpha--")
	os.Mkdir(proj, 0o755)
	alpha = filepath.Join(proj, "2024-01-01T00-00-00-000Z_11111111-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(alpha, []byte(`{"type":"session","version":3,"id":"11111111-2222-3333-4444-555555555555","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/home/dev/alpha"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1704067201000}}
`), 0o644)
	os.Chown(alpha, nobody, nobody)
	rootOnly = filepath.Join(top, "root-only")
	os.Mkdir(rootOnly, 0o700)
	return store, alpha, rootOnly
}

// sessionDir is the mount's folder of a session file of the store.
func sessionDir(mnt, store, file string) string {
	rel, _ := filepath.Rel(store, strings.TrimSuffix(file, ".jsonl"))
	return filepath.Join(mnt, rel)
}

// TestSymlinkedProjectFolder: another user plants a project folder that
// is a symlink to a folder only root may write (--evil-- -> root-only);
// fork into its cwd, new there (at the root and in the project) and cp
// into it are all refused and create nothing there, as the same user's
// touch through the link is. A link to a folder of the user's own still
// takes their fork.
func TestSymlinkedProjectFolder(t *testing.T) {
	bin := buildPifs(t)
	store, alpha, rootOnly := openStore(t)
	if out, code := asNobody(t, "ln -s "+rootOnly+" "+filepath.Join(store, "--evil--")); code != 0 {
		t.Fatalf("planting the link: %s", out)
	}
	mine := filepath.Join(filepath.Dir(store), "nobodys")
	os.Mkdir(mine, 0o755)
	os.Chown(mine, nobody, nobody)
	if out, code := asNobody(t, "ln -s "+mine+" "+filepath.Join(store, "--mine--")); code != 0 {
		t.Fatalf("planting the link: %s", out)
	}
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	sess := sessionDir(mnt, store, alpha)
	src := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(src, []byte(`{"type":"session","version":3,"id":"77777777-2222-3333-4444-555555555555","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/evil"}`+"\n"), 0o644)
	os.Chmod(filepath.Dir(src), 0o755)

	if out, code := asNobody(t, "touch "+filepath.Join(store, "--evil--", "x.jsonl")); code == 0 {
		t.Fatalf("the user may create through the link in the store itself (%s): the fixture is wrong", out)
	}
	for what, script := range map[string]string{
		"fork into the link's cwd": `exec 3<>` + sess + `/fork && echo '{"cwd":"/evil"}' >&3 && cat <&3`,
		"fork of a part":           `exec 3<>` + sess + `/fork && echo '{"cwd":"/evil","from":"a1"}' >&3 && cat <&3`,
		"new at the root":          `exec 3<>` + mnt + `/new && echo /evil >&3 && cat <&3`,
		"cp into the project":      `cp ` + src + ` ` + mnt + `/--evil--/`,
	} {
		if out, code := asNobody(t, script); code == 0 {
			t.Errorf("%s: done through the mount (%s)", what, strings.TrimSpace(out))
		}
	}
	if names, _ := os.ReadDir(rootOnly); len(names) != 0 {
		for _, n := range names {
			fi, _ := n.Info()
			st := fi.Sys().(*syscall.Stat_t)
			t.Errorf("created in the root-only folder through the link: %s, owned by %d", n.Name(), st.Uid)
		}
	}
	errs, _ := os.ReadFile(filepath.Join(sess, "errors"))
	if !strings.Contains(string(errs), "user 65534 may not search "+rootOnly) {
		t.Errorf("errors does not say why the fork was refused: %s", errs)
	}

	// Through a link to a folder of their own, the fork is theirs.
	out, code := asNobody(t, `exec 3<>`+sess+`/fork && echo '{"cwd":"/mine"}' >&3 && cat <&3`)
	if code != 0 {
		t.Fatalf("fork into a linked folder of the user's own: %s", out)
	}
	names, _ := os.ReadDir(mine)
	if len(names) != 1 {
		t.Fatalf("the fork through the link to the user's own folder made %d files there", len(names))
	}
	if fi, _ := names[0].Info(); fi.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Errorf("the fork is not the user's")
	}
}

// tmpfsStore mounts a tmpfs every user may write (1777, its top a file
// system of its own, so that trash goes to its top) and makes a store in
// it holding root's private session (0600, quiet for an hour). It returns
// the top, the store and the session file.
func tmpfsStore(t *testing.T) (top, store, file string) {
	t.Helper()
	if os.Getuid() != 0 {
		skipOrFail(t, "needs root to act as another user")
	}
	top = t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m,mode=1777", "tmpfs", top).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", top).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
	os.Chmod(filepath.Dir(top), 0o755)
	store = filepath.Join(top, "store")
	os.MkdirAll(filepath.Join(store, "--home-dev-alpha--"), 0o755)
	file = filepath.Join(store, "--home-dev-alpha--", "2024-01-01T00-00-00-000Z_11111111-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(file, []byte(`{"type":"session","version":3,"id":"11111111-2222-3333-4444-555555555555","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/home/dev/alpha"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"private","timestamp":1704067201000}}
`), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(file, old, old)
	return top, store, file
}

// TestTrashFoldersOfAnotherUser: on a file system other users may write,
// another user makes root's trash folders beforehand (.Trash-0, and 0 in
// a sticky .Trash) and leaves in them a trashed "session" of theirs. A
// trash through the mount puts nothing there (refused, EACCES, with the
// reason), the planted session neither shows in trash/ nor is restored
// into the store, and the session stays where it was.
func TestTrashFoldersOfAnotherUser(t *testing.T) {
	bin := buildPifs(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	top, store, file := tmpfsStore(t)
	planted := `mkdir -m 777 ` + top + `/.Trash-0 ` + top + `/.Trash-0/files ` + top + `/.Trash-0/info &&
		mkdir -m 1777 ` + top + `/.Trash && mkdir -m 777 ` + top + `/.Trash/0 &&
		printf '{"type":"session","version":3,"id":"66666666-2222-3333-4444-555555555555","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/home/dev/alpha"}\n' > ` + top + `/.Trash-0/files/2024-01-05T00-00-00-000Z_66666666-2222-3333-4444-555555555555.jsonl &&
		printf '[Trash Info]\nPath=store/--home-dev-alpha--/2024-01-05T00-00-00-000Z_66666666-2222-3333-4444-555555555555.jsonl\nDeletionDate=2024-01-05T00:00:00\n' > ` + top + `/.Trash-0/info/2024-01-05T00-00-00-000Z_66666666-2222-3333-4444-555555555555.jsonl.trashinfo`
	if out, code := asNobody(t, planted); code != 0 {
		t.Fatalf("planting the trash folders: %s", out)
	}
	mnt, _ := daemon(t, bin, store, "--allow-other")
	sess := sessionDir(mnt, store, file)
	out, err := exec.Command("mv", sess, filepath.Join(mnt, "trash")+"/").CombinedOutput()
	if err == nil {
		t.Errorf("mv to trash/ went through with only another user's trash folders there")
	} else if !strings.Contains(string(out), "Permission denied") {
		t.Errorf("mv to trash/: %s, want EACCES", out)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the session left the store: %v", err)
	}
	for _, d := range []string{".Trash-0/files", ".Trash/0/files"} {
		names, _ := os.ReadDir(filepath.Join(top, d))
		for _, n := range names {
			if strings.Contains(n.Name(), "11111111") {
				t.Errorf("the session went into another user's %s", d)
			}
		}
	}
	if errs, _ := os.ReadFile(filepath.Join(sess, "errors")); !strings.Contains(string(errs), "not a trash folder of the user's") {
		t.Errorf("errors does not say why: %s", errs)
	}
	listed, _ := exec.Command("ls", filepath.Join(mnt, "trash")).CombinedOutput()
	if strings.Contains(string(listed), "66666666") {
		t.Errorf("trash/ shows what another user planted in their folder: %s", listed)
	}
	exec.Command("mv", filepath.Join(mnt, "trash", "2024-01-05T00-00-00-000Z_66666666-2222-3333-4444-555555555555"), filepath.Join(mnt, "--home-dev-alpha--")+"/").Run()
	if _, err := os.Lstat(filepath.Join(store, "--home-dev-alpha--", "2024-01-05T00-00-00-000Z_66666666-2222-3333-4444-555555555555.jsonl")); err == nil {
		t.Error("a session another user planted in their trash folder was restored into the store")
	}
}

// TestRestoreRefusesDuplicateID: while root's session S (id X) is in the
// trash, another user imports a copy of it into their own folder, or forks
// their own session with {"id": X}, as they may (the id is free then);
// S's restore is then refused (EEXIST, with the reason in errors), so that
// the store never holds two sessions with one id; S stays in the trash.
func TestRestoreRefusesDuplicateID(t *testing.T) {
	bin := buildPifs(t)
	for what, dup := range map[string]func(mnt, sFile string) string{
		"import": func(mnt, sFile string) string {
			return `cp ` + sFile + ` ` + mnt + `/--home-nobody--/copy.jsonl`
		},
		"fork with its id": func(mnt, sFile string) string {
			return `exec 3<>` + mnt + `/--home-dev-alpha--/2024-01-01T00-00-00-000Z_11111111-2222-3333-4444-555555555555/fork && echo '{"id":"44444444-2222-3333-4444-555555555555","cwd":"/home/nobody"}' >&3 && cat <&3`
		},
	} {
		t.Run(what, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
			store, _, _ := sharedStore(t)
			// Root's session S, which user 65534 may read.
			s := filepath.Join(store, "--home-dev-alpha--", "2024-01-02T00-00-00-000Z_44444444-2222-3333-4444-555555555555.jsonl")
			os.WriteFile(s, []byte(`{"type":"session","version":3,"id":"44444444-2222-3333-4444-555555555555","timestamp":"2024-01-02T00:00:00.000Z","cwd":"/home/dev/alpha"}
{"type":"message","id":"s1","parentId":null,"timestamp":"2024-01-02T00:00:01.000Z","message":{"role":"user","content":"S","timestamp":1704153601000}}
`), 0o644)
			copyOf := filepath.Join(t.TempDir(), "s.jsonl")
			data, _ := os.ReadFile(s)
			os.WriteFile(copyOf, data, 0o644)
			os.Chmod(filepath.Dir(copyOf), 0o755)
			old := time.Now().Add(-time.Hour)
			os.Chtimes(s, old, old)
			mnt, _ := daemon(t, bin, store, "--allow-other")
			os.Chmod(filepath.Dir(mnt), 0o755)
			name := strings.TrimSuffix(filepath.Base(s), ".jsonl")
			if out, err := exec.Command("mv", filepath.Join(mnt, "--home-dev-alpha--", name), filepath.Join(mnt, "trash")+"/").CombinedOutput(); err != nil {
				t.Fatalf("trash: %v %s", err, out)
			}
			if out, code := asNobody(t, dup(mnt, copyOf)); code != 0 {
				t.Fatalf("the other user's %s: %s", what, out)
			}
			if err := os.Rename(filepath.Join(mnt, "trash", name), filepath.Join(mnt, "--home-dev-alpha--", name)); !errors.Is(err, syscall.EEXIST) {
				t.Errorf("restore with its id taken: %v, want EEXIST", err)
			}
			if _, err := os.Lstat(s); err == nil {
				t.Errorf("the session is back with its id taken")
			}
			errs, _ := os.ReadFile(filepath.Join(mnt, "trash", name, "errors"))
			if !strings.Contains(string(errs), "two sessions with one id") {
				t.Errorf("errors does not say why: %q", errs)
			}
			ids := 0
			filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					if b, _ := os.ReadFile(p); strings.Contains(string(b), `"type":"session","version":3,"id":"44444444-`) {
						ids++
					}
				}
				return nil
			})
			if ids != 1 {
				t.Errorf("%d session files of the store have id 4444…, want 1", ids)
			}
		})
	}
}

// TestIDsShownPerCaller: what by-id/ and a project's errors tell about a
// session reaches only who may read it. A prefix of the other user's own
// session id that root's private session shares resolves, for them, to
// their session (the private one is no candidate), and for root to
// nothing (two candidates); an import refused because a private session
// of another project has its id says so without naming that session's
// project or file, in the errors file the other user reads.
func TestIDsShownPerCaller(t *testing.T) {
	bin := buildPifs(t)
	store, own, private := sharedStore(t)
	// Root's private session whose id starts as the other user's does.
	data, _ := os.ReadFile(private)
	hidden := filepath.Join(filepath.Dir(private), "2024-01-04T00-00-00-000Z_11111111-9999-3333-4444-555555555555.jsonl")
	os.WriteFile(hidden, []byte(strings.ReplaceAll(string(data), "22222222-2222-", "11111111-9999-")), 0o600)
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	ownDir := strings.TrimSuffix(filepath.Base(own), ".jsonl")

	out, code := asNobody(t, "readlink "+mnt+"/by-id/11111111-")
	if code != 0 || strings.TrimSpace(out) != "../--home-dev-alpha--/"+ownDir {
		t.Errorf("the other user's prefix 11111111- resolves to %q (%d), want their own session", out, code)
	}
	if out, code := asNobody(t, "readlink "+mnt+"/by-id/11111111-9"); code == 0 {
		t.Errorf("the other user finds root's private session by a prefix: %s", out)
	}
	if out, err := exec.Command("readlink", mnt+"/by-id/11111111-").CombinedOutput(); err == nil {
		t.Errorf("root's 11111111- resolves to %s, though two sessions share it", out)
	}
	if out, err := exec.Command("readlink", mnt+"/by-id/11111111-9").CombinedOutput(); err != nil || !strings.Contains(string(out), "--home-dev-beta--") {
		t.Errorf("root's 11111111-9: %s %v", out, err)
	}

	// An import with the private session's id, into the user's own folder.
	copyOf := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(copyOf, []byte(`{"type":"session","version":3,"id":"22222222-2222-3333-4444-555555555555","timestamp":"2024-01-05T00:00:00.000Z","cwd":"/home/nobody"}`+"\n"), 0o644)
	os.Chmod(filepath.Dir(copyOf), 0o755)
	if out, code := asNobody(t, "cp "+copyOf+" "+mnt+"/--home-nobody--/"); code == 0 {
		t.Fatalf("an import with a taken id went through: %s", out)
	}
	errs, code := asNobody(t, "cat "+mnt+"/--home-nobody--/errors")
	if code != 0 || !strings.Contains(errs, "import x.jsonl: refused") {
		t.Fatalf("the other user's errors does not say why the import was refused: %s", errs)
	}
	for _, leak := range []string{"--home-dev-beta--", "2024-01-02T00-00-00-000Z"} {
		if strings.Contains(errs, leak) {
			t.Errorf("errors names the private session (%s) to the other user: %s", leak, errs)
		}
	}
}

// appendLine appends an entry to a session file of the store, as pi does.
func appendLine(t *testing.T, file, id string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, `{"type":"message","id":"%s","parentId":"a1","timestamp":"2024-01-01T00:00:09.000Z","message":{"role":"user","content":"%s","timestamp":1704067209000}}`+"\n", id, id)
}

// TestEventsCapPerUser: the bound of waiting reads of events is per user
// (MaxBlockedReads, 32): another user who opens 40 readers ends some of
// their own, never root's opened after them, which goes on telling every
// change (of a session the other user may not see: their readers wait
// on).
func TestEventsCapPerUser(t *testing.T) {
	bin := buildPifs(t)
	store, _, private := sharedStore(t)
	mnt, _ := daemon(t, bin, store, "--allow-other")
	os.Chmod(filepath.Dir(mnt), 0o755)
	for i := 0; i < 40; i++ {
		readEvents(t, true, filepath.Join(mnt, "events"))
	}
	mine := readEvents(t, false, filepath.Join(mnt, "events"))
	for _, id := range []string{"c1", "c2", "c3"} {
		appendLine(t, private, id)
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(mine.out.String(), `"id":"`+id+`"`); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("root's events reader does not tell the append of %s after another user opened 40 readers:\n%s", id, mine.out.String())
			}
		}
	}
}

// TestSignalEndsEventsReaders: SIGTERM while readers of events (root's and
// another user's) wait for lines: their reads end (the end of the file),
// the mount goes, and pifs exits 0 on that first signal.
func TestSignalEndsEventsReaders(t *testing.T) {
	bin := buildPifs(t)
	store, _, _ := sharedStore(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(mnt, 0o755)
	os.Chmod(filepath.Dir(mnt), 0o755)
	cmd, lines := foreground(t, bin, nil, "--sessions-dir", store, "--cache-dir", "none", "--allow-other", mnt)
	readers := []*reader{readEvents(t, false, filepath.Join(mnt, "events")), readEvents(t, true, filepath.Join(mnt, "--home-dev-alpha--", "events"))}
	cmd.Process.Signal(syscall.SIGTERM)
	expectLine(t, lines, "unmounting "+mnt)
	for i, r := range readers {
		done := make(chan error, 1)
		go func() { done <- r.cmd.Wait() }()
		select {
		case err := <-done:
			t.Logf("reader %d ended: %v", i, err)
		case <-time.After(30 * time.Second):
			t.Errorf("reader %d of events still waits 30s after SIGTERM", i)
			r.cmd.Process.Kill()
			<-done
		}
	}
	exited := make(chan int, 1)
	go func() { exited <- exitCodeOf(cmd, lines) }()
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("pifs exited %d after SIGTERM, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("pifs still runs 30s after SIGTERM with events readers")
		cmd.Process.Kill()
		<-exited
	}
	if mounted(mnt) {
		t.Errorf("still mounted")
		exec.Command("fusermount3", "-u", "-z", mnt).Run()
	}
}
