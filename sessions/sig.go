package sessions

import (
	"os"
	"syscall"
)

// Sig tells whether a file changed since it was last seen: appends change
// its size and mtime, a replacement its inode, and a rewrite in place of
// the same size its mtime and ctime (to the nanosecond).
type Sig struct {
	Ino, Dev     uint64
	Size         int64
	Mtime, Ctime int64 // ns since the epoch
}

// SigOf is the signature of a file as stat shows it.
func SigOf(fi os.FileInfo) Sig {
	s := Sig{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ino, s.Dev = st.Ino, uint64(st.Dev)
		s.Ctime = st.Ctim.Nano()
	}
	return s
}

// Grew tells that the file is the same one, only longer or as long: what
// was read of it may still hold (appends), unless it was rewritten.
func (s Sig) Grew(old Sig) bool {
	return s.Ino == old.Ino && s.Dev == old.Dev && s.Size >= old.Size
}
