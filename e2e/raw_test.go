package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// passthroughExpected tells whether the kernel, by what the mount says
// it offered, lets this mount read session.jsonl itself (passthrough needs
// CAP_SYS_ADMIN).
func passthroughExpected(t *testing.T, mnt string) bool {
	return readStats(t, mnt).Files.PassthroughOffered == 1 && os.Geteuid() == 0
}

// TestRawRead: session.jsonl reads the file's bytes; where the kernel lets
// pifs (Linux 6.9 and later, mounted by root) it reads them from the
// store's file itself, and no read reaches pifs; elsewhere pifs reads them.
func TestRawRead(t *testing.T) {
	store, file := writeStore(t)
	// Large enough for several reads.
	var big strings.Builder
	big.WriteString(fixLines[0] + "\n")
	for i := 0; i < 3000; i++ {
		big.WriteString(`{"type":"custom","customType":"x","data":"` + strings.Repeat("d", 400) + `"}` + "\n")
	}
	if err := os.WriteFile(file, []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := testMount(t, store)
	got := run(t, "", "cat", filepath.Join(sessionPath(mnt), "session.jsonl"))
	if got != big.String() {
		t.Fatalf("session.jsonl: %d bytes, the file %d", len(got), big.Len())
	}
	s := readStats(t, mnt)
	if passthroughExpected(t, mnt) {
		if s.Files.Passthrough == 0 || s.Files.RawReads != 0 {
			t.Errorf("passthrough offered, as root: %d opens read by the kernel, %d reads by pifs; want 1 and 0", s.Files.Passthrough, s.Files.RawReads)
		}
	} else if s.Files.RawReads == 0 {
		t.Errorf("no passthrough, and no read reached pifs")
	}
	t.Logf("passthrough offered %d, opens read by the kernel %d, reads by pifs %d", s.Files.PassthroughOffered, s.Files.Passthrough, s.Files.RawReads)
}

// TestRawReplaced: a session file replaced by another (renamed over it)
// while session.jsonl is held open: the open file reads the file it was
// opened on, and a new open, once the mount shows the change, the new
// file, also where the kernel reads the files itself (it must not be
// handed the file of the earlier open).
func TestRawReplaced(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	path := filepath.Join(sessionPath(mnt), "session.jsonl")
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	head := make([]byte, 10)
	if _, err := held.ReadAt(head, 0); err != nil {
		t.Fatal(err)
	}
	next := []byte(strings.Join(fixLines[:4], "\n") + "\n" + `{"type":"custom","customType":"replaced","id":"r1","parentId":"a2","timestamp":"2024-01-01T00:00:09.000Z","data":1}` + "\n")
	tmp := file + ".new"
	if err := os.WriteFile(tmp, next, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new file through the mount", func() (bool, string) {
		got := run(t, "", "cat", path)
		return got == string(next), got
	})
	rest := make([]byte, len(old))
	n, _ := held.ReadAt(rest, 0)
	if !bytes.Equal(rest[:n], old) {
		t.Errorf("the open file reads %q, the file it was opened on %q", rest[:n], old)
	}
}
