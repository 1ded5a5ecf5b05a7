//go:build !linux

package fs

import (
	"os"
	"runtime"
)

// macFUSE's mount helpers, where go-fuse looks for them.
var macFUSEHelpers = []string{
	"/Library/Filesystems/macfuse.fs/Contents/Resources/mount_macfuse",
	"/Library/Filesystems/osxfuse.fs/Contents/Resources/mount_osxfuse",
}

// checkFuseHelper refuses a mount on macOS without macFUSE, whose helper
// go-fuse mounts with; elsewhere the system's own mount helper is used.
func checkFuseHelper() error {
	if runtime.GOOS != "darwin" {
		return nil
	}
	for _, p := range macFUSEHelpers {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
	}
	return refuse(KindMountpoint, "cannot mount: macFUSE is not installed: no mount_macfuse in /Library/Filesystems; %s", installFuse)
}
