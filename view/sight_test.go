package view

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportsPerCallerCostNoScan: on a shared mount, each user's usage
// report holds only the sessions they may read, and is built from the
// records the first report read: the store is scanned once, whoever asks
// and however often, and what each user sees is worked out once per
// identity.
func TestReportsPerCallerCostNoScan(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give files to other users")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	proj := filepath.Join(dir, "--home-u-p--")
	os.MkdirAll(proj, 0o755)
	const n, users = 300, 3
	for i := 0; i < n; i++ {
		line := fmt.Sprintf(`{"type":"session","version":3,"id":"id-%05d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/p"}`+"\n", i)
		p := filepath.Join(proj, fmt.Sprintf("s%05d.jsonl", i))
		os.WriteFile(p, []byte(line), 0o600)
		os.Chown(p, 1000+i%users, 1000+i%users)
	}
	v := New(Options{SessionsDir: dir, Shared: true, CacheBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	report := func(c Caller) string {
		usageDir, err := v.LookupFor(v.Root(), usageName, c)
		if err != nil {
			t.Fatal(err)
		}
		k, err := v.LookupFor(usageDir.Node().(Folder), "sessions.csv", c)
		if err != nil {
			t.Fatal(err)
		}
		data, err := v.Content(k.Node().(File))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	all := report(Caller{}) // root
	if got := strings.Count(all, "\nid-") + strings.Count(all, ",id-"); got != n {
		t.Fatalf("root's report holds %d sessions, want %d", got, n)
	}
	scanned := statsOf(t, v).View.Scanned
	for round := 0; round < 3; round++ {
		for u := 0; u < users; u++ {
			c := Caller{Uid: uint32(1000 + u), Gid: uint32(1000 + u)}
			rep := report(c)
			if got := strings.Count(rep, ",id-"); got != n/users {
				t.Errorf("user %d's report holds %d sessions, want their %d", c.Uid, got, n/users)
			}
			for i := 0; i < n; i++ {
				mine := i%users == u
				if has := strings.Contains(rep, fmt.Sprintf(",id-%05d,", i)); has != mine {
					t.Fatalf("user %d's report: session %d shown %v, theirs %v", c.Uid, i, has, mine)
				}
			}
		}
	}
	st := statsOf(t, v).View
	if st.Scanned != scanned {
		t.Errorf("the reports per user scanned %d sessions more; want none", st.Scanned-scanned)
	}
	if st.Sights != users {
		t.Errorf("what each user sees was worked out %d times for %d users asking three times; want once each", st.Sights, users)
	}
	if st.Scanned != n {
		t.Errorf("scanned %d sessions in all, want %d", st.Scanned, n)
	}
}
