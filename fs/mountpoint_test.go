package fs

import (
	"os"
	"path/filepath"
	"strings"
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
	if _, err := Mount(t.TempDir(), Options{SessionsDir: filepath.Join(tmp, "none")}); KindOf(err) != KindSessionsDir {
		t.Errorf("missing store: %v", err)
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
