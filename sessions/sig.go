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
		s = sigOfStat(st)
	}
	return s
}

// statSig is the signature of what path names (following links) and its
// type (syscall.S_IFREG, S_IFDIR, …), from one stat(2) that allocates
// nothing: the watcher's polls look at every file of the store.
func statSig(path string) (sig Sig, typ uint32, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return Sig{}, 0, err
	}
	return sigOfStat(&st), uint32(st.Mode) & syscall.S_IFMT, nil
}

// Grew tells that the file is the same one, only longer or as long: what
// was read of it may still hold (appends), unless it was rewritten.
func (s Sig) Grew(old Sig) bool {
	return s.Ino == old.Ino && s.Dev == old.Dev && s.Size >= old.Size
}
