package nodes

import (
	"container/list"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// refreshEvery is how often a parsed session is checked against its file
// when it is looked at.
const refreshEvery = 200 * time.Millisecond

// store is the sessions directory as the mount sees it. Listing projects and
// sessions reads only the files' headers (and, for a session's mtime, its
// last lines); a session is parsed on the first look inside it, and at most
// cacheSize parsed sessions are kept, the least recently used dropped first.
type store struct {
	dir       string
	cacheSize int

	mu     sync.Mutex
	files  map[string]*fileMeta // by path
	lru    *list.List           // of *session, most recent first
	parsed map[string]*list.Element
}

func newStore(dir string, cacheSize int) *store {
	if cacheSize < 1 {
		cacheSize = 1
	}
	return &store{dir: dir, cacheSize: cacheSize, files: map[string]*fileMeta{}, lru: list.New(), parsed: map[string]*list.Element{}}
}

// fileSig tells whether a file changed: it changes with every append, and
// when the file is replaced.
type fileSig struct {
	ino, dev uint64
	size     int64
	mtime    time.Time
}

func sigOf(fi os.FileInfo) fileSig {
	s := fileSig{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino, s.dev = st.Ino, uint64(st.Dev)
	}
	return s
}

// fileMeta is what listing needs of a session file.
type fileMeta struct {
	sig    fileSig
	header *sessions.Header // nil when the file is not a session
	path   string
	mtime  time.Time
	// activity is the time of the last entry that has a valid timestamp,
	// else of the header, else the file's mtime. It takes reading the end
	// of the file, so it is found only when a stat asks for it.
	activityOnce sync.Once
	activity     time.Time
}

func (st *store) projectPath(project string) string { return filepath.Join(st.dir, project) }
func (st *store) sessionPath(project, name string) string {
	return filepath.Join(st.dir, project, name+".jsonl")
}

// validProject tells whether a name can be a project folder in the mount.
func validProject(name string) bool {
	return name != "" && name != "." && name != ".." && name != byIDName && name != newName && !strings.ContainsRune(name, 0)
}

// validSessionName tells whether a session file name (without .jsonl) can
// be a session folder: names of a project folder's own files are taken.
func validSessionName(name string) bool {
	return name != "" && name != cwdName && name != newName
}

// projects lists the project folders, sorted, leaving out names the root
// uses itself.
func (st *store) projects() ([]string, error) {
	all, err := (&sessions.Store{Dir: st.dir}).Projects()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, p := range all {
		if validProject(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func (st *store) hasProject(project string) bool {
	return validProject(project) && isDir(st.projectPath(project))
}

// sessionNames lists a project's session files (names without .jsonl),
// sorted, valid sessions only.
func (st *store) sessionNames(project string) ([]string, error) {
	if !validProject(project) {
		return nil, ErrNotFound
	}
	des, err := os.ReadDir(st.projectPath(project))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".jsonl")
		if !ok || !validSessionName(name) || de.IsDir() {
			continue
		}
		if m, err := st.meta(project, name); err == nil && m.header != nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// meta returns what listing needs of a session file, reading it only when it
// changed since the last call. It fails with ErrNotFound for a file that is
// missing or not a session.
func (st *store) meta(project, name string) (*fileMeta, error) {
	if !validProject(project) || !validSessionName(name) {
		return nil, ErrNotFound
	}
	path := st.sessionPath(project, name)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		st.mu.Lock()
		delete(st.files, path)
		st.mu.Unlock()
		return nil, ErrNotFound
	}
	sig := sigOf(fi)
	st.mu.Lock()
	old := st.files[path]
	st.mu.Unlock()
	if old != nil && old.sig == sig {
		if old.header == nil {
			return nil, ErrNotFound
		}
		return old, nil
	}
	m := &fileMeta{sig: sig}
	if old != nil && old.sig.ino == sig.ino && old.sig.dev == sig.dev && sig.size >= old.sig.size && old.header != nil {
		m.header = old.header // appends never change the header
	} else {
		m.header, err = readHeader(path)
		if err != nil {
			return nil, err
		}
	}
	m.path, m.mtime = path, fi.ModTime()
	st.mu.Lock()
	st.files[path] = m
	st.mu.Unlock()
	if m.header == nil {
		return nil, ErrNotFound
	}
	return m, nil
}

// readHeader reads a file's header; nil (and no error) when the file is
// gone or not a session.
func readHeader(path string) (*sessions.Header, error) {
	h, err := sessions.ReadHeader(path)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, sessions.ErrNotSession) {
		return nil, nil
	}
	return h, err
}

// lastActivity is the session's latest activity, found once per version
// of the file.
func (m *fileMeta) lastActivity() time.Time {
	m.activityOnce.Do(func() { m.activity = lastActivity(m.path, m.header, m.mtime) })
	return m.activity
}

// lastActivity finds the timestamp of the last entry that has a valid one,
// reading the file backwards; else the header's, else mtime.
func lastActivity(path string, h *sessions.Header, mtime time.Time) time.Time {
	if ms, ok := sessions.LastEntryTime(path); ok {
		return msTime(ms)
	}
	if ms := jsjson.DateValue(h.Timestamp); !math.IsNaN(ms) {
		return msTime(ms)
	}
	return mtime
}

func msTime(ms float64) time.Time {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// projectCwd is a project's working directory: the cwd of its newest
// session that names one ("" when none does).
func (st *store) projectCwd(project string) (string, error) {
	names, err := st.sessionNames(project)
	if err != nil {
		return "", err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if m, err := st.meta(project, names[i]); err == nil && m.header.Cwd != "" {
			return m.header.Cwd, nil
		}
	}
	return "", nil
}

// sessionsByID finds the sessions whose header has the given id: by-id
// shows the first in project and name order.
func (st *store) sessionByID(id string) (project, name string, ok bool) {
	st.eachSession(func(p, n string, m *fileMeta) bool {
		if m.header.ID == id {
			project, name, ok = p, n, true
			return false
		}
		return true
	})
	return
}

// eachSession calls fn for every valid session, in project and name order,
// until it returns false.
func (st *store) eachSession(fn func(project, name string, m *fileMeta) bool) {
	projects, _ := st.projects()
	for _, p := range projects {
		names, _ := st.sessionNames(p)
		for _, n := range names {
			m, err := st.meta(p, n)
			if err != nil {
				continue
			}
			if !fn(p, n, m) {
				return
			}
		}
	}
}

// versions numbers the states of parsed sessions, across the whole mount, so
// that a session parsed again after eviction never reuses a number.
var versions atomic.Uint64

// session is one parsed session file, kept up to date with the file.
type session struct {
	project, name, path string

	mu      sync.Mutex
	log     *sessions.Log
	tree    *tree.Tree
	sig     fileSig
	checked time.Time
	version uint64
	cache   map[string][]byte // rendered files of this version
}

// withSession runs fn with the parsed, up-to-date session, locked.
func (st *store) withSession(project, name string, fn func(s *session) error) error {
	return st.useSession(project, name, false, fn)
}

// withFreshSession is withSession for a write: the session is checked
// against its file first, however recently that was done.
func (st *store) withFreshSession(project, name string, fn func(s *session) error) error {
	return st.useSession(project, name, true, fn)
}

func (st *store) useSession(project, name string, force bool, fn func(s *session) error) error {
	if !validProject(project) || !validSessionName(name) {
		return ErrNotFound
	}
	path := st.sessionPath(project, name)
	st.mu.Lock()
	var s *session
	if el := st.parsed[path]; el != nil {
		st.lru.MoveToFront(el)
		s = el.Value.(*session)
	} else {
		s = &session{project: project, name: name, path: path}
		st.parsed[path] = st.lru.PushFront(s)
		for st.lru.Len() > st.cacheSize {
			old := st.lru.Remove(st.lru.Back()).(*session)
			delete(st.parsed, old.path)
		}
	}
	st.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(force); err != nil {
		st.drop(s)
		return err
	}
	return fn(s)
}

// drop forgets a parsed session whose file is gone or unreadable.
func (st *store) drop(s *session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if el := st.parsed[s.path]; el != nil && el.Value == s {
		st.lru.Remove(el)
		delete(st.parsed, s.path)
	}
}

// refresh brings the session up to date with its file, at most every
// refreshEvery unless forced. s.mu is held.
func (s *session) refresh(force bool) error {
	now := time.Now()
	if s.log != nil && !force && now.Sub(s.checked) < refreshEvery {
		return nil
	}
	s.checked = now
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrNotFound, s.path)
	}
	sig := sigOf(fi)
	if s.log != nil && sig == s.sig {
		return nil
	}
	if s.log == nil {
		l, err := sessions.Open(s.path)
		if err != nil {
			return err
		}
		s.log, s.tree = l, tree.New(l)
	} else {
		n := len(s.log.Entries)
		reset, err := s.log.Refresh()
		if err != nil {
			s.log = nil
			return err
		}
		if s.log.Header == nil {
			s.log = nil
			return ErrNotFound
		}
		if reset || len(s.log.Entries) < n {
			s.tree = tree.New(s.log)
		} else {
			s.tree.Add(s.log.Entries[n:]...)
		}
	}
	s.sig = sig
	s.version = versions.Add(1)
	s.cache = nil
	return nil
}

// cached returns the rendering of a view of this version, making it once.
func (s *session) cached(key string, make func() []byte) []byte {
	if b, ok := s.cache[key]; ok {
		return b
	}
	if s.cache == nil || len(s.cache) > 1024 {
		s.cache = map[string][]byte{}
	}
	b := make()
	s.cache[key] = b
	return b
}

// refreshParsed brings a session up to date now, if it is held parsed, so
// that what the kernel asks after an invalidation is current.
func (st *store) refreshParsed(project, name string) {
	path := st.sessionPath(project, name)
	st.mu.Lock()
	el := st.parsed[path]
	st.mu.Unlock()
	if el == nil {
		return
	}
	s := el.Value.(*session)
	s.mu.Lock()
	err := s.refresh(true)
	s.mu.Unlock()
	if err != nil {
		st.drop(s)
	}
}
