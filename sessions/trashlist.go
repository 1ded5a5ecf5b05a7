package sessions

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/trash"
)

// TrashList is the store's trashed sessions as a mount shows them: the
// listing, kept until one of the trash's info/ folders changes (their
// mtimes) or the mount itself trashes or restores (Stale).
type TrashList struct {
	dir   string                 // the sessions directory
	valid func(name string) bool // which names a trashed session may show as

	mu   sync.Mutex
	tr   *trash.Trash
	err  error // why there is no trash
	made bool
	// infos are the info/ folders of the trash directories, key their
	// mtimes when the listing was read, mtime the newest.
	infos  []string
	key    string
	mtime  time.Time
	byName map[string]*TrashEntry
	names  []string // sorted
}

// TrashEntry is one trashed session of a TrashList.
type TrashEntry struct {
	Trashed
	file *File
}

// NewTrashList is the listing of the trashed sessions of the store at
// dir, each under its file name without .jsonl when valid takes it (of
// two of one name, the first).
func NewTrashList(dir string, valid func(name string) bool) *TrashList {
	return &TrashList{dir: dir, valid: valid}
}

// Trash is the user's trash (NewTrash), made at first use.
func (ts *TrashList) Trash() (*trash.Trash, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.trash()
}

// trash is Trash with ts.mu held.
func (ts *TrashList) trash() (*trash.Trash, error) {
	if !ts.made {
		ts.made = true
		ts.tr, ts.err = NewTrash(ts.dir)
	}
	return ts.tr, ts.err
}

// Stale forgets the listing: the mount trashed or restored a session.
func (ts *TrashList) Stale() {
	ts.mu.Lock()
	ts.key = ""
	ts.mu.Unlock()
}

// current brings the listing up to date with the trash. ts.mu is held.
func (ts *TrashList) current() error {
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
	list, err := TrashedSessions(tr, ts.dir)
	if err != nil {
		return err
	}
	old := ts.byName
	ts.byName, ts.names = map[string]*TrashEntry{}, nil
	for _, t := range list {
		name := strings.TrimSuffix(t.Item.Name, ".jsonl")
		if !ts.valid(name) || ts.byName[name] != nil {
			continue
		}
		e := &TrashEntry{Trashed: t}
		if o := old[name]; o != nil && o.File() == t.File() {
			e.file = o.file
		}
		ts.byName[name] = e
		ts.names = append(ts.names, name)
	}
	ts.key, ts.mtime = key.String(), newest
	return nil
}

// Entry is the trashed session of a name, with its file as the index
// would give it: the same value while the file is unchanged, so that the
// parsed session held for it stays current. A name the trash does not
// hold, or whose file is gone or no session, is fs.ErrNotExist.
func (ts *TrashList) Entry(name string) (*TrashEntry, *File, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.current(); err != nil {
		return nil, nil, err
	}
	e := ts.byName[name]
	if e == nil {
		return nil, nil, fs.ErrNotExist
	}
	fi, err := os.Stat(e.File())
	if err != nil {
		return nil, nil, fs.ErrNotExist
	}
	if e.file == nil || e.file.Sig != SigOf(fi) {
		f, err := StatFile(e.File())
		if err != nil || f.Header == nil {
			return nil, nil, fs.ErrNotExist
		}
		f.Project, f.Name, f.Flat = e.Project, e.Name, e.Flat
		e.file = f
	}
	return e, e.file, nil
}

// List is the names of the trashed sessions and the trash's mtime.
func (ts *TrashList) List() ([]string, time.Time, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.current(); err != nil {
		return nil, time.Time{}, err
	}
	return ts.names, ts.mtime, nil
}
