package view

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/internal/trash"
	"github.com/pifs/pifs/sessions"
)

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

const trashName = "trash"

// trashState is the trash as the mount shows it: the listing, kept until
// one of the trash's info/ folders changes (their mtimes) or pifs itself
// trashes or restores.
type trashState struct {
	dir string // the sessions directory

	mu   sync.Mutex
	tr   *trash.Trash
	err  error // why there is no trash
	made bool
	// infos are the info/ folders of the trash directories, key their
	// mtimes when the listing was read, mtime the newest.
	infos  []string
	key    string
	mtime  time.Time
	byName map[string]*trashEntry
	names  []string // sorted
}

// trashEntry is one trashed session.
type trashEntry struct {
	t    sessions.Trashed
	file *sessions.File
}

// get is the user's trash, made at first use.
func (ts *trashState) get() (*trash.Trash, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.trash()
}

// trash is get with ts.mu held.
func (ts *trashState) trash() (*trash.Trash, error) {
	if !ts.made {
		ts.made = true
		ts.tr, ts.err = sessions.NewTrash(ts.dir)
	}
	return ts.tr, ts.err
}

// stale forgets the listing: pifs trashed or restored a session.
func (ts *trashState) stale() {
	ts.mu.Lock()
	ts.key = ""
	ts.mu.Unlock()
}

// current brings the listing up to date with the trash. ts.mu is held.
func (ts *trashState) current() error {
	tr, err := ts.trash()
	if err != nil {
		return err
	}
	if ts.infos == nil {
		if ts.infos, err = tr.InfoDirs(ts.dir); err != nil {
			return err
		}
	}
	var key strings.Builder
	var newest time.Time
	for _, d := range ts.infos {
		if fi, err := os.Stat(d); err == nil {
			key.WriteString(strconv.FormatInt(fi.ModTime().UnixNano(), 36))
			if fi.ModTime().After(newest) {
				newest = fi.ModTime()
			}
		}
		key.WriteByte(' ')
	}
	if ts.byName != nil && key.String() == ts.key {
		return nil
	}
	list, err := sessions.TrashedSessions(tr, ts.dir)
	if err != nil {
		return err
	}
	old := ts.byName
	ts.byName, ts.names = map[string]*trashEntry{}, nil
	for _, t := range list {
		name := strings.TrimSuffix(t.Item.Name, ".jsonl")
		if !validTrashName(name) || ts.byName[name] != nil {
			continue
		}
		e := &trashEntry{t: t}
		if o := old[name]; o != nil && o.t.File() == t.File() {
			e.file = o.file
		}
		ts.byName[name] = e
		ts.names = append(ts.names, name)
	}
	ts.key, ts.mtime = key.String(), newest
	return nil
}

func validTrashName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// entry is the trashed session of a name, with its file as the index
// would give it: the same value while the file is unchanged, so that the
// parsed session held for it stays current.
func (ts *trashState) entry(name string) (*trashEntry, *sessions.File, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.current(); err != nil {
		return nil, nil, err
	}
	e := ts.byName[name]
	if e == nil {
		return nil, nil, ErrNotFound
	}
	fi, err := os.Stat(e.t.File())
	if err != nil {
		return nil, nil, ErrNotFound
	}
	if e.file == nil || e.file.Sig != sessions.SigOf(fi) {
		f, err := sessions.StatFile(e.t.File())
		if err != nil || f.Header == nil {
			return nil, nil, ErrNotFound
		}
		f.Project, f.Name, f.Flat = e.t.Project, e.t.Name, e.t.Flat
		e.file = f
	}
	return e, e.file, nil
}

// list is the names of the trashed sessions and the trash's mtime.
func (ts *trashState) list() ([]string, time.Time, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.current(); err != nil {
		return nil, time.Time{}, err
	}
	return ts.names, ts.mtime, nil
}

// trashDir is trash/.
type trashDir struct{ inRoot }

func newTrashDir(v *View) *trashDir { return &trashDir{inRoot{v}} }

// noTrash logs why there is no trash, and shows an empty trash/.
func (d *trashDir) noTrash(err error) {
	d.v.log.Warn("trash/: " + err.Error())
}

func (d *trashDir) mtime() (time.Time, error) {
	_, mt, err := d.v.st.trash.list()
	if err != nil {
		return dirMtime(d.v.opts.SessionsDir)
	}
	return mt, nil
}

