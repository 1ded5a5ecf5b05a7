package main

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestMissingStore runs the binary as a user types it on a sessions
// directory that does not exist yet, chosen by the variable and by the
// flag: it mounts, the mountpoint answers (stat, ls), the first session
// shows once the store is created, and moving the store away and back
// empties the mount and fills it again without the mountpoint ever
// failing a stat. "existing" moves away a store that was there at the
// mount.
func TestMissingStore(t *testing.T) {
	bin := buildPifs(t)
	session := `{"type":"session","version":3,"id":"sid","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}
`
	for _, how := range []string{"variable", "flag", "existing"} {
		t.Run(how, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "x", "sessions")
			mnt := emptyDir(t)
			var env, args []string
			if how == "existing" {
				if err := os.MkdirAll(store, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(store, "s1.jsonl"), []byte(session), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if how == "variable" {
				env = []string{"PI_CODING_AGENT_SESSION_DIR=" + store}
				args = []string{mnt}
			} else {
				args = []string{"--sessions-dir", store, mnt}
			}
			cmd, lines := foreground(t, bin, env, args...)
			defer func() {
				cmd.Process.Signal(syscall.SIGTERM)
				if code := exitCodeOf(cmd, lines); code != 0 {
					t.Errorf("exit %d after SIGTERM", code)
				}
			}()
			if fi, err := os.Stat(mnt); err != nil || !fi.IsDir() {
				t.Fatalf("stat of the mountpoint of a store not created yet: %v", err)
			}
			if names := list(t, mnt); slices.Contains(names, "--p--") != (how == "existing") {
				t.Fatalf("the mount lists %q", names)
			}
			for _, name := range []string{"by-id", "new"} {
				if _, err := os.Stat(filepath.Join(mnt, name)); err != nil {
					t.Errorf("stat %s: %v", name, err)
				}
			}

			// pi creates the store and writes a session, flat (the store is
			// one the user chose).
			if err := os.MkdirAll(store, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(store, "s1.jsonl"), []byte(session), 0o644); err != nil {
				t.Fatal(err)
			}
			waitFor(t, mnt, "--p--", true)

			// The store moved away: the mount stays, empty.
			away := store + ".away"
			if err := os.Rename(store, away); err != nil {
				t.Fatal(err)
			}
			waitFor(t, mnt, "--p--", false)
			if _, err := os.Stat(filepath.Join(mnt, "by-id")); err != nil {
				t.Errorf("stat by-id with the store away: %v", err)
			}
			// And back.
			if err := os.Rename(away, store); err != nil {
				t.Fatal(err)
			}
			waitFor(t, mnt, "--p--", true)
		})
	}
}

// list lists a folder of the mount, failing the test on an error.
func list(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ls %s: %v", dir, err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// waitFor waits up to 5 s until the mount's root lists name (or no longer
// does), checking each time that the mountpoint answers a stat.
func waitFor(t *testing.T, mnt, name string, present bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(mnt); err != nil {
			t.Fatalf("stat of the mountpoint: %v", err)
		}
		names := list(t, mnt)
		if slices.Contains(names, name) == present {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s the mount lists %q (want %s present: %v)", names, name, present)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
