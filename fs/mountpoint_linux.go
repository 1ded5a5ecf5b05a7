package fs

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"

	"github.com/pifs/pifs/internal/mountinfo"
)

// mountAt returns the topmost mount whose mount point is path.
func mountAt(path string) (mountinfo.Mount, bool) {
	ms, err := mountinfo.Read()
	if err != nil {
		return mountinfo.Mount{}, false
	}
	var found mountinfo.Mount
	ok := false
	for _, m := range ms {
		if m.Point == path {
			found, ok = m, true // later lines are mounted on top
		}
	}
	return found, ok
}

// isPifsMount tells that m is provably a pifs mount: its type says so.
func isPifsMount(m mountinfo.Mount) bool { return m.FSType == "fuse."+Name }

// lazyUnmountCommand is what a user runs to clear a dead FUSE mount.
func lazyUnmountCommand(mnt string) string {
	return "fusermount3 -u -z " + shellQuote(mnt)
}

// unmountCommand is what a user runs to unmount m, mounted at mnt.
func unmountCommand(m mountinfo.Mount, mnt string) string {
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
