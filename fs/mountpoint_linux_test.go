package fs

import (
	"strings"
	"testing"
)

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
