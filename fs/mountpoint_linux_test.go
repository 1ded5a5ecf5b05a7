package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestParseMountInfo(t *testing.T) {
	in := `22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
36 22 0:32 / /tmp/a\040b rw,nosuid,nodev,relatime shared:2 - fuse.pifs /home/u/.pi/agent/sessions rw,user_id=0,group_id=0
37 22 0:33 / /mnt/x rw master:1 propagate_from:2 - tmpfs tmp\134fs rw
`
	got, err := parseMountInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []mountInfo{
		{"/", "ext4", "/dev/sda1"},
		{"/tmp/a b", "fuse.pifs", "/home/u/.pi/agent/sessions"},
		{"/mnt/x", "tmpfs", `tmp\fs`},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseMountOptions(t *testing.T) {
	o := Options{MountOptions: []string{"defaults,noauto,user,_netdev,x-systemd.automount,allow_other,ro", "nonempty,noatime,comment=x"}}
	kernel, err := parseMountOptions(&o)
	if err != nil {
		t.Fatal(err)
	}
	if !o.ReadOnly || !o.AllowOther || !o.NonEmpty || strings.Join(kernel, ",") != "noatime" {
		t.Errorf("got %+v, kernel %v", o, kernel)
	}
	if _, err := parseMountOptions(&Options{MountOptions: []string{"rw,bogus"}}); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("unknown option: %v", err)
	}
	if _, err := parseMountOptions(&Options{MountOptions: []string{"auto_unmount"}}); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("auto_unmount: %v", err)
	}
}

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
		kind      Kind
		want      string
	}{
		{"missing", filepath.Join(tmp, "nope"), KindMountpoint, "mkdir -p"},
		{"file", file, KindMountpoint, "not a directory"},
		{"nonempty", full, KindMountpoint, "--nonempty"},
		{"inside", filepath.Join(store, fixProject), KindMountpoint, "inside the sessions directory"},
	} {
		_, err := Mount(c.mnt, Options{SessionsDir: store})
		if KindOf(err) != c.kind || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (kind %d), want kind %d and %q", c.name, err, KindOf(err), c.kind, c.want)
		}
	}
	if _, err := Mount(t.TempDir(), Options{SessionsDir: file}); KindOf(err) != KindSessionsDir {
		t.Errorf("store is a file: %v", err)
	}
	if _, err := Mount(t.TempDir(), Options{SessionsDir: store, MountOptions: []string{"bogus"}}); KindOf(err) != KindMount {
		t.Errorf("bad option: %v", err)
	}
	mnt := testMount(t, store)
	if _, err := Mount(mnt, Options{SessionsDir: store, NonEmpty: true}); KindOf(err) != KindMountpoint || !strings.Contains(err.Error(), "already a mount (fuse.pifs of "+store) {
		t.Errorf("mount on a mount: %v", err)
	}
	if m, ok := mountAt(canonical(mnt)); !ok || m.Source != store {
		t.Errorf("source shown = %+v, want the sessions directory %s", m, store)
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
	_, err := Mount(other, Options{SessionsDir: store})
	want := "mountpoint " + other + " is a disconnected fuse.other mount of elsewhere (transport endpoint is not connected); clear it with: fusermount3 -u -z " + other
	if KindOf(err) != KindMountpoint || err == nil || err.Error() != want {
		t.Errorf("dead fuse.other mount: %v\nwant %s", err, want)
	}

	var logged strings.Builder
	dead := t.TempDir()
	deadMount(t, dead, Name, store)
	m, err := Mount(dead, Options{SessionsDir: store, Logger: newLogger(&logged)})
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
	if ms, _ := mounts(); countAt(ms, dead) != 1 {
		t.Errorf("%d mounts on %s, want the new one only", countAt(ms, dead), dead)
	}
}

func countAt(ms []mountInfo, p string) int {
	n := 0
	for _, m := range ms {
		if m.Point == p {
			n++
		}
	}
	return n
}
