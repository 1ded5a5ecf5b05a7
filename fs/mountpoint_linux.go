package fs

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// mounts reads /proc/self/mountinfo.
func mounts() ([]mountInfo, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountInfo(f)
}

// parseMountInfo reads the mountinfo format (proc(5)): the fifth field is
// the mount point, and after the " - " separator come the type and the
// source; spaces and other bytes are octal escapes.
func parseMountInfo(r io.Reader) ([]mountInfo, error) {
	var out []mountInfo
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, s := range f {
			if s == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+2 >= len(f) {
			continue
		}
		out = append(out, mountInfo{Point: unescapeOctal(f[4]), FSType: unescapeOctal(f[sep+1]), Source: unescapeOctal(f[sep+2])})
	}
	return out, sc.Err()
}

// unescapeOctal undoes the kernel's \NNN escapes.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountAt returns the topmost mount whose mount point is path.
func mountAt(path string) (mountInfo, bool) {
	ms, err := mounts()
	if err != nil {
		return mountInfo{}, false
	}
	var found mountInfo
	ok := false
	for _, m := range ms {
		if m.Point == path {
			found, ok = m, true // later lines are mounted on top
		}
	}
	return found, ok
}

// isPifsMount tells that m is provably a pifs mount: its type says so.
func isPifsMount(m mountInfo) bool { return m.FSType == "fuse."+Name }

// lazyUnmountCommand is what a user runs to clear a dead FUSE mount.
func lazyUnmountCommand(mnt string) string {
	return "fusermount3 -u -z " + shellQuote(mnt)
}

// unmountCommand is what a user runs to unmount m, mounted at mnt.
func unmountCommand(m mountInfo, mnt string) string {
	if strings.HasPrefix(m.FSType, "fuse") {
		return "fusermount3 -u " + shellQuote(mnt)
	}
	return "umount " + shellQuote(mnt)
}

// detach unmounts path lazily: directly when we may, else through
// fusermount3, whose complaint becomes the error.
func detach(path string) error {
	if syscall.Unmount(path, syscall.MNT_DETACH) == nil {
		return nil
	}
	var last error
	for _, prog := range []string{"fusermount3", "fusermount"} {
		out, err := exec.Command(prog, "-u", "-z", path).CombinedOutput()
		if err == nil {
			return nil
		}
		if msg := strings.TrimSpace(string(out)); msg != "" {
			err = errors.New(msg)
		}
		if last == nil {
			last = err
		}
	}
	return last
}
