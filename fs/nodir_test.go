package fs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNoOpendir: the kernel opens folders without OPENDIR once told it is
// not supported; each folder still lists what it holds, a folder read to
// its end leaves no handle open, and folders read half-way leave at most
// max.
func TestNoOpendir(t *testing.T) {
	store := genProject(t, "dirs", 60, 12, 200)
	m, mnt := mountFS(t, Options{SessionsDir: store})
	m.dirs.mu.Lock()
	m.dirs.max = 32
	m.dirs.mu.Unlock()
	proj := filepath.Join(mnt, "--home-user-dirs--")
	var dirs []string
	for _, pattern := range []string{"*", "*/*"} {
		got, err := filepath.Glob(filepath.Join(proj, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range got {
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) <= m.dirs.max {
		t.Fatalf("%d folders, want more than %d", len(dirs), m.dirs.max)
	}
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Readdirnames(1)
		f.Close()
		if err != nil && err != io.EOF {
			t.Fatalf("%s: %v", d, err)
		}
	}
	if n := m.dirs.open(); n > m.dirs.max {
		t.Errorf("%d folders read half-way hold %d handles, want at most %d", len(dirs), n, m.dirs.max)
	}
	// Read to the end, as ls reads; then each folder again, which the
	// kernel answers from its cache.
	listings := map[string]string{}
	for round := 0; round < 2; round++ {
		for _, d := range dirs {
			names, err := readNames(d)
			if err != nil {
				t.Fatal(err)
			}
			if round == 1 && names != listings[d] {
				t.Errorf("%s listed %q, then %q", d, listings[d], names)
			}
			listings[d] = names
			isSession := strings.HasPrefix(filepath.Base(d), "2025-")
			if isSession && !strings.Contains(names, " context.json ") {
				t.Errorf("session folder %s lists %q", d, names)
			}
		}
	}
	if n := m.dirs.open(); n != 0 {
		t.Errorf("after every folder was read to its end, %d handles are open, want none", n)
	}
	if n := m.dirs.opendirs.Load(); n > 1 {
		t.Errorf("the kernel sent %d OPENDIRs for %d folders, want one", n, len(dirs))
	}
}

// readNames lists a folder to its end, names sorted, space-separated.
func readNames(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(" ")
	for _, e := range entries {
		b.WriteString(e.Name() + " ")
	}
	return b.String(), nil
}

// TestNoOpendirFreshListing: a folder read half-way, then changed, lists
// its new names when read again from the start (its handle lists it again).
func TestNoOpendirFreshListing(t *testing.T) {
	store := genProject(t, "fresh", 1, 3000, 100)
	_, mnt := mountFS(t, Options{SessionsDir: store})
	sessions, err := filepath.Glob(filepath.Join(mnt, "--home-user-fresh--", "2025-*"))
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions: %v %v", sessions, err)
	}
	s := sessions[0]
	entries := filepath.Join(s, "entries")
	f, err := os.Open(entries)
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.Readdirnames(1)
	f.Close()
	if err != nil || len(first) != 1 {
		t.Fatalf("half-way read: %v %v", first, err)
	}
	if err := os.WriteFile(filepath.Join(s, "append"), []byte("one more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	leaf, err := os.ReadFile(filepath.Join(s, "leaf"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := readNames(entries)
	if err != nil {
		t.Fatal(err)
	}
	if want := " " + strings.TrimSpace(string(leaf)) + ".json "; !strings.Contains(names, want) {
		t.Errorf("entries/ after an append does not list%s", want)
	}
}

// TestNoLseek: SEEK_DATA and SEEK_HOLE on the mount's files say what
// they would on a file without holes, and the kernel asks pifs once, then
// never again.
func TestNoLseek(t *testing.T) {
	store := genProject(t, "seek", 3, 12, 200)
	m, mnt := mountFS(t, Options{SessionsDir: store})
	files, err := filepath.Glob(filepath.Join(mnt, "--home-user-seek--", "2025-*", "context.json"))
	if err != nil || len(files) != 3 {
		t.Fatalf("%d files (%v)", len(files), err)
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		data, dataErr := f.Seek(0, 3)     // SEEK_DATA
		hole, holeErr := f.Seek(0, 4)     // SEEK_HOLE
		_, endErr := f.Seek(fi.Size(), 3) // past the data: ENXIO
		f.Close()
		if dataErr != nil || holeErr != nil || data != 0 || hole != fi.Size() {
			t.Errorf("%s: SEEK_DATA %d (%v), SEEK_HOLE %d (%v), size %d", p, data, dataErr, hole, holeErr, fi.Size())
		}
		if !errors.Is(endErr, syscall.ENXIO) {
			t.Errorf("%s: SEEK_DATA at the end: %v, want ENXIO", p, endErr)
		}
	}
	if n := m.dirs.lseeks.Load(); n != 1 {
		t.Errorf("the kernel sent %d LSEEKs for 3 files, want 1", n)
	}
}
