package sessions

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRewriteInPlaceSameSize: a same-size rewrite in the middle of the file
// (List the files → LIST THE FILES) is seen, whether or not it falls in the
// same clock tick as the read (timestamps, else the racy check's sums).
func TestRewriteInPlaceSameSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	msg := func(id, parent, text string) string {
		return strings.Replace(entryLine(id, parent), `"content":"`+id+`"`, `"content":"`+text+`"`, 1)
	}
	writeFile(t, path, hdr+"\n"+msg("a", "", "List the files")+"\n"+entryLine("b", "a")+"\n")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	at := bytes.Index(data, []byte("List the files"))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("LIST THE FILES"), int64(at)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	reset, err := l.Refresh()
	if err != nil {
		t.Fatal(err)
	}
	if !reset {
		t.Fatal("Refresh did not report the rewrite")
	}
	if got := string(l.Entries[0].Raw); !strings.Contains(got, "LIST THE FILES") {
		t.Fatalf("entry a still %s", got)
	}
	// Nothing changed since: no reset.
	if reset, err := l.Refresh(); err != nil || reset {
		t.Fatalf("second Refresh: reset=%v err=%v", reset, err)
	}
}

// TestRewriteKeepingTimestamps: a rewrite whose timestamps are set back
// to the old ones (touch -r) is still caught while the read was racy.
func TestRewriteKeepingTimestamps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, hdr+"\n"+entryLine("a", "")+"\n")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rewriteKeepingTimes(t, l, "a same-size rewrite")
}

// rewriteKeepingTimes rewrites entry a's content "a" as "A" in l's file,
// puts its timestamps back (ctime moved: l is made to believe it did not,
// so that only the sums can tell), and checks that Refresh sees it.
func rewriteKeepingTimes(t *testing.T, l *Log, what string) {
	t.Helper()
	fi := mustStat(t, l.Path)
	data, _ := os.ReadFile(l.Path)
	writeFile(t, l.Path, strings.Replace(string(data), `"content":"a"`, `"content":"A"`, 1))
	os.Chtimes(l.Path, fi.ModTime(), fi.ModTime())
	l.sig.Ctime = SigOf(mustStat(t, l.Path)).Ctime
	reset, err := l.Refresh()
	if err != nil || !reset {
		t.Fatalf("%s: reset=%v err=%v", what, reset, err)
	}
	if !strings.Contains(string(l.Entries[0].Raw), `"A"`) {
		t.Fatalf("%s: entry %s", what, l.Entries[0].Raw)
	}
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestFIFONeverBlocks: a FIFO at a session's path is not a session, and no
// reader blocks on it (a plain open would wait for a writer for ever).
func TestFIFONeverBlocks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrNotSession) {
		t.Errorf("Open: %v", err)
	}
	if _, err := ReadHeader(path); !errors.Is(err, ErrNotSession) {
		t.Errorf("ReadHeader: %v", err)
	}
	if _, err := ReadTail(path, CurrentVersion); !errors.Is(err, ErrNotSession) {
		t.Errorf("ReadTail of a FIFO: %v", err)
	}
	if err := Append(path, []byte(`{}`)); !errors.Is(err, ErrNotSession) {
		t.Errorf("Append: %v", err)
	}
	// A Log that read a regular file, then finds a FIFO in its place.
	reg := filepath.Join(dir, "r.jsonl")
	writeFile(t, reg, hdr+"\n"+entryLine("a", "")+"\n")
	l, err := Open(reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, reg); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Refresh(); !errors.Is(err, ErrNotSession) {
		t.Errorf("Refresh: %v", err)
	}
	s := NewIndex(dir)
	os.Mkdir(filepath.Join(dir, "p"), 0o755)
	syscall.Mkfifo(filepath.Join(dir, "p", "f.jsonl"), 0o644)
	// A socket cannot be opened at all (ENXIO): not a session either.
	sock, err := net.Listen("unix", filepath.Join(dir, "p", "sock.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	if _, err := ReadHeader(filepath.Join(dir, "p", "sock.jsonl")); !errors.Is(err, ErrNotSession) {
		t.Errorf("ReadHeader of a socket: %v", err)
	}
	if list, err := s.Sessions("p"); err != nil || len(list) != 0 {
		t.Errorf("Sessions: %v %v", list, err)
	}
}

