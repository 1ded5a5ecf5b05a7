package nodes

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/view"
)

// TestToErrnoPassesOSErrnos: an error from the OS reaches the caller as its
// own errno, however wrapped; refusals keep theirs.
func TestToErrnoPassesOSErrnos(t *testing.T) {
	cases := []struct {
		err  error
		want syscall.Errno
	}{
		{&sessions.AppendError{Path: "s", Err: &os.PathError{Op: "write", Path: "s", Err: syscall.ENOSPC}}, syscall.ENOSPC},
		{fmt.Errorf("append: %w", &os.PathError{Op: "write", Path: "s", Err: syscall.EDQUOT}), syscall.EDQUOT},
		{&os.PathError{Op: "open", Path: "s", Err: syscall.EACCES}, syscall.EACCES},
		{&os.PathError{Op: "read", Path: "s", Err: syscall.EIO}, syscall.EIO},
		{&os.PathError{Op: "open", Path: "s", Err: syscall.ENOENT}, syscall.ENOENT},
		{fmt.Errorf("bad line: %w", view.ErrInvalid), syscall.EINVAL},
		{sessions.ErrNotSession, syscall.ENOENT},
		{fmt.Errorf("something else"), syscall.EIO},
	}
	for _, c := range cases {
		if got := toErrno(c.err); got != c.want {
			t.Errorf("toErrno(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
