//go:build darwin || freebsd

package sessions

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sigOfStat is the signature in a stat(2) result.
func sigOfStat(st *syscall.Stat_t) Sig {
	return Sig{Ino: st.Ino, Dev: uint64(st.Dev), Size: st.Size, Mtime: st.Mtimespec.Nano(), Ctime: st.Ctimespec.Nano()}
}

// sigOfUnixStat is the signature in a stat(2) result as x/sys/unix gives it.
func sigOfUnixStat(st *unix.Stat_t) Sig {
	return Sig{Ino: st.Ino, Dev: uint64(st.Dev), Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}
