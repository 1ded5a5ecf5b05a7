package e2e

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readDirInos reads a directory's entries with getdents, to see the inode
// numbers Readdir gives.
func readDirInos(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	out := map[string]uint64{}
	buf := make([]byte, 8192)
	for {
		n, err := syscall.Getdents(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n <= 0 {
			return out
		}
		for b := buf[:n]; len(b) > 0; {
			ino := binary.LittleEndian.Uint64(b[0:8])
			reclen := binary.LittleEndian.Uint16(b[16:18])
			name := string(b[19:reclen])
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			out[name] = ino
			b = b[reclen:]
		}
	}
}

func TestInodeNumbers(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	seen := map[uint64]string{}
	var walk func(dir string)
	walk = func(dir string) {
		for name, dino := range readDirInos(t, dir) {
			if name == "." || name == ".." {
				continue
			}
			p := filepath.Join(dir, name)
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				t.Fatal(err)
			}
			if st.Ino != dino {
				t.Errorf("%s: readdir ino %d, lookup ino %d", p, dino, st.Ino)
			}
			if other, ok := seen[st.Ino]; ok {
				t.Errorf("%s and %s share inode %d", p, other, st.Ino)
			}
			seen[st.Ino] = p
			if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				walk(p)
			}
		}
	}
	walk(mnt)
	// Also the entries only reachable by lookup.
	var st syscall.Stat_t
	syscall.Lstat(filepath.Join(sessionPath(mnt), "branches", "a1"), &st)
	if other, ok := seen[st.Ino]; ok {
		t.Errorf("branches/a1 shares inode with %s", other)
	}
	if len(seen) < 50 {
		t.Errorf("walked only %d names", len(seen))
	}
}