// smallTmpfs mounts a tmpfs of the given size (root only).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatalf("mount tmpfs: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
	return dir
}

// TestAppendFullDisk: a 100 KB line appended with 20 KB free fails with
// ENOSPC and leaves the file byte for byte as it was.
func TestAppendFullDisk(t *testing.T) {
	dir := smallTmpfs(t, "1m")
	path := filepath.Join(dir, "s.jsonl")
	writeFile(t, path, hdr+"\n"+entryLine("a", "")+"\n")
	before, _ := os.ReadFile(path)
	fill(t, dir, 20<<10)
	line := []byte(`{"type":"custom","customType":"x","data":"` + strings.Repeat("x", 100<<10) + `"}`)
	err := Append(path, line)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append: %v, want ENOSPC", err)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != syscall.ENOSPC {
		t.Fatalf("errors.As: %v", errno)
	}
	var ae *AppendError
	if !errors.As(err, &ae) || (ae.Written > 0 && !ae.Restored) {
		t.Fatalf("not restored: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatalf("file changed: %d bytes, was %d", len(after), len(before))
	}
	t.Logf("%v", err)
}

// fill leaves about free bytes free on the file system of dir.
func fill(t *testing.T, dir string, free int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * int64(st.Bsize)
	if avail <= free {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, avail-free), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAppendLeftWhenOthersWrote: when another writer appended after a failed
// write, the file is left as it is and the error says what is in it.
func TestAppendLeftWhenOthersWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, hdr+"\n")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := int64(len(hdr) + 1)
	f.WriteString(`{"partial`) // ours, cut short
	f.WriteString("other\n")   // another writer's
	err = restore(f, path, old, 9, 100, syscall.EIO)
	var ae *AppendError
	if !errors.As(err, &ae) || ae.Restored || !errors.Is(err, syscall.EIO) {
		t.Fatalf("restore: %v", err)
	}
	if fi := mustStat(t, path); fi.Size() != old+15 {
		t.Fatalf("file changed: %d", fi.Size())
	}
	if !strings.Contains(err.Error(), "9 bytes of this write") {
		t.Fatalf("message: %v", err)
	}
}

// TestNeedsRefresh: an equal signature needs no refresh once the read is
// no longer racy; a racy read always does.
func TestNeedsRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, hdr+"\n")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sig := SigOf(mustStat(t, path))
	if !l.needsRefresh(sig) {
		t.Error("a read right after a write is racy: it needs a refresh")
	}
	l.racy = false
	if l.needsRefresh(sig) {
		t.Error("an equal signature, not racy: no refresh needed")
	}
	sig.Ctime++
	if !l.needsRefresh(sig) {
		t.Error("another ctime needs a refresh")
	}
}

// TestRacySumsAfterQuietRead: a read of a file unchanged for longer than
// the racy window takes no checksum; when the file then grows and is read
// while racy, the lines read before are summed from the file, so that a
// same-size rewrite of them with the timestamps kept is still caught.
func TestRacySumsAfterQuietRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, hdr+"\n"+entryLine("a", "")+"\n")
	time.Sleep(racyWindow + 100*time.Millisecond)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.racy || !l.unsummed {
		t.Fatalf("a read of a quiet file: racy %v, unsummed %v; want a read that is not racy and takes no checksum", l.racy, l.unsummed)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(entryLine("b", "a") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := l.Refresh(); err != nil || len(l.Entries) != 2 {
		t.Fatalf("Refresh after the append: %d entries, err %v", len(l.Entries), err)
	}
	if !l.racy || l.unsummed {
		t.Fatalf("the read of the append: racy %v, unsummed %v; want racy and summed", l.racy, l.unsummed)
	}
	// Unchanged: the sums match the file (a sum of the append alone would not).
	if reset, err := l.Refresh(); err != nil || reset {
		t.Fatalf("Refresh of the unchanged file: reset=%v err=%v", reset, err)
	}
	rewriteKeepingTimes(t, l, "a same-size rewrite of the lines read quietly")
}
