//go:build darwin || freebsd

package sessions

import (
	"strings"
	"syscall"
)

// eventsKind names the kernel's change events, for the log. fsnotify
// watches each file of a watched folder with kqueue, so that appends raise
// events: one descriptor per session file.
const eventsKind = "kqueue"

// hasEvents tells whether a file system raises change events for what
// other machines write to it: not network file systems, nor FUSE ones.
func hasEvents(st *syscall.Statfs_t) bool {
	var name []byte
	for _, c := range st.Fstypename {
		if c == 0 {
			break
		}
		name = append(name, byte(c))
	}
	switch t := string(name); {
	case t == "nfs", t == "smbfs", t == "afpfs", t == "webdav", t == "cifs", t == "9p",
		strings.HasPrefix(t, "macfuse"), strings.HasPrefix(t, "osxfuse"), strings.HasPrefix(t, "fusefs"):
		return false
	}
	return true
}
