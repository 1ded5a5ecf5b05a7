package fs

import (
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
	if _, err := parseMountOptions(&Options{MountOptions: []string{"auto_unmount"}}); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("auto_unmount: %v", err)
	}
}
