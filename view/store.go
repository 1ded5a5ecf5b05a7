package view

import (
	"container/list"
	"errors"
	iofs "io/fs"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// store is the sessions directory as the mount sees it: the index of
// projects and sessions (package sessions keeps it, the watcher keeps it
// current), and the parsed sessions with their renderings, kept within one
// budget of bytes, the least recently used dropped first.
type store struct {
	x      *sessions.Index
	budget int64

	mu     sync.Mutex
	lru    *list.List // of *session, most recent first
	parsed map[string]*list.Element
	used   int64 // bytes held by the sessions in lru

	opened atomic.Int64 // sessions parsed (see Stats)
	// nodes counts the nodes the kernel holds (see nodeAdded).
	nodes atomic.Int64
	uses  atomic.Int64 // calls that took a parsed session (see Stats)
	// treeCounts counts the sizes of the /tree views counted (see Stats).
	treeCounts atomic.Int64
	// parentSteps counts the parent links the sessions' trees followed
	// (see Stats).
	parentSteps atomic.Int64

	// onParse is told the size of each session file parsed.
	onParse func(size int64)

	// out is what the kernel must be told (see Take).
	out *outbox

	// aheadHeld is what the sessions made ahead and not read yet hold,
	// pins those sessions (see room).
	aheadHeld int64
	pins      map[*session]bool
	counts    aheadCounts

	// listed are the session folders listed, oldest first (see shed).
	listedMu sync.Mutex
	listed   []Scope

	cwdCache    *cwdTree
	byNameCache map[string]*byName
	usage       usageCache
	plans       *plans
	trash       *trashState
}

// newStore keeps what it caches within three quarters of the budget: the
// rest is room for the collector and for work in flight.
func newStore(dir string, budget int64) *store {
	budget = budget / 4 * 3
	if budget < 1<<20 {
		budget = 1 << 20
	}
	return &store{x: sessions.NewIndex(dir), budget: budget, lru: list.New(), parsed: map[string]*list.Element{},
		out: newOutbox(), plans: newPlans(budget / 16), trash: &trashState{dir: dir}}
}

// update looks again at a path of the store that pifs itself changed (or
// is about to change), and queues what changed for the kernel.
func (st *store) update(path string) {
	st.out.put(st.x.Look(path))
}

// sessionKey names a session folder and its file.
type sessionKey struct{ project, name, path string }

// isParsed tells whether a session is in the cache.
func (st *store) isParsed(k sessionKey) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.parsed[k.path] != nil
}

// validProject tells whether a name can be a project folder in the mount.
func validProject(name string) bool {
	return name != "" && name != "." && name != ".." && !rootNames[name] && !strings.ContainsRune(name, 0)
}

// validSessionName tells whether a session file name (without .jsonl) can
// be a session folder: names of a project folder's own files are taken.
func validSessionName(name string) bool {
	return name != "" && !projectNames[name]
}

// projects lists the project folders, sorted, leaving out names the root
// uses itself.
func (st *store) projects() []string {
	all := st.x.Projects()
	out := all[:0]
	for _, p := range all {
		if validProject(p) {
			out = append(out, p)
		}
	}
	return out
}

func (st *store) hasProject(project string) bool {
	return validProject(project) && st.x.HasProject(project)
}

// sessionFiles lists a project's sessions, sorted by name.
func (st *store) sessionFiles(project string) ([]*sessions.File, error) {
	if !validProject(project) {
		return nil, ErrNotFound
	}
	all, err := st.x.Sessions(project)
	if err != nil {
		return nil, ErrNotFound
	}
	out := make([]*sessions.File, 0, len(all))
	for _, f := range all {
		if validSessionName(f.Name) {
			out = append(out, f)
		}
	}
	return out, nil
}

// meta returns the index's current version of a session file.
func (st *store) meta(project, name string) (*sessions.File, error) {
	if project == trashName {
		return st.trashedMeta(name)
	}
	if !validProject(project) || !validSessionName(name) {
		return nil, ErrNotFound
	}
	f, err := st.x.Lookup(project, name)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err // a file that is there but cannot be read says why
}

// activity is a session's latest activity: the time of its last entry that
// has a valid one, else the header's, else the file's mtime.
func activity(f *sessions.File) time.Time {
	if t, err := f.Tail(); err == nil && t.HasActivity {
		return msTime(t.Activity)
	}
	if t := tree.DateTime(f.Header.Timestamp); !t.IsZero() {
		return t
	}
	return time.Unix(0, f.Sig.Mtime)
}

