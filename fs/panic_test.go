package fs

import (
	"context"
	"errors"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// panicNode panics on lookup, to show that a handler panic fails only the
// call.
type panicNode struct{ gofs.Inode }

func (n *panicNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if name == "boom" {
		panic("boom")
	}
	return nil, syscall.ENOENT
}

func TestHandlerPanic(t *testing.T) {
	mnt := t.TempDir()
	var logged strings.Builder
	o := Options{Logger: slog.New(slog.NewTextHandler(&lockedBuilder{b: &logged}, nil))}
	server, _, err := mountRoot(mnt, &panicNode{}, o, nil, false)
	if err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer server.Unmount()
	if _, err := os.Stat(filepath.Join(mnt, "boom")); !errors.Is(err, syscall.EIO) {
		t.Errorf("stat boom: %v, want EIO", err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "other")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("mount gone after a panic: %v", err)
	}
	server.Unmount()
	if !strings.Contains(logged.String(), "panic in handler: boom") {
		t.Errorf("panic not logged: %q", logged.String())
	}
}

// lockedBuilder is a strings.Builder the server's goroutines write to.
type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
