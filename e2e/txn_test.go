package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/fs"
)

// One open control file is one transaction (SPEC "Writes").

// py runs a python3 program with arguments; it prints what the program
// prints.
func py(t *testing.T, dir, prog string, args ...string) string {
	t.Helper()
	return run(t, dir, "python3", append([]string{"-c", prog}, args...)...)
}

// TestTxnMultiLineEcho: bash's echo writes each line with its own write(2);
// a bad second line refuses the first too.
func TestTxnMultiLineEcho(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	data := readText(t, file)
	out := shFails(t, s, `bash -c 'echo '"'"'{"role":"user","content":"ok"}
{broken json'"'"' > append'`)
	if !strings.Contains(out, "Invalid argument") {
		t.Errorf("bash: %s", out)
	}
	if readText(t, file) != data {
		t.Fatal("half of a refused transaction reached the file")
	}
	last := lastError(t, s)
	if !strings.Contains(last, "append: line 2: malformed JSON") || !strings.Contains(last, "nothing of this transaction was written") {
		t.Errorf("errors: %q", last)
	}
	// The same two lines, both good, arrive together.
	sh(t, s, `printf '%s\n' '{"role":"user","content":"ok"}' 'second' > append`)
	if got := tail(lines(readText(t, file)), 2); !strings.Contains(got[0], `"content":"ok"`) || !strings.Contains(got[1], `"second"`) {
		t.Errorf("file ends with %q", got)
	}
}

// TestTxnCommitPoints: a transaction takes effect at fsync, at a read of the
// same open file, and at close, not before; an open file that goes on after
// a refused write refuses everything else.
func TestTxnCommitPoints(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	out := py(t, s, `
import os, sys
store = sys.argv[1]
def n(): return open(store).read().count("\n")
base = n()
fd = os.open("append", os.O_WRONLY)
os.write(fd, b"one\n"); os.write(fd, b"two\n")
print("after writes", n() - base)
os.fsync(fd)
print("after fsync", n() - base)
os.write(fd, b"three\n")
print("after write", n() - base)
os.close(fd)
print("after close", n() - base)
fd = os.open("append", os.O_RDWR)
os.write(fd, b"four\n")
os.read(fd, 100)
print("after read", n() - base)
os.close(fd)
fd = os.open("append", os.O_WRONLY)
os.write(fd, b"five\n")
try: os.write(fd, b"{bad\n")
except OSError as e: print("bad", e.errno)
try: os.write(fd, b"six\n")
except OSError as e: print("later", e.errno)
try: os.close(fd)
except OSError as e: print("close", e.errno)
print("after refused", n() - base)
`, file)
	want := "after writes 0\nafter fsync 2\nafter write 2\nafter close 3\nafter read 4\nbad 22\nlater 22\nclose 22\nafter refused 4\n"
	if out != want {
		t.Errorf("got\n%swant\n%s", out, want)
	}
	errs := lines(readText(t, filepath.Join(s, "errors")))
	if got := tail(errs, 2); len(got) != 2 || !strings.Contains(got[0], "line 2: malformed JSON") || !strings.Contains(got[1], "refused too") {
		t.Errorf("errors end with %q", got)
	}
}

// TestTxnRecheckAtCommit: a transaction is checked again against the file
// as it is at commit: an entry it names that is gone by then refuses it at
// close, with the reason in errors.
func TestTxnRecheckAtCommit(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	// Without a3: the session as it would be if rewritten meanwhile.
	var kept []string
	for _, l := range fixLines {
		if !strings.Contains(l, `"id":"a3"`) {
			kept = append(kept, l)
		}
	}
	rewritten := strings.Join(kept, "\n") + "\n"
	out := py(t, s, `
import os, sys
file, text = sys.argv[1], sys.argv[2]
fd = os.open("append", os.O_WRONLY)
os.write(fd, b'{"type":"label","targetId":"a3","label":"x"}\n')
tmp = file + ".tmp"
open(tmp, "w").write(text)
os.rename(tmp, file)
try:
    os.close(fd); print("closed")
except OSError as e: print("close", e.errno)
`, file, rewritten)
	if out != "close 2\n" {
		t.Errorf("python: %q", out)
	}
	if readText(t, file) != rewritten {
		t.Error("the refused transaction changed the file")
	}
	if last := lastError(t, s); !strings.Contains(last, `"a3": no such entry`) {
		t.Errorf("errors: %q", last)
	}
}

