package view

import (
	"errors"
	iofs "io/fs"

	"github.com/pifs/pifs/internal/txn"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The errors the view reports. Kind sorts any error a view returns into
// one of them, so that the layer that answers the kernel maps each to an
// errno in one place.
var (
	ErrNotFound = errors.New("no such file or directory")
	ErrReadOnly = errors.New("read-only file system")
	ErrInvalid  = errors.New("invalid argument")
	ErrNotDir   = errors.New("not a directory")
	// ErrExists: a session id given to fork or new is already taken.
	ErrExists = errors.New("already exists")
	// ErrBusy: a version 1 or 2 session kept changing while pifs
	// migrated it before a write.
	ErrBusy = errors.New("session busy")
	// ErrTooLong: a line written to a control is longer than pifs
	// buffers, or a transaction passes its bound (package txn).
	ErrTooLong = txn.ErrTooLong
	// ErrNotPermitted: a change no file of the mount takes (chmod, chown).
	ErrNotPermitted = errors.New("operation not permitted")
)

// Kind is the sentinel error of this package that err is of, also for the
// errors of the packages below (a missing file, a file that is no session,
// an entry the tree does not have, a line it refuses); nil for any other
// error, such as one from the OS, whose errno says what it is.
func Kind(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound), errors.Is(err, iofs.ErrNotExist), errors.Is(err, sessions.ErrNotSession),
		errors.Is(err, tree.ErrNotFound):
		return ErrNotFound
	case errors.Is(err, ErrReadOnly):
		return ErrReadOnly
	case errors.Is(err, ErrInvalid), errors.Is(err, tree.ErrInvalid):
		return ErrInvalid
	case errors.Is(err, ErrNotDir):
		return ErrNotDir
	case errors.Is(err, ErrExists), errors.Is(err, iofs.ErrExist):
		return ErrExists
	case errors.Is(err, ErrBusy):
		return ErrBusy
	case errors.Is(err, ErrTooLong):
		return ErrTooLong
	case errors.Is(err, ErrNotPermitted):
		return ErrNotPermitted
	}
	return nil
}

// refuse makes a refusal (a txn.Refusal: the sentence for the session's
// errors file and the log, and the sentinel that gives the errno); format
// must say what is wrong and what to do.
func refuse(kind error, format string, args ...any) error {
	return txn.Refuse(kind, format, args...)
}

// refusals keeps why recent writes to each session were refused (the
// session's errors file, by "project/session"), and imports into each
// project (by "project/").
type refusals = txn.Refusals
