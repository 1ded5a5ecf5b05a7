package view

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pifs/pifs/events"
	"github.com/pifs/pifs/internal/access"
	"github.com/pifs/pifs/internal/trash"
	"github.com/pifs/pifs/sessions"
)

// Rename moves name in from to newName in to: a session folder into
// trash/ (the session file goes into the user's trash), or a trashed
// session back into its project folder (restored where it was, byte for
// byte). Nothing else is renamed: EROFS with the reason. A session
// written in the last minute is refused (EBUSY: pi may be running in it),
// a restore onto a file that is there (EEXIST), and a caller who could not
// make the same rename in the store (EACCES).
func (v *View) Rename(from Folder, name string, to Folder, newName string, flags uint32, c Caller) error {
	if v.opts.ReadOnly {
		return ErrReadOnly
	}
	if flags&^uint32(renameNoReplace) != 0 {
		return refuse(ErrInvalid, "rename: only a plain rename is taken (no exchange, no whiteout)")
	}
	switch from := from.(type) {
	case *projectDir:
		if to, ok := to.(*trashDir); ok {
			return v.trashSession(from, name, to, newName, c)
		}
		if _, err := v.meta(from.project, name); err == nil {
			err := refuse(ErrReadOnly, "mv %s/%s: a session folder moves only to the trash (mv MOUNT/%s/%s MOUNT/trash/); sessions are not renamed or moved between projects through the mount (fork makes a copy in another project)", from.project, name, from.project, name)
			newSessionRef(v, from.project, name).refused(err)
			return err
		}
	case *trashDir:
		if to, ok := to.(*projectDir); ok {
			return v.restoreSession(name, to, newName, c)
		}
		err := refuse(ErrReadOnly, "mv trash/%s: a trashed session moves only back to its project folder (mv MOUNT/trash/%s MOUNT/<project>/)", name, name)
		v.log.Warn(err.Error())
		return err
	}
	if p, ok := from.(sessionPart); ok {
		s := p.session()
		err := refuse(ErrReadOnly, "mv %s: nothing in a session folder is renamed; the session folder itself moves to the trash (mv MOUNT/%s/%s MOUNT/trash/)", name, s.project, s.name)
		if s.project == trashName {
			err = refuse(ErrReadOnly, "mv %s: nothing in a trashed session changes; restore it first (mv MOUNT/trash/%s MOUNT/<project>/)", name, s.name)
		}
		s.refused(err)
		return err
	}
	return ErrReadOnly
}

// renameNoReplace is RENAME_NOREPLACE: a rename that never replaces, as
// every rename pifs makes is.
const renameNoReplace = 1

// trashSession moves the session file of project/name into the trash.
func (v *View) trashSession(from *projectDir, name string, to *trashDir, newName string, c Caller) error {
	s := newSessionRef(v, from.project, name)
	f, err := v.meta(from.project, name)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		s.refused(err)
		return err
	}
	if newName != name {
		return fail(refuse(ErrReadOnly, "mv %s/%s trash/%s: a session keeps its name in the trash; mv MOUNT/%s/%s MOUNT/trash/", from.project, name, newName, from.project, name))
	}
	if err := access.MayChangeIn(c, filepath.Dir(f.Path), f.Path); err != nil {
		return fail(err)
	}
	tr, err := v.trash.Trash()
	if err != nil {
		return fail(refuse(ErrReadOnly, "mv to trash/: there is no trash: %v", err))
	}
	// Said before the move: the watcher may see the file go at once.
	moved := false
	v.events.MovedBy(f.Path, events.Trashed)
	defer func(path string) {
		if !moved {
			v.events.MovedBy(path, "")
		}
	}(f.Path)
	_, err = sessions.TrashSession(tr, f, time.Now())
	if errors.Is(err, sessions.ErrChanged) {
		// Changed since the index read it: read again, and say why.
		v.update(f.Path)
		if f, err = v.meta(from.project, name); err != nil {
			return err
		}
		_, err = sessions.TrashSession(tr, f, time.Now())
	}
	switch {
	case errors.Is(err, sessions.ErrBusy), errors.Is(err, sessions.ErrChanged):
		return fail(refuse(ErrBusy, "mv %s/%s trash/: not trashed: %v", from.project, name, err))
	case errors.Is(err, trash.ErrInside):
		return fail(refuse(ErrReadOnly, "mv %s/%s trash/: not trashed: %v (pi would list the trashed sessions); trash it with your file manager or trash-put once the trash is elsewhere", from.project, name, err))
	case err != nil:
		return fail(fmt.Errorf("mv %s/%s trash/: not trashed: %w", from.project, name, err))
	}
	v.log.Info(fmt.Sprintf("trashed %s/%s (%s)", from.project, name, f.Path))
	moved = true
	v.trash.Stale()
	v.update(f.Path)
	// The kernel moved its node of the session folder into trash/:
	// it forgets it there, and looks the trashed session up afresh.
	v.out.putNotices(Notice{[]string{trashName, name}, Forget}, Notice{[]string{trashName}, Refresh})
	return nil
}

// restoreSession puts the trashed session name back where it was: into the
// project folder to, under its own name.
func (v *View) restoreSession(name string, to *projectDir, newName string, c Caller) error {
	e, _, err := v.trash.Entry(name)
	if err != nil {
		return err
	}
	s := newSessionRef(v, trashName, name)
	fail := func(err error) error {
		s.refused(err)
		return err
	}
	t := e.Trashed
	if to.project != t.Project || (newName != t.Name && newName != name) {
		return fail(refuse(ErrReadOnly, "mv trash/%s %s/%s: a trashed session goes back only where it was: mv MOUNT/trash/%s MOUNT/%s/", name, to.project, newName, name, t.Project))
	}
	if err := access.MayChangeIn(c, filepath.Dir(t.Original), ""); err != nil {
		return fail(err)
	}
	if err := access.MayChangeIn(c, filepath.Dir(t.File()), t.File()); err != nil {
		return fail(err)
	}
	tr, err := v.trash.Trash()
	if err != nil {
		return fail(err)
	}
	moved := false
	v.events.MovedBy(t.Original, events.Restored)
	defer func() {
		if !moved {
			v.events.MovedBy(t.Original, "")
		}
	}()
	err = sessions.RestoreSession(tr, t, v.x)
	switch {
	case errors.Is(err, os.ErrExist):
		return fail(refuse(ErrExists, "mv trash/%s: not restored: %v", name, err))
	case err != nil:
		return fail(fmt.Errorf("mv trash/%s: not restored: %w", name, err))
	}
	v.log.Info(fmt.Sprintf("restored %s to %s", name, t.Original))
	moved = true
	v.trash.Stale()
	v.update(t.Original)
	v.out.putNotices(Notice{[]string{to.project, newName}, Forget}, Notice{[]string{trashName}, Refresh})
	return nil
}
