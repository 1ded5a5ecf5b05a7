package sessions

import "syscall"

// eventsKind names the kernel's change events, for the log.
const eventsKind = "inotify"

// File system types whose remote changes raise no inotify events here.
var noEvents = map[int64]bool{
	0x6969:     true, // NFS
	0x517B:     true, // SMB
	0xFF534D42: true, // CIFS
	0xFE534D42: true, // SMB2
	0x65735546: true, // FUSE (sshfs, rclone…)
	0x01021997: true, // 9p
	0x00C36400: true, // Ceph
	0x47504653: true, // GPFS
	0x0BD00BD0: true, // Lustre
}

// hasEvents tells whether a file system raises change events for what
// other machines write to it.
func hasEvents(st *syscall.Statfs_t) bool { return !noEvents[int64(st.Type)] }
