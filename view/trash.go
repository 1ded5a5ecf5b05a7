package view

import (
	"path/filepath"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/access"
	"github.com/pifs/pifs/internal/names"
)

// trashDir is trash/.
type trashDir struct{ inRoot }

// trash/ at the root: the pi sessions of this store that are in the user's
// trash (the freedesktop.org Trash Specification, as trash-cli and file
// managers keep it), each a session folder like any other, read-only.
// `mv MOUNT/<project>/<session> MOUNT/trash/` trashes a session file and
// `mv MOUNT/trash/<session> MOUNT/<project>/` restores it (see Rename).
//
// A trashed session is named by its name in the trash's files/ without
// .jsonl: its own name, or NAME.jsonl_1… when a file of that name was
// trashed before. Inside the view its values have the scope of a project
// named trash (no project folder can be), and the store finds its file
// through the listing below instead of the index.

// gathers: trash/ holds the sessions of the user pifs runs as, in a
// trash directory another user may not be allowed to enter.
func (*trashDir) gathers() bool { return true }

// seenBy: a trashed session is shown to whoever may read its file and
// search every folder down to it (the trash's files/), as they would need
// to see it in the trash.
func (d *trashedDir) seenBy(s *sight, c Child) (Child, bool) {
	if s.who == nil {
		return c, true
	}
	e, f, err := d.s.v.trash.Entry(d.s.name)
	if err != nil || !s.who.Allows(Owner{Uid: f.Uid, Gid: f.Gid, Perm: uint32(f.Mode.Perm())}, access.Read) {
		return c, false
	}
	dir := filepath.Dir(e.File())
	s.trashMu.Lock()
	defer s.trashMu.Unlock()
	ok, known := s.trashed[dir]
	if !known {
		ok = access.SearchFromTop(*s.who, dir) == nil
		if s.trashed == nil {
			s.trashed = map[string]bool{}
		}
		s.trashed[dir] = ok
	}
	return c, ok
}

func newTrashDir(v *View) *trashDir { return &trashDir{inRoot{v}} }

// noTrash logs why there is no trash, and shows an empty trash/.
func (d *trashDir) noTrash(err error) {
	d.v.log.Warn("trash/: " + err.Error())
}

func (d *trashDir) mtime() (time.Time, error) {
	_, mt, err := d.v.trash.List()
	if err != nil {
		return dirMtime(d.v.opts.SessionsDir)
	}
	return mt, nil
}

func (d *trashDir) list() ([]Child, error) {
	names, _, err := d.v.trash.List()
	if err != nil {
		d.noTrash(err)
		return nil, nil
	}
	out := make([]Child, 0, len(names))
	for _, n := range names {
		out = append(out, d.session(n))
	}
	return out, nil
}

func (d *trashDir) lookup(name string) (Child, error) {
	if _, _, err := d.v.trash.Entry(name); err != nil {
		return Child{}, ErrNotFound
	}
	return d.session(name), nil
}

func (d *trashDir) session(name string) Child {
	return Child{name, syscall.S_IFDIR, names.Ino("s", trashName, name), func() Node { return &trashedDir{newSessionDir(d.v, trashName, name)} }}
}

// trashedDir is a trashed session's folder: a session folder whose showing
// depends on who asks (see seenBy).
type trashedDir struct{ *sessionDir }