func msTime(ms float64) time.Time {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// projectCwd is a project's working directory: the cwd of its newest
// session that names one ("" when none does).
func (st *store) projectCwd(project string, s *sight) (string, error) {
	files, err := st.sessionFiles(project)
	if err != nil {
		return "", err
	}
	for i := len(files) - 1; i >= 0; i-- {
		if files[i].Header.Cwd != "" && (s == nil || s.sees(files[i])) {
			return files[i].Header.Cwd, nil
		}
	}
	return "", nil
}

// sessionByID finds the session a by-id name shows: the first in project
// and name order that has the id.
func (st *store) sessionByID(id string) (*sessions.File, bool) {
	f, ok := st.x.ByID(id)
	if !ok || !validProject(f.Project) || !validSessionName(f.Name) {
		return nil, false
	}
	return f, true
}

// session is one parsed session file, kept up to date with the file.
type session struct {
	project, name, path string

	mu   sync.Mutex
	log  *sessions.Log
	tree *tree.Tree
	file *sessions.File // the index's version last read
	// renders are this version's renderings and derived tables, by key;
	// cost is what they and the parse hold, in bytes.
	renders map[string]any
	cost    int64
	evicted bool
	// steps are the last versions it was brought to (see grown).
	steps steps
	// ahead are the renderings made ahead of a walk and not read yet,
	// aheadN how many, and pin what it holds of the share of the budget
	// they may take (see room); ahead and pin are the store's (st.mu).
	ahead  map[string]bool
	aheadN atomic.Int32
	pin    *pin
}

// parseCost is what a parsed session holds besides its renderings: its
// bytes, their entries, the tree and the context at the leaf (measured:
// about twice the file).
func parseCost(size int64) int64 { return 2 * size }

// withSession runs fn with the parsed, up-to-date session, locked.
func (st *store) withSession(project, name string, fn func(s *session) error) error {
	return st.useSession(project, name, false, fn)
}

// withFreshSession is withSession for a write: the file is looked at
// again first, whatever the watcher said last.
func (st *store) withFreshSession(project, name string, fn func(s *session) error) error {
	return st.useSession(project, name, true, fn)
}

func (st *store) useSession(project, name string, fresh bool, fn func(s *session) error) error {
	st.uses.Add(1)
	f, err := st.meta(project, name)
	if err != nil {
		return err
	}
	if fresh {
		st.update(f.Path)
		if f, err = st.meta(project, name); err != nil {
			return err
		}
	}
	s := st.slot(project, name, f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := st.refresh(s, f); err != nil {
		st.drop(s)
		return err
	}
	return fn(s)
}

// slot returns the session's place in the cache, made (empty) if it has
// none, as the most recently used.
func (st *store) slot(project, name string, f *sessions.File) *session {
	st.mu.Lock()
	defer st.mu.Unlock()
	if el := st.parsed[f.Path]; el != nil {
		st.lru.MoveToFront(el)
		return el.Value.(*session)
	}
	s := &session{project: project, name: name, path: f.Path}
	st.parsed[f.Path] = st.lru.PushFront(s)
	return s
}

// drop forgets a parsed session whose file is gone or unreadable.
func (st *store) drop(s *session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if el := st.parsed[s.path]; el != nil && el.Value == s {
		st.lru.Remove(el)
		delete(st.parsed, s.path)
		st.used -= s.cost
		s.evicted = true
		st.lost(s)
	}
}

// refresh brings the session up to date with the index's version of its
// file. s.mu is held.
func (st *store) refresh(s *session, f *sessions.File) error {
	// The index's version of the file says when to look again (a change
	// event for a file that changed within the racy window gives a new
	// version even with the same signature; sessions.Log then checks the
	// bytes).
	if s.log != nil && s.file == f {
		return nil
	}
	prev, tr := s.file, s.tree
	if s.log == nil {
		l, err := sessions.Open(s.path)
		if err != nil {
			return err
		}
		st.opened.Add(1)
		s.log, s.tree, prev = l, tree.New(l), nil
		s.tree.CountSteps(&st.parentSteps)
	} else {
		n, size := len(s.log.Entries), s.log.Size()
		reset, err := s.log.Refresh()
		if err != nil {
			s.log = nil
			return err
		}
		if s.log.Header == nil {
			s.log = nil
			return ErrNotFound
		}
		switch {
		case reset || len(s.log.Entries) < n:
			s.tree = tree.New(s.log)
			s.tree.CountSteps(&st.parentSteps)
		case s.log.Size() == size:
			// Only the metadata changed: the renderings hold, but for
			// info.json, which shows the file's mtime. A version taken
			// again only because it was racy keeps its sizes too.
			if f.Sig == s.file.Sig {
				keepSizes(f, s.file)
			} else {
				delete(s.renders, infoName)
			}
			s.file = f
			s.steps.add(prev, f, false)
			return nil
		default:
			s.tree.Add(s.log.Entries[n:]...)
		}
	}
	s.file = f
	s.steps.add(prev, f, s.tree != tr)
	if s.aheadN.Load() > 0 {
		st.mu.Lock()
		st.lost(s)
		st.mu.Unlock()
	}
	s.renders = nil
	if s.log.Size() == f.Sig.Size {
		f.KnowName(s.tree.Name()) // by-name/ reads nothing more
	}
	st.account(s, parseCost(s.log.Size()))
	if st.onParse != nil {
		st.onParse(s.log.Size())
	}
	return nil
}

// account sets what a session holds and drops the least recently used
// others until the store is within its budget. s.mu is held.
func (st *store) account(s *session, cost int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.evicted {
		s.cost = cost
		return
	}
	st.used += cost - s.cost
	s.cost = cost
	st.trim(s)
}

// trim drops the least recently used sessions, but keep (and the most
// recent), while the cache holds more than its budget: the sessions, the
// usage reports' records (kept whatever is parsed), the context plans, the
// nodes the kernel holds and what the index holds of every session file
// (which it keeps whatever is parsed). st.mu is held.
func (st *store) trim(keep *session) {
	budget := st.budget - st.usage.held.Load() - st.plans.held.Load() - st.nodes.Load()*nodeBytes - st.x.Len()*indexFileBytes
	now := time.Now()
	for el := st.lru.Back(); st.used > budget && el != nil && el != st.lru.Front(); {
		old := el.Value.(*session)
		if old == keep {
			break
		}
		prev := el.Prev()
		if !st.evictable(old, now) {
			el = prev // made ahead of a walk, not read yet
			continue
		}
		st.lru.Remove(el)
		delete(st.parsed, old.path)
		st.used -= old.cost
		old.evicted = true
		st.lost(old)
		st.out.put(nil, sessionKey{old.project, old.name, old.path})
		el = prev
	}
}

// rendered returns a rendering or table of this version, making it once.
// What it holds counts against the budget; a session whose renderings
// alone would take more than a quarter of it keeps only the newest.
func rendered[T any](st *store, s *session, key string, size func(T) int64, make func() T) T {
	if v, ok := s.renders[key]; ok {
		st.read(s, key)
		return v.(T)
	}
	v := make()
	n := size(v) + int64(len(key)) + 64
	cost := s.cost
	if s.renders == nil || cost-parseCost(s.log.Size())+n > st.budget/4 {
		// What was made ahead of the walk stays until it is read.
		var kept int64
		s.renders, kept = st.aheadRenders(s)
		cost = parseCost(s.log.Size()) + kept
	}
	s.renders[key] = v
	st.account(s, cost+n)
	return v
}

func bytesSize(b []byte) int64 { return int64(len(b)) }

// projectMtime is a project folder's mtime; for a project only flat files
// name, the store's.
func (st *store) projectMtime(project string) (time.Time, error) {
	path, ok := st.x.ProjectFolder(project)
	if !ok {
		path = st.x.Dir()
	}
	return dirMtime(path)
}

// latest is the session whose file changed last, in a project or ("") in
// the whole store.
func (st *store) latest(project string, s *sight) (*sessions.File, bool) {
	var files []*sessions.File
	if project == "" {
		files = st.x.All()
	} else {
		var err error
		if files, err = st.sessionFiles(project); err != nil {
			return nil, false
		}
	}
	var best *sessions.File
	for _, f := range files {
		if !validProject(f.Project) || !validSessionName(f.Name) || (s != nil && !s.sees(f)) {
			continue
		}
		if best == nil || f.Sig.Mtime > best.Sig.Mtime || (f.Sig.Mtime == best.Sig.Mtime && f.Project+"/"+f.Name > best.Project+"/"+best.Name) {
			best = f
		}
	}
	return best, best != nil
}

// reread brings a held session up to date with its file after pifs wrote
// it: the writer reads its own write at once (the watcher tells the kernel
// later). s.mu is held.
func (st *store) reread(s *session) error {
	st.update(s.path)
	f, err := st.meta(s.project, s.name)
	if err != nil {
		return err
	}
	return st.refresh(s, f)
}

// parsedLeaf is the leaf of a session held parsed at the index's version
// of its file, without parsing one.
func (st *store) parsedLeaf(f *sessions.File) (string, bool) {
	st.mu.Lock()
	el := st.parsed[f.Path]
	st.mu.Unlock()
	if el == nil {
		return "", false
	}
	s := el.Value.(*session)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil || s.file != f {
		return "", false
	}
	return s.tree.LeafID(), true
}

// entryMtime is when an entry was written; zero when its timestamp is not
// a valid date.
func entryMtime(e *sessions.Entry) time.Time {
	return tree.DateTime(e.Timestamp)
}