// TestTxnVim: vim's :wq (write, fsync, close) works on a control.
func TestTxnVim(t *testing.T) {
	if _, err := os.Stat("/usr/bin/vim"); err != nil {
		t.Skip("no vim")
	}
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	run(t, s, "vim", "-u", "NONE", "-N", "-es", "-c", "normal! ccfrom vim", "-c", "wq", "name")
	if got := readText(t, filepath.Join(s, "name")); got != "from vim\n" {
		t.Errorf("name %q", got)
	}
	if l := tail(lines(readText(t, file)), 1)[0]; !strings.Contains(l, `"name":"from vim"`) {
		t.Errorf("last line %s", l)
	}
}

// TestTxnTooBig: a transaction above its bound gets EFBIG, and nothing of
// it is written. The bound is lowered to 8 MiB for the test (the default,
// 256 MiB, is TestTxnSpillsLarge's, with -pifs.large).
func TestTxnTooBig(t *testing.T) {
	store, file := writeStore(t)
	_, mnt := mountFS(t, fs.Options{SessionsDir: store, TxnBytes: txnTestBytes})
	s := sessionPath(mnt)
	data := readText(t, file)
	// write(2) returns a short count when a later piece of it (the kernel
	// sends 128 KiB at a time) is refused.
	out := py(t, s, `
import os
fd = os.open("append", os.O_WRONLY)
line = b"x" * (3 << 20) + b"\n"
total = 0
try:
    for i in range(3): total += os.write(fd, line)
except OSError as e: print("write", e.errno)
print("short" if total < 3 * len(line) else "whole", total > 8 << 20)
try: os.close(fd)
except OSError as e: print("close", e.errno)
`)
	if out != "short False\nclose 27\n" {
		t.Errorf("python: %q", out)
	}
	if readText(t, file) != data {
		t.Error("the refused transaction changed the file")
	}
	if last := lastError(t, s); !strings.Contains(last, "bounded to 8 MiB") {
		t.Errorf("errors: %q", last)
	}
}

// txnTestBytes is the bound of a transaction in the tests that pass it.
const txnTestBytes = 8 << 20

// txnHeldBound is what a transaction of short lines may hold in memory: 1
// MiB of its lines and 1 MiB of their entries before they go to their
// temporary files, the buffers of those files, a line being written.
const txnHeldBound = 3 << 20

