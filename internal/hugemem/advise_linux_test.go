package hugemem

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdvised checks in /proc/self/smaps that the middle of a large
// buffer is in a mapping marked for huge pages ("hg").
func TestAdvised(t *testing.T) {
	big := Bytes(0, 3*Min)
	mid := uintptr(unsafe.Pointer(unsafe.SliceData(big))) + uintptr(cap(big)/2)
	if flags := vmFlags(t, mid); !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the middle of a %d-byte buffer: VmFlags %q, want hg", cap(big), flags)
	}
}

// vmFlags gives the VmFlags line of the mapping holding p.
func vmFlags(t *testing.T, p uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && !strings.Contains(line[:strings.IndexByte(line, ' ')], ":") {
			in = lo <= p && p < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return ""
}
