package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// demoStore copies testdata/demo (sessions written by pi) to a temporary
// store.
func demoStore(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../testdata/demo/.", store).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return store
}

// TestPathsPeopleType: by-cwd/ mirrors working directories, latest points
// at the newest session (at the root and per project), and by-name/ at
// each named session; each resolves to the session folder.
func TestPathsPeopleType(t *testing.T) {
	store := demoStore(t)
	mnt := testMount(t, store)
	proj := filepath.Join(mnt, "--home-user-proj--")

	// by-cwd: cd into the path of a working directory.
	out := sh(t, mnt, "cd by-cwd/home/user/proj && ls")
	want := lines(run(t, proj, "ls"))
	var sessions []string
	for _, n := range want {
		if strings.HasPrefix(n, "2025-") {
			sessions = append(sessions, n)
		}
	}
	if got := lines(out); strings.Join(got, " ") != strings.Join(sessions, " ") {
		t.Errorf("by-cwd/home/user/proj lists %q, want the project's sessions %q", got, sessions)
	}
	if got := lines(run(t, mnt, "ls", "by-cwd/home/user")); strings.Join(got, " ") != "other proj" {
		t.Errorf("by-cwd/home/user = %q", got)
	}
	s := sessions[0]
	if real, err := filepath.EvalSymlinks(filepath.Join(mnt, "by-cwd/home/user/proj", s)); err != nil || real != filepath.Join(proj, s) {
		t.Errorf("by-cwd link resolves to %q, %v", real, err)
	}

	// latest: the session whose file changed last.
	newest := filepath.Join(store, "--home-user-proj--", sessions[1]+".jsonl")
	os.Chtimes(newest, farFuture, farFuture)
	eventually(t, "latest follows the newest file", func() (bool, string) {
		l, _ := os.Readlink(filepath.Join(mnt, "latest"))
		return l == "--home-user-proj--/"+sessions[1], l
	})
	if l, _ := os.Readlink(filepath.Join(proj, "latest")); l != sessions[1] {
		t.Errorf("project latest -> %q", l)
	}
	if _, err := os.Stat(filepath.Join(mnt, "latest", "context.json")); err != nil {
		t.Errorf("latest/context.json: %v", err)
	}

	// by-name: the demo's "Branchy refactor".
	real, err := filepath.EvalSymlinks(filepath.Join(proj, "by-name", "Branchy refactor"))
	if err != nil || !strings.HasPrefix(filepath.Base(real), "2025-05-12T12-00-43-000Z_") {
		t.Errorf("by-name/Branchy refactor -> %q, %v", real, err)
	}
	if name := run(t, real, "cat", "name"); name != "Branchy refactor\n" {
		t.Errorf("its name file says %q", name)
	}
	// Naming a session shows it there within a second.
	if err := writeControl(filepath.Join(proj, sessions[0], "name"), "Renamed by a test\n"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new name in by-name/", func() (bool, string) {
		l, err := os.Readlink(filepath.Join(proj, "by-name", "Renamed by a test"))
		return err == nil && l == "../"+sessions[0], l
	})
}

var farFuture = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
