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
// buffer is backed by huge pages (where the system gives them) and that
// its mapping no longer asks for them ("nh"), so that khugepaged never
// fills freed memory of the heap with huge pages.
func TestAdvised(t *testing.T) {
	big := Bytes(0, 5*Min)
	mid := uintptr(unsafe.Pointer(unsafe.SliceData(big))) + uintptr(cap(big)/2)
	m := mappingOf(t, mid)
	if !strings.Contains(" "+m.flags+" ", " nh ") {
		t.Errorf("the middle of a %d-byte buffer: VmFlags %q, want nh", cap(big), m.flags)
	}
	thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(thp), "[never]") {
		t.Logf("transparent huge pages: %q (%v): none expected", thp, err)
		return
	}
	if m.hugeKiB < 2048 {
		t.Errorf("the mapping of a %d-byte buffer holds %d KiB of huge pages (transparent huge pages: %q)", cap(big), m.hugeKiB, strings.TrimSpace(string(thp)))
	}
}

type mapping struct {
	flags   string
	hugeKiB int
}

// mappingOf gives what smaps says of the mapping holding p.
func mappingOf(t *testing.T, p uintptr) mapping {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	var m mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && !strings.Contains(line[:strings.IndexByte(line, ' ')], ":") {
			in = lo <= p && p < hi
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			fmt.Sscanf(strings.TrimSpace(v), "%d", &m.hugeKiB)
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			m.flags = strings.TrimSpace(v)
			return m
		}
	}
	t.Fatalf("no mapping holds %#x", p)
	return m
}
