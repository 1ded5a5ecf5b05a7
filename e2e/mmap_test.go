package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mmapScript maps each file named on the command line (MAP_SHARED, as
// Python's mmap does), and prints, for each, "name ok" when the mapping
// holds exactly the bytes read(2) gives.
const mmapScript = `
import mmap, sys
def mapped(p):
    with open(p, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
for p in sys.argv[1:]:
    try:
        m = mapped(p)
    except OSError as e:
        print(p, "mmap failed:", e)
        continue
    print(p, "ok" if m[:] == open(p, "rb").read() else "differs")
`

// TestMmapEveryFile: every regular file of a session maps, and the mapping
// holds the bytes cat reads (the views are direct I/O, which the kernel
// maps only when FUSE_DIRECT_IO_ALLOW_MMAP is agreed).
func TestMmapEveryFile(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	files := []string{"session.jsonl", "context.json", "transcript.md", "transcript.html", "info.json", "header.json",
		"leaf", "name", "entries/a1.json", "branches/a3/context.json", "branches/a3/transcript.md"}
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(s, f))
	}
	paths = append(paths, filepath.Join(mnt, "usage", "sessions.csv"), filepath.Join(mnt, fixProject, "cwd"))
	out := run(t, "", "python3", append([]string{"-c", mmapScript}, paths...)...)
	for _, l := range lines(out) {
		if !strings.HasSuffix(l, " ok") {
			t.Errorf("%s", l)
		}
	}
	if n := len(lines(out)); n != len(paths) {
		t.Fatalf("%d of %d files answered:\n%s", n, len(paths), out)
	}
}

// TestMmapSeesItsOpen: a mapping of a view holds the view as it was when
// its file was opened, also after the session changes; one opened after
// the change holds the new view.
func TestMmapSeesItsOpen(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	ctx := filepath.Join(sessionPath(mnt), "context.json")
	script := `
import mmap, sys, os
p = sys.argv[1]
f = open(p, "rb")
m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
before = bytes(m[:])
with open(sys.argv[2], "w") as a:
    a.write("a new message\n")
print("kept" if bytes(m[:]) == before and m[:].find(b"a new message") < 0 else "changed")
with open(p, "rb") as g:
    m2 = mmap.mmap(g.fileno(), 0, access=mmap.ACCESS_READ)
    print("new" if m2[:].find(b"a new message") >= 0 else "old")
`
	out := run(t, "", "python3", "-c", script, ctx, filepath.Join(sessionPath(mnt), "append"))
	if got := strings.Fields(out); len(got) != 2 || got[0] != "kept" || got[1] != "new" {
		t.Errorf("mapping before and after an append: %q, want [kept new]", got)
	}
	if _, err := os.Stat(ctx); err != nil {
		t.Fatal(err)
	}
}