// TestTxnSpills: a transaction of many lines, written by a real tool,
// holds what it checked in temporary files past 1 MiB, so that its memory
// stays bounded whatever is written, and leaves nothing behind: `yes |
// head -c` past the bound gets EFBIG (head says "File too large") and the
// reason in errors, and changes nothing; one within it is appended whole,
// from the temporary file, also when another writer appended meanwhile
// (its lines built again then, chained after the other writer's line).
func TestTxnSpills(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	store, file := writeStore(t)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store, TxnBytes: txnTestBytes})
	s := sessionPath(mnt)
	data := readText(t, file)

	out, code := runStatus(t, s, "sh", "-c", "yes 'a line of text' | head -c 16M > append")
	if code == 0 || !strings.Contains(out, "File too large") {
		t.Errorf("yes | head -c 16M > append: exit %d: %s", code, out)
	}
	if readText(t, file) != data {
		t.Error("the refused transaction changed the file")
	}
	if last := lastError(t, s); !strings.Contains(last, "bounded to 8 MiB") || !strings.Contains(last, "nothing of this transaction was written") {
		t.Errorf("errors: %q", last)
	}
	held := m.Stats().View.TxnHeld
	t.Logf("16 MiB of short lines, refused at 8 MiB of entries: at most %d bytes held in memory", held)
	if held > txnHeldBound {
		t.Errorf("the transaction held %d bytes in memory at most; want at most %d", held, txnHeldBound)
	}
	noneLeft(t, tmp)

	// 5,000 lines of 1,000 bytes: 5 MiB, within the bound, appended.
	text := strings.Repeat("z", 999)
	run(t, s, "sh", "-c", "yes '"+text+"' | head -n 5000 > append")
	added := lines(strings.TrimPrefix(readText(t, file), data))
	if len(added) != 5000 || !strings.Contains(added[4999], text) {
		t.Fatalf("appended %d lines; want 5000", len(added))
	}
	noneLeft(t, tmp)

	// Another writer appends between the checks and the commit: the
	// transaction is built again against the file as it is then.
	before := readText(t, file)
	out = py(t, s, `
import os, sys
fd = os.open("append", os.O_WRONLY)
line = (sys.argv[1] + "\n").encode()
for i in range(2500): os.write(fd, line)
with open(sys.argv[2], "a") as f:
    f.write('{"type":"custom","customType":"other","data":{},"id":"0th3r000","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n')
for i in range(2500): os.write(fd, line)
os.close(fd)
print("done")
`, text, file)
	if out != "done\n" {
		t.Fatalf("python: %q", out)
	}
	added = lines(strings.TrimPrefix(readText(t, file), before))
	if len(added) != 5001 || !strings.Contains(added[0], `"id":"0th3r000"`) || !strings.Contains(added[1], `"parentId":"0th3r000"`) {
		t.Fatalf("appended %d lines; want the other writer's, then 5000 chained under it; first two: %.300q", len(added), added[:min(2, len(added))])
	}
	if held := m.Stats().View.TxnHeld; held > txnHeldBound {
		t.Errorf("the transactions held %d bytes in memory at most; want at most %d", held, txnHeldBound)
	}
	noneLeft(t, tmp)
}

// largeTests runs the tests of inputs too large for the default run.
var largeTests = flag.Bool("pifs.large", false, "run the tests of large inputs (a 300 MB transaction; about a minute)")

// TestTxnSpillsLarge (-pifs.large): 300 MB of 101-byte lines through `yes
// | head -c` at the default bound, 256 MiB, gets EFBIG and changes
// nothing, holding at most a few MiB of the transaction in memory; the
// process's peak memory (reset before) stays far below the transaction.
func TestTxnSpillsLarge(t *testing.T) {
	if !*largeTests {
		t.Skip("a 300 MB transaction: run with -pifs.large")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	store, file := writeStore(t)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store})
	s := sessionPath(mnt)
	data := readText(t, file)
	// Writing 5 to clear_refs resets VmHWM to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	out, code := runStatus(t, s, "sh", "-c", "yes '"+strings.Repeat("x", 100)+"' | head -c 300M > append")
	if code == 0 || !strings.Contains(out, "File too large") {
		t.Errorf("yes | head -c 300M > append: exit %d: %s", code, out)
	}
	hwm := vmHWM(t)
	if readText(t, file) != data {
		t.Error("the refused transaction changed the file")
	}
	if last := lastError(t, s); !strings.Contains(last, "bounded to 256 MiB") {
		t.Errorf("errors: %q", last)
	}
	held := m.Stats().View.TxnHeld
	t.Logf("300 MB refused at 256 MiB: at most %d bytes of the transaction in memory; the process's peak %d MiB", held, hwm>>20)
	if held > txnHeldBound {
		t.Errorf("the transaction held %d bytes in memory at most; want at most %d", held, txnHeldBound)
	}
	if hwm > 256<<20 {
		t.Errorf("the process peaked at %d MiB while a 300 MB transaction was refused; want under 256 MiB", hwm>>20)
	}
	noneLeft(t, tmp)
}

// vmHWM is this process's peak resident memory, in bytes.
func vmHWM(t *testing.T) int64 {
	t.Helper()
	for _, l := range lines(readText(t, "/proc/self/status")) {
		var kb int64
		if _, err := fmt.Sscanf(l, "VmHWM: %d kB", &kb); err == nil {
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// noneLeft checks that nothing is left in the temporary folder dir, nor
// open in this process (which serves the mount).
func noneLeft(t *testing.T, dir string) {
	t.Helper()
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("%d files left in the temporary folder", len(names))
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir) {
			t.Errorf("a temporary file is still open: %s", target)
		}
	}
}
