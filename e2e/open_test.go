package e2e

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
)

// TestOpenFileOutlivesItsSession: files of a session opened before its
// file is renamed out of the store stay valid: fstat answers with what
// they had, and a read gives what they held (cat <&4 after mv).
func TestOpenFileOutlivesItsSession(t *testing.T) {
	store, file := writeStore(t)
	// Without change events the kernel keeps attributes for a second:
	// once it has let go of them, fstat comes to pifs.
	mnt := testMount(t, store, func(o *fs.Options) { o.MountOptions = []string{"noevents"} })
	s := sessionPath(mnt)
	names := []string{"context.json", "transcript.md", "info.json", "entries/a1.json", "session.jsonl"}
	open := map[string]*os.File{}
	sizes := map[string]int64{}
	for _, n := range names {
		f, err := os.Open(filepath.Join(s, n))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		open[n], sizes[n] = f, fi.Size()
	}
	if err := os.Rename(file, filepath.Join(t.TempDir(), "away.jsonl")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the session gone from the mount", func() (bool, string) {
		_, err := os.Stat(s)
		return os.IsNotExist(err), ""
	})
	time.Sleep(1200 * time.Millisecond)
	for _, n := range names {
		fi, err := open[n].Stat()
		if err != nil {
			t.Errorf("fstat of the open %s after its session file was renamed away: %v", n, err)
			continue
		}
		if fi.Size() != sizes[n] {
			t.Errorf("fstat of the open %s: size %d, was %d", n, fi.Size(), sizes[n])
		}
		data, err := io.ReadAll(open[n])
		if err != nil || int64(len(data)) != sizes[n] {
			t.Errorf("read of the open %s: %d bytes, %v; want its %d", n, len(data), err, sizes[n])
		}
		if n == "context.json" && !strings.Contains(string(data), "other branch") {
			t.Errorf("the open context.json reads %q", data)
		}
	}
}
