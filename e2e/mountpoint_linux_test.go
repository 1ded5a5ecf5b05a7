package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pifs/pifs/fs"
)

// TestMountpointRefused: each mistake is refused before mounting, with the
// kind the command line turns into an exit code and a sentence naming the
// fix.
func TestMountpointRefused(t *testing.T) {
	store, file := writeStore(t)
	tmp := t.TempDir()
	full := filepath.Join(tmp, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, c := range []struct {
		name, mnt string
		kind      fs.Kind
		want      string
	}{
		{"missing", filepath.Join(tmp, "nope"), fs.KindMountpoint, "mkdir -p"},
		{"file", file, fs.KindMountpoint, "not a directory"},
		{"nonempty", full, fs.KindMountpoint, "--nonempty"},
		{"inside", filepath.Join(store, fixProject), fs.KindMountpoint, "inside the sessions directory"},
	} {
		_, err := fs.Mount(c.mnt, fs.Options{SessionsDir: store})
		if fs.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (kind %d), want kind %d and %q", c.name, err, fs.KindOf(err), c.kind, c.want)
		}
	}
	if _, err := fs.Mount(t.TempDir(), fs.Options{SessionsDir: file}); fs.KindOf(err) != fs.KindSessionsDir {
		t.Errorf("store is a file: %v", err)
	}
	if _, err := fs.Mount(t.TempDir(), fs.Options{SessionsDir: store, MountOptions: []string{"bogus"}}); fs.KindOf(err) != fs.KindMount {
		t.Errorf("bad option: %v", err)
	}
	mnt := testMount(t, store)
	if _, err := fs.Mount(mnt, fs.Options{SessionsDir: store, NonEmpty: true}); fs.KindOf(err) != fs.KindMountpoint || !strings.Contains(err.Error(), "already a mount (fuse.pifs of "+store) {
		t.Errorf("mount on a mount: %v", err)
	}
	if src := mountsAt(t, mnt); len(src) != 1 || src[0] != store {
		t.Errorf("sources shown = %q, want the sessions directory %s", src, store)
	}
}

// deadMount leaves a FUSE mount of type fuse.SUBTYPE on mnt whose server
// is gone: the device is opened, mounted and closed without answering.
func deadMount(t *testing.T, mnt, subtype, source string) {
	t.Helper()
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR, 0)
	if err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	data := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d", fd, os.Getuid(), os.Getgid())
	if err := syscall.Mount(source, mnt, "fuse."+subtype, syscall.MS_NOSUID|syscall.MS_NODEV, data); err != nil {
		syscall.Close(fd)
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatal(err)
		}
		t.Skipf("mount(2) of a FUSE device: %v", err)
	}
	syscall.Close(fd)
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
}

// TestDeadMounts: a dead pifs mount is cleared and the mount goes ahead;
// a dead mount of another file system is refused, naming the command that
// clears it.
func TestDeadMounts(t *testing.T) {
	store, _ := writeStore(t)
	other := t.TempDir()
	deadMount(t, other, "other", "elsewhere")
	_, err := fs.Mount(other, fs.Options{SessionsDir: store})
	want := "mountpoint " + other + " is a disconnected fuse.other mount of elsewhere (transport endpoint is not connected); clear it with: fusermount3 -u -z " + other
	if fs.KindOf(err) != fs.KindMountpoint || err == nil || err.Error() != want {
		t.Errorf("dead fuse.other mount: %v\nwant %s", err, want)
	}

	var logged strings.Builder
	dead := t.TempDir()
	deadMount(t, dead, fs.Name, store)
	m, err := fs.Mount(dead, fs.Options{SessionsDir: store, Logger: newLogger(&logged)})
	if err != nil {
		t.Fatalf("over a dead pifs mount: %v", err)
	}
	defer m.Unmount()
	if !strings.Contains(logged.String(), "cleared a dead pifs mount of "+store+" on "+dead) {
		t.Errorf("log: %s", logged.String())
	}
	if _, err := os.Stat(filepath.Join(dead, fixProject)); err != nil {
		t.Errorf("new mount: %v", err)
	}
	if src := mountsAt(t, dead); len(src) != 1 {
		t.Errorf("%d mounts on %s, want the new one only", len(src), dead)
	}
}

// mountsAt are the sources of the mounts on path, as findmnt lists them.
func mountsAt(t *testing.T, path string) []string {
	t.Helper()
	path, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("findmnt", "-rn", "-o", "SOURCE", "--mountpoint", path).Output()
	return lines(string(out))
}
