package sessions

import "syscall"

// sigOfStat is the signature in a stat(2) result.
func sigOfStat(st *syscall.Stat_t) Sig {
	return Sig{Ino: st.Ino, Dev: st.Dev, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}
