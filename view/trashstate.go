package view

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/trash"
	"github.com/pifs/pifs/sessions"
)

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
