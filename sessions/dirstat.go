package sessions

import (
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// dirStat stats names in one folder through a descriptor of it: no walk
// of the path to the folder for each name.
type dirStat struct{ fd int }

func openDir(dir string) (dirStat, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return dirStat{}, err
	}
	return dirStat{fd}, nil
}

// stat is statSig of name in the folder, the folder itself for "".
func (d dirStat) stat(name string) (sig Sig, typ uint32, err error) {
	var st unix.Stat_t
	if name == "" {
		err = unix.Fstat(d.fd, &st)
	} else {
		err = unix.Fstatat(d.fd, name, &st, 0)
	}
	if err != nil {
		return Sig{}, 0, err
	}
	return sigOfUnixStat(&st), uint32(st.Mode) & unix.S_IFMT, nil
}

func (d dirStat) close() { unix.Close(d.fd) }

// base is the file's name in its folder.
func (f *File) base() string { return filepath.Base(f.Path) }

// onThread runs fn on one thread and returns the CPU time that thread
// spent in it (0 where it cannot be told).
func onThread(fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var t0, t1 unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0) != nil {
		fn()
		return 0
	}
	fn()
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1) != nil {
		return 0
	}
	return time.Duration(t1.Nano() - t0.Nano())
}
