package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestTxnTooBig: a transaction above 256 MiB gets EFBIG, and nothing of it
// is written.
func TestTxnTooBig(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	data := readText(t, file)
	// write(2) returns a short count when a later piece of it (the kernel
	// sends 128 KiB at a time) is refused.
	out := py(t, s, `
import os
fd = os.open("append", os.O_WRONLY)
line = b"x" * (60 << 20) + b"\n"
total = 0
try:
    for i in range(5): total += os.write(fd, line)
except OSError as e: print("write", e.errno)
print("short" if total < 5 * len(line) else "whole", total > 256 << 20)
try: os.close(fd)
except OSError as e: print("close", e.errno)
`)
	if out != "short False\nclose 27\n" {
		t.Errorf("python: %q", out)
	}
	if readText(t, file) != data {
		t.Error("the refused transaction changed the file")
	}
	if last := lastError(t, s); !strings.Contains(last, "bounded to 256 MiB") {
		t.Errorf("errors: %q", last)
	}
}
