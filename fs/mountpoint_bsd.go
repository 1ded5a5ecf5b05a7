//go:build darwin || freebsd

package fs

import (
	"syscall"

	"github.com/pifs/pifs/internal/mountinfo"
)

// mountAt returns the mount whose mount point is path: statfs(2) names
// the mount a path is on, and path is a mount point when that mount is
// mounted there.
func mountAt(path string) (mountinfo.Mount, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return mountinfo.Mount{}, false
	}
	m := mountinfo.Mount{Point: cString(st.Mntonname[:]), FSType: cString(st.Fstypename[:]), Source: cString(st.Mntfromname[:])}
	return m, m.Point == path
}

// cString is the text of a NUL-terminated array from statfs(2).
func cString(b []int8) string {
	s := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

// isPifsMount tells that m is provably a pifs mount. macFUSE and FreeBSD's
// fusefs name every FUSE mount alike, so none is: a dead mount is left to
// the user, with the command that clears it.
func isPifsMount(m mountinfo.Mount) bool { return false }

// lazyUnmountCommand is what a user runs to clear a dead FUSE mount.
func lazyUnmountCommand(mnt string) string {
	return "umount -f " + shellQuote(mnt)
}

// unmountCommand is what a user runs to unmount m, mounted at mnt.
func unmountCommand(m mountinfo.Mount, mnt string) string {
	return "umount " + shellQuote(mnt)
}

// mntForce is MNT_FORCE of <sys/mount.h>, the same on macOS and FreeBSD.
const mntForce = 0x80000

// detach unmounts path by force: these systems have no lazy unmount.
func detach(path string) error {
	return syscall.Unmount(path, mntForce)
}
