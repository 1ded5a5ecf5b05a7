package fs

import (
	"io"
	"log/slog"
	"testing"
)

// TestWalkParsesNothing: find over the mount to the depth of the session
// folders (READDIRPLUS on, so the kernel looks up every name listed)
// parses no session: the listing answers from the index and the files'
// ends, and the views whose size takes a render are listed by name only.
// A stat of one of them parses its session, once.
func TestWalkParsesNothing(t *testing.T) {
	store := demoStore(t)
	mnt := t.TempDir()
	m, err := Mount(mnt, Options{SessionsDir: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unmount() })
	out := run(t, mnt, "find", ".", "-maxdepth", "3")
	if n := len(lines(out)); n < 100 {
		t.Fatalf("find listed %d names", n)
	}
	run(t, mnt, "ls", "-R", "./--home-user-proj--/by-name", "./usage")
	if n := m.Parsed(); n != 0 {
		t.Errorf("find -maxdepth 3 parsed %d sessions; want none", n)
	}
	run(t, mnt, "stat", "./--home-user-proj--/latest/context.json", "./--home-user-proj--/latest/info.json")
	if n := m.Parsed(); n != 1 {
		t.Errorf("stat of two views of one session parsed %d sessions; want 1", n)
	}
}
