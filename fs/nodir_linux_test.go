package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hanwen/go-fuse/v2/splice"
)

// TestNoSplice: replies to READ go out with one writev each. go-fuse's
// splice path, for a read that is not a file descriptor, writes the reply's
// header into a pipe only to empty it again; no pipe is ever taken here.
func TestNoSplice(t *testing.T) {
	store := genProject(t, "splice", 2, 12, 200)
	_, mnt := mountFS(t, Options{SessionsDir: store})
	dirs, err := filepath.Glob(filepath.Join(mnt, "--home-user-splice--", "2025-*"))
	if err != nil || len(dirs) != 2 {
		t.Fatalf("%d sessions (%v)", len(dirs), err)
	}
	entries, err := filepath.Glob(filepath.Join(dirs[0], "entries", "*.json"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("%d entries (%v)", len(entries), err)
	}
	read := 0
	for _, p := range append([]string{
		filepath.Join(dirs[0], "context.json"),
		filepath.Join(dirs[0], "session.jsonl"),
		filepath.Join(dirs[1], "transcript.md"),
		filepath.Join(dirs[1], "leaf"),
	}, entries[0]) {
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 {
			t.Fatalf("%s: %d bytes (%v)", p, len(data), err)
		}
		read += len(data)
	}
	if n := splice.Total(); n != 0 {
		t.Errorf("reading %d bytes took %d pipe pairs for splice, want none", read, n)
	}
}
