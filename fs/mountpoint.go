package fs

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Kind tells which part of a refused mount needs fixing; the command line
// turns it into an exit code.
type Kind int

const (
	// KindMountpoint: the mountpoint is missing, not a directory, not
	// empty, already a mount, a dead mount, or overlaps the store.
	KindMountpoint Kind = iota + 1
	// KindSessionsDir: the sessions directory is missing or unusable.
	KindSessionsDir
	// KindMount: the kernel or fusermount refused the mount.
	KindMount
)

// Error is a refused mount: the sentence says what is wrong and how to
// fix it.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func refuse(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// KindOf returns the kind of a refused mount, or 0 for any other error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// canonical is path made absolute with its symlinks resolved; when path
// itself cannot be resolved (missing, or a dead mount), its parent is.
func canonical(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		return p
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// clearDeadMount checks mnt for a disconnected mount (ENOTCONN). One that is provably a dead pifs mount (type fuse.pifs) is
// detached; any other is refused with the command that clears it.
func clearDeadMount(mnt string, logger *slog.Logger) error {
	if !disconnected(mnt) {
		return nil
	}
	path := canonical(mnt)
	m, ok := mountAt(path)
	if !ok || !isPifsMount(m) {
		kind := "a disconnected mount"
		if ok {
			kind = fmt.Sprintf("a disconnected %s mount of %s", m.FSType, m.Source)
		}
		return refuse(KindMountpoint, "mountpoint %s is %s (transport endpoint is not connected); clear it with: %s", mnt, kind, lazyUnmountCommand(mnt))
	}
	if err := detach(path); err != nil {
		if !disconnected(mnt) {
			return nil // another pifs starting here cleared it first
		}
		return refuse(KindMountpoint, "mountpoint %s is a dead pifs mount of %s that could not be cleared (%v); clear it with: %s", mnt, m.Source, err, lazyUnmountCommand(mnt))
	}
	logger.Info(fmt.Sprintf("cleared a dead pifs mount of %s on %s", m.Source, mnt))
	if disconnected(mnt) {
		return refuse(KindMountpoint, "mountpoint %s is still a dead mount after clearing one; clear it with: %s", mnt, lazyUnmountCommand(mnt))
	}
	return nil
}

// disconnected tells whether mnt is a FUSE mount whose server is gone:
// ENOTCONN, or ECONNABORTED when the connection was cut with requests in
// flight. A stat can still succeed then, from the kernel's attribute
// cache; statfs always asks the server.
func disconnected(mnt string) bool {
	gone := func(err error) bool {
		return errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED)
	}
	if _, err := os.Stat(mnt); gone(err) {
		return true
	}
	var st syscall.Statfs_t
	return gone(syscall.Statfs(mnt, &st))
}

// checkMountpoint refuses, before anything is mounted, a mountpoint that
// is missing, not a directory, overlapping the store, already a mount or
// (without nonEmpty) not empty. A dead pifs mount is cleared first.
func checkMountpoint(mnt, store string, nonEmpty bool, logger *slog.Logger) error {
	if err := clearDeadMount(mnt, logger); err != nil {
		return err
	}
	fi, err := os.Stat(mnt)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return refuse(KindMountpoint, "mountpoint %s does not exist; create it with: mkdir -p %s", mnt, shellQuote(mnt))
	case err != nil:
		return refuse(KindMountpoint, "mountpoint: %v", err)
	case !fi.IsDir():
		return refuse(KindMountpoint, "mountpoint %s is not a directory; mount on an empty directory", mnt)
	}
	if err := checkOverlap(store, mnt); err != nil {
		return &Error{Kind: KindMountpoint, Err: err}
	}
	if m, ok := mountAt(canonical(mnt)); ok {
		how := unmountCommand(m, mnt)
		return refuse(KindMountpoint, "mountpoint %s is already a mount (%s of %s); unmount it first: %s", mnt, m.FSType, m.Source, how)
	}
	if !nonEmpty {
		d, err := os.Open(mnt)
		if err != nil {
			return refuse(KindMountpoint, "mountpoint: %v", err)
		}
		names, _ := d.Readdirnames(1)
		d.Close()
		if len(names) > 0 {
			return refuse(KindMountpoint, "mountpoint %s is not empty; use an empty directory, or --nonempty (-o nonempty) to hide its contents while mounted", mnt)
		}
	}
	return nil
}

// lockMountpoint takes an exclusive flock(2) on the mountpoint directory
// and returns what releases it. Mount holds it from before its checks
// until the mount is up and in the mount table, so that of two pifs
// started at once on one mountpoint the second checks it only then, finds
// the mount and refuses. The lock is on the directory's own inode, under
// the mount: it needs no file anywhere and leaves none, works for any user
// who may open the directory (as mounting there needs), on any file system
// that has flock (NFS emulates it with byte-range locks); where it fails,
// the checks go on unlocked. A pifs that opens the directory once it is
// mounted over gets the mount's root instead, and the mount table already
// says it is a mount. A dead mount there is cleared first: it cannot be
// opened.
func lockMountpoint(mnt string, logger *slog.Logger) (unlock func(), err error) {
	d, err := os.Open(mnt)
	if err != nil && (errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED)) {
		if err := clearDeadMount(mnt, logger); err != nil {
			return nil, err
		}
		d, err = os.Open(mnt)
	}
	if err != nil {
		return func() {}, nil // checkMountpoint says what is wrong
	}
	for {
		err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		logger.Debug(fmt.Sprintf("mountpoint %s: no lock against another pifs mounting there at the same time: %v", mnt, err))
	}
	return func() { d.Close() }, nil // closing the last descriptor releases the lock
}