func (d *trashDir) list() ([]Child, error) {
	names, _, err := d.v.st.trash.list()
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
	if _, _, err := d.v.st.trash.entry(name); err != nil {
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

// trashedMeta is store.meta for a trashed session.
func (st *store) trashedMeta(name string) (*sessions.File, error) {
	_, f, err := st.trash.entry(name)
	return f, err
}

// inTrash tells whether n is a value of a trashed session.
func inTrash(n Node) bool { return n.scope().project == trashName }

// refuseTrashed refuses a change to a trashed session, with the reason in
// its errors file and the log.
func (v *View) refuseTrashed(n Node, what string) error {
	sc := n.scope()
	err := refuse(ErrReadOnly, "%s: this session is in the trash, where nothing changes it; restore it first (mv MOUNT/trash/%s MOUNT/<project>/)", what, sc.session)
	sessionRef{v, sc.project, sc.session}.refused(err)
	return err
}

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
		if _, err := v.st.meta(from.project, name); err == nil {
			err := refuse(ErrReadOnly, "mv %s/%s: a session folder moves only to the trash (mv MOUNT/%s/%s MOUNT/trash/); sessions are not renamed or moved between projects through the mount (fork makes a copy in another project)", from.project, name, from.project, name)
			sessionRef{v, from.project, name}.refused(err)
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
	s := sessionRef{v, from.project, name}
	f, err := v.st.meta(from.project, name)
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
	if err := mayChangeIn(c, filepath.Dir(f.Path), f.Path); err != nil {
		return fail(err)
	}
	tr, err := v.st.trash.get()
	if err != nil {
		return fail(refuse(ErrReadOnly, "mv to trash/: there is no trash: %v", err))
	}
	// Said before the move: the watcher may see the file go at once.
	moved := false
	v.events.movedBy(f.Path, EventTrashed)
	defer func(path string) {
		if !moved {
			v.events.movedBy(path, "")
		}
	}(f.Path)
	_, err = sessions.TrashSession(tr, f, time.Now())
	if errors.Is(err, sessions.ErrChanged) {
		// Changed since the index read it: read again, and say why.
		v.st.update(f.Path)
		if f, err = v.st.meta(from.project, name); err != nil {
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
	v.st.trash.stale()
	v.st.update(f.Path)
	// The kernel moved its node of the session folder into trash/:
	// it forgets it there, and looks the trashed session up afresh.
	v.st.out.putNotices(Notice{[]string{trashName, name}, Forget}, Notice{[]string{trashName}, Refresh})
	return nil
}

// restoreSession puts the trashed session name back where it was: into the
// project folder to, under its own name.
func (v *View) restoreSession(name string, to *projectDir, newName string, c Caller) error {
	e, _, err := v.st.trash.entry(name)
	if err != nil {
		return err
	}
	s := sessionRef{v, trashName, name}
	fail := func(err error) error {
		s.refused(err)
		return err
	}
	t := e.t
	if to.project != t.Project || (newName != t.Name && newName != name) {
		return fail(refuse(ErrReadOnly, "mv trash/%s %s/%s: a trashed session goes back only where it was: mv MOUNT/trash/%s MOUNT/%s/", name, to.project, newName, name, t.Project))
	}
	if err := mayChangeIn(c, filepath.Dir(t.Original), ""); err != nil {
		return fail(err)
	}
	if err := mayChangeIn(c, filepath.Dir(t.File()), t.File()); err != nil {
		return fail(err)
	}
	tr, err := v.st.trash.get()
	if err != nil {
		return fail(err)
	}
	moved := false
	v.events.movedBy(t.Original, EventRestored)
	defer func() {
		if !moved {
			v.events.movedBy(t.Original, "")
		}
	}()
	err = sessions.RestoreSession(tr, t, v.st.x)
	switch {
	case errors.Is(err, os.ErrExist):
		return fail(refuse(ErrExists, "mv trash/%s: not restored: %v", name, err))
	case err != nil:
		return fail(fmt.Errorf("mv trash/%s: not restored: %w", name, err))
	}
	v.log.Info(fmt.Sprintf("restored %s to %s", name, t.Original))
	moved = true
	v.st.trash.stale()
	v.st.update(t.Original)
	v.st.out.putNotices(Notice{[]string{to.project, newName}, Forget}, Notice{[]string{trashName}, Refresh})
	return nil
}
