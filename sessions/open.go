package sessions

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// openRegular opens a store file without ever blocking and checks that it
// is a regular file. A plain open of a FIFO (or of some devices) put at a
// session's path waits for a writer for ever, in a thread no signal can
// free: O_NONBLOCK makes that open return at once, and fstat then tells
// what it is. Anything but a regular file is ErrNotSession, skipped like
// any other file that is not a session. Symbolic links are followed, as pi
// follows them.
func openRegular(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
		// A socket, or a device without its driver.
		return nil, nil, ErrNotSession
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, ErrNotSession
	}
	return f, fi, nil
}

// statRegular is the signature of the regular file at path, found without
// blocking.
func statRegular(path string) (Sig, error) {
	f, fi, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return Sig{}, err
	}
	f.Close()
	return SigOf(fi), nil
}

// OpenRegular opens a store file for reading, without ever blocking; a
// file that is not a regular one (a FIFO, a socket, a device) is
// ErrNotSession.
func OpenRegular(path string) (*os.File, error) {
	f, _, err := openRegular(path, os.O_RDONLY)
	return f, err
}

// fdFile is a store file open for reading through its bare descriptor,
// for the reads that open every file of a store (headers, tails, name
// scans): an os.File costs each open one system call more on Linux (its
// descriptor is offered to the runtime's poller, which refuses a regular
// file) and an allocation with a finalizer. Read reads on from where the
// last Read stopped.
type fdFile struct {
	fd  int
	off int64
}

// openFd is openRegular for reading, as an fdFile, with the file's stat.
func openFd(path string) (*fdFile, *syscall.Stat_t, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.ENXIO || err == syscall.ENODEV {
		return nil, nil, ErrNotSession // a socket, or a device without its driver
	}
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := &fdFile{fd: fd}
	st := new(syscall.Stat_t)
	for {
		if err = syscall.Fstat(fd, st); err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		f.Close()
		return nil, nil, ErrNotSession
	}
	return f, st, nil
}

func (f *fdFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(f.fd, b[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f *fdFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Pread(f.fd, b, f.off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		f.off += int64(n)
		return n, nil
	}
}

func (f *fdFile) Close() error { return syscall.Close(f.fd) }

// fileMode is the os.FileMode of a regular file's stat, as os.Stat gives
// it.
func fileMode(st *syscall.Stat_t) os.FileMode {
	mode := os.FileMode(uint32(st.Mode) & 0o777)
	if uint32(st.Mode)&syscall.S_ISGID != 0 {
		mode |= os.ModeSetgid
	}
	if uint32(st.Mode)&syscall.S_ISUID != 0 {
		mode |= os.ModeSetuid
	}
	if uint32(st.Mode)&syscall.S_ISVTX != 0 {
		mode |= os.ModeSticky
	}
	return mode
}

// ignoringEINTR calls fn until it returns anything but EINTR.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}
