package fs

import (
	"os"
	"os/exec"
	"path/filepath"
)

// fuseHelpers are the programs go-fuse mounts with, in the order it looks
// for them: each in $PATH, then in /bin.
var fuseHelpers = []string{"fusermount3", "fusermount"}

// checkFuseHelper refuses a mount that could not start: without
// fusermount3 (or fusermount) go-fuse would fail with a bare
// "exec: /bin/fusermount: no such file or directory", which names neither
// the package nor how to install it.
func checkFuseHelper() error {
	for _, prog := range fuseHelpers {
		if _, err := exec.LookPath(prog); err == nil {
			return nil
		}
		if _, err := exec.LookPath(filepath.Join("/bin", prog)); err == nil {
			return nil
		}
	}
	where := "an empty PATH"
	if p := os.Getenv("PATH"); p != "" {
		where = "PATH=" + p
	}
	return refuse(KindMountpoint, "cannot mount: FUSE is not installed: no fusermount3 or fusermount in %s or /bin; %s", where, installFuse)
}
