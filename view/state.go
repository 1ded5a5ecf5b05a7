package view

import (
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/access"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

// What the View keeps between calls, besides the index and the cache: what
// each caller sees (sights), the by-name/ and by-cwd/ tables of the index's
// current version, and the removals under way. Only types and their own
// methods: nothing here calls into the views.

// session is one parsed session of the store, held by the cache.
type session = cache.Session

// What each caller sees of the store (docs/guarantees.md, "Who may do
// what"). On a mount other users may enter (Options.Shared, from
// --allow-other), what a listing, a link or a report tells about a session
// (its id, name, cwd, tokens, cost, that it is the latest) is shown only
// to a caller who may read that session's file and search its folder, as
// they would need to learn it from the store. The kernel enforces the
// modes of the session folders themselves; the folders that gather
// sessions from everywhere (by-id/, by-cwd/, by-name/, latest, usage/, a
// project's cwd) are filtered here.
//
// A caller's sight is worked out once per version of the index from what
// the index holds (the owner and mode of each file, one stat per folder),
// and shared by every caller of the same uid, gid and groups: a report or
// a listing per caller filters what is cached, it never reads the store
// again. A value that depends on the caller (seenBy) is told to the
// kernel for no longer than the request (see PerCaller), and one whose
// content does (latest, the reports, cwd) gets an inode number of its
// sight's own, so that the kernel never gives one caller's pages, size or
// link target to another.

// sight is what one identity may see of the store's sessions at one
// version of the index.
type sight struct {
	// all: every session is visible (root, or a user who may read them
	// all); then hidden is empty and key 0.
	all bool
	// hidden are the paths of the sessions not visible.
	hidden map[string]bool
	// key tells sights apart: equal keys hide the same sessions.
	key uint64

	cwdOnce sync.Once
	cwds    map[string]bool // the by-cwd/ paths that lead to a visible session

	// who is whose sight it is; nil for everything, the sight of root
	// (or of anyone on a mount only its user may enter).
	who *access.Who
	// trashed tells, per trash directory, whether who may search its
	// files/ folder, once asked.
	trashMu sync.Mutex
	trashed map[string]bool
}

// everything is the sight of a caller who sees all.
var everything = &sight{all: true}

// sees tells whether the session of f is visible.
func (s *sight) sees(f *sessions.File) bool { return s.all || !s.hidden[f.Path] }

// uid is whose sight it is, in decimal; "" for the sight of everything.
func (s *sight) uid() string {
	if s.who == nil {
		return ""
	}
	return strconv.FormatUint(uint64(s.who.Uid), 10)
}

// seesCwd tells whether a by-cwd/ path leads to a visible session.
func (s *sight) seesCwd(x *sessions.Index, path string) bool {
	if s.all {
		return true
	}
	s.cwdOnce.Do(func() {
		s.cwds = map[string]bool{"/": true}
		for _, f := range x.All() {
			cwd := f.Header.Cwd
			if !s.sees(f) || !filepath.IsAbs(cwd) {
				continue
			}
			for p := filepath.Clean(cwd); !s.cwds[p]; p = filepath.Dir(p) {
				s.cwds[p] = true
			}
		}
	})
	return s.cwds[path]
}

// tag is what a per-caller inode number adds: nothing for a caller who
// sees all, so that they share the inode every other mount gives.
func (s *sight) tag() []string {
	if s.all {
		return nil
	}
	return []string{"sight", strconv.FormatUint(s.key, 16)}
}

// sights caches the sights of the identities met at the index's current
// version.
type sights struct {
	mu  sync.Mutex
	gen uint64
	by  map[string]*sight
}

// maxSights bounds the identities kept at once.
const maxSights = 64

// sightReports are the usage reports over the sessions one sight sees.
type sightReports struct {
	reports *usage.Reports
	mtime   map[string]time.Time
}

// byName is a project's sessions by the file name of their name, made
// again only after the index changed. Finding a name reads the session's
// session_info lines once per version of its file.
type byName struct {
	gen   uint64
	names map[string]*sessions.File
}

// byNames are the projects' byName, by project.
type byNames struct {
	mu sync.Mutex
	by map[string]*byName
}

// cwdTrees keeps the tree of the index's current version.
type cwdTrees struct {
	mu sync.Mutex
	t  *cwdTree
}

// cwdTree is the store's sessions by working directory: a folder per path
// that is a session's cwd or above one.
type cwdTree struct {
	gen   uint64
	nodes map[string]*cwdNode // by absolute path
}

type cwdNode struct {
	subs     map[string]bool
	sessions map[string]*sessions.File // by name; the first in project order
	mtime    time.Time
}

func (t *cwdTree) node(path string) *cwdNode {
	n := t.nodes[path]
	if n == nil {
		n = &cwdNode{subs: map[string]bool{}, sessions: map[string]*sessions.File{}}
		t.nodes[path] = n
	}
	return n
}

// removals remembers, per process, the session it was last refused
// removing something of.
type removals struct {
	mu   sync.Mutex
	last map[uint32]removal
}

type removal struct {
	session string
	at      time.Time
}

const removalWindow = 10 * time.Second

// refused remembers that c was refused removing something of s, and tells
// whether that is the first refusal of this removal. A caller without a
// process (pid 0) is not remembered.
func (rs *removals) refused(c Caller, key string) bool {
	if c.Pid == 0 {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.last == nil {
		rs.last = map[uint32]removal{}
	}
	now := time.Now()
	for p, r := range rs.last {
		if now.Sub(r.at) > removalWindow {
			delete(rs.last, p)
		}
	}
	first := rs.last[c.Pid].session != key
	rs.last[c.Pid] = removal{key, now}
	return first
}

// removing tells whether the caller is removing the session wholesale.
func (rs *removals) removing(c Caller, key string) bool {
	if c.Pid == 0 {
		return false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.last[c.Pid]
	return ok && r.session == key && time.Since(r.at) <= removalWindow
}
