package view

import (
	"syscall"
	"time"
)

// Snapshot is what an open file of a computed view holds: its whole
// content now, and the attributes that go with it (for fstat once the
// session is gone).
func (v *View) Snapshot(f File) ([]byte, Attr, error) {
	data, mt, err := f.content()
	if err != nil {
		return nil, Attr{}, err
	}
	return data, v.own(f, Attr{Mode: syscall.S_IFREG | v.perm(f), Size: uint64(len(data)), Mtime: mt}, nil), nil
}

// Opened is the attributes of f but its size, for an open file that
// follows its session (see Follow): its mode and owner now, and the time
// it was opened.
func (v *View) Opened(f File) Attr {
	return v.own(f, Attr{Mode: syscall.S_IFREG | v.perm(f), Mtime: time.Now()}, nil)
}
