package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// TestViewReadSize: the views show st_blksize 128 KiB, what one READ
// carries, for readers that size their reads by it: a view is direct I/O,
// a READ for each read(2), and glibc's stdio (sed here) reads 8 KiB at a
// time by it (its BUFSIZ, the most it takes), 4 KiB by a page.
func TestViewReadSize(t *testing.T) {
	store, file := writeStore(t)
	var big strings.Builder
	big.WriteString(strings.Join(fixLines, "\n") + "\n")
	parent := "null"
	for i := 0; i < 500; i++ {
		id := "m" + strconv.Itoa(i)
		big.WriteString(`{"type":"message","id":"` + id + `","parentId":` + parent + `,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"` + strings.Repeat("word ", 500) + `"}}` + "\n")
		parent = `"` + id + `"`
	}
	if err := os.WriteFile(file, []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := testMount(t, store)
	md := filepath.Join(sessionPath(mnt), "transcript.md")
	var st syscall.Stat_t
	if err := syscall.Stat(md, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blksize != 128<<10 || st.Size < 1<<20 {
		t.Fatalf("transcript.md: st_blksize %d, %d bytes; want 128 KiB, over 1 MiB", st.Blksize, st.Size)
	}
	before := readStats(t, mnt).Files.ViewReads
	if lines := strings.TrimSpace(run(t, "", "sed", "-n", "$=", md)); lines == "" || lines == "0" {
		t.Fatalf("sed counted %q lines", lines)
	}
	// The stats file read before adds its own reads (one or two).
	reads := readStats(t, mnt).Files.ViewReads - before
	if most := st.Size/(8<<10) + 4; reads > most || reads == 0 {
		t.Errorf("sed of a %d-byte view: %d reads reached pifs, want at most %d", st.Size, reads, most)
	}
}
