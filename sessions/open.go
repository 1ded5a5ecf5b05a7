package sessions

import (
	"errors"
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
