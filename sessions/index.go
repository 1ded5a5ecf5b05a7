package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/internal/persist"
)

// Index is a store as a mount lists it: its projects, their sessions known
// by header, and sessions by id. It reads the store's folder the first time
// projects are listed, a project's folder the first time the project is
// listed, and a file's header once per version of the file (an append only
// costs a stat). Afterwards it answers from memory: Update and Poll, driven
// by a Watcher, keep it current, and report what changed.
//
// A store holds both of pi's layouts: one folder per working directory
// (`--home-user-proj--/`), and session files flat at the top of a directory
// the user chose. A flat file is listed in the project folder pi would give
// its header's cwd.
type Index struct {
	dir string

	mu      sync.Mutex
	loaded  bool // the store's folder was read
	missing bool // the store's folder does not exist (yet)
	// rootRead is the store folder's signature when it was last read
	// (see project.read).
	rootRead Sig
	projects map[string]*project
	flat     map[string]*File // files at the top of the store, by name
	byID     map[string][]*File
	all      bool // every project folder was read
	// relook: the look under way (Update, Poll) gives a racy file a new
	// version even when its signature is the same. Guarded by mu.
	relook bool
	// ids are byID's keys, sorted for lookups by prefix (see ByIDPrefix).
	ids prefixIndex
	// lin is who forked whom (see Parent and Forks).
	lin lineage
	// onDir is called with each folder whose contents the index relies on
	// (the store, every project it read from), so a watcher can watch it.
	onDir func(dir string)
	// cache keeps what the index learns of files across mounts (see Keep).
	cache *persist.Cache
	// kept is what the files of the index share of it (see keeper).
	kept *keeper
	// writes are the write locks of the files pifs writes (LockWrites).
	writes writeLocks

	counts struct{ stats, headers, folders, kept, reads atomic.Int64 }
	files  atomic.Int64  // files held (see Sweep)
	gen    atomic.Uint64 // counts changes to the sessions held
	// changed counts the looks that found changes (see Changed).
	changed atomic.Uint64
	// statCost is what a poll's stat costs in CPU, in ns (see Sweep).
	statCost atomic.Int64
	// sweepPart is the share of the files the next PollTick looks at, of
	// sweepParts. Guarded by mu.
	sweepPart, sweepParts int
}

// Gen changes whenever a session is added, removed or changed.
func (x *Index) Gen() uint64 { return x.gen.Load() }

type project struct {
	name   string
	folder bool // a folder of the store (else only flat files name it)
	loaded bool // the folder was read
	// read is the folder's signature when it was last read: while it is
	// the same (and was not racy), the folder holds the same names.
	read   Sig
	files  map[string]*File
	sorted []*File // nil when files changed
}

// File is one session file as the index knows it: a version of the file,
// replaced by a new File when the file changes.
type File struct {
	// Project is the project folder it is listed in, Name its file name
	// without .jsonl.
	Project, Name, Path string
	// Flat tells that the file is at the top of the store (pi's layout for a
	// sessions directory the user chose).
	Flat   bool
	Sig    Sig
	Header *Header // nil: not a session
	// Err is why a file that is there could not be read (EACCES, EIO…):
	// looking it up gives that error, not "no such file".
	Err error
	// Mode, Uid and Gid are the file's permissions and owner.
	Mode     os.FileMode
	Uid, Gid uint32
	// racy tells that the file had changed within racyWindow when this
	// version was taken: a rewrite of the same size in the same timestamp
	// tick would leave the same signature.
	racy bool
	// slot spreads the files over polls (see PollTick).
	slot uint32

	tailOnce sync.Once
	tail     Tail
	tailErr  error

	// names is the session's name, once asked for or known (nil until
	// then: most files never are, and a File is kept for every session of
	// the store).
	names atomic.Pointer[nameState]

	memoMu sync.Mutex
	memo   any

	keptState
}

// nameState is what a File knows of its session's name.
type nameState struct {
	once sync.Once
	scan nameScan
	err  error
	done atomic.Bool
	from nameScan // an earlier version's scan, when the file only grew
}

// nameState is the file's, made at the first call.
func (f *File) nameState() *nameState {
	if n := f.names.Load(); n != nil {
		return n
	}
	f.names.CompareAndSwap(nil, &nameState{})
	return f.names.Load()
}

// scannedName is the name an earlier version's completed scan found, to
// go on from.
func (f *File) scannedName() (nameScan, bool) {
	n := f.names.Load()
	if n == nil || !n.done.Load() || n.err != nil {
		return nameScan{}, false
	}
	return n.scan, true
}

// Racy tells that the file had changed so shortly before this version was
// taken that a rewrite of the same size within the same timestamp tick
// would not change its signature: only its bytes tell it is the same.
func (f *File) Racy() bool { return f.racy }

// Tail reads the end of the file once per version: the leaf and the last
// activity.
func (f *File) Tail() (Tail, error) {
	f.tailOnce.Do(func() {
		var version float64 = CurrentVersion
		if f.Header != nil {
			version = f.Header.Version
		}
		f.CountRead()
		f.tail, f.tailErr = ReadTail(f.Path, version)
		if f.tailErr == nil {
			f.keep(map[string][]byte{factTail: encodeTail(f.tail)})
		}
	})
	return f.tail, f.tailErr
}

// Memo is the value the caller keeps with this version of the file (what
// it learned of it that costs to learn again): made by make at the first
// call, and dropped with the version, however long the caller's other
// caches keep it. With make nil, it is nil until made.
func (f *File) Memo(make func() any) any {
	f.memoMu.Lock()
	defer f.memoMu.Unlock()
	if f.memo == nil && make != nil {
		f.memo = make()
	}
	return f.memo
}

// Change is one difference the index found: a session that appeared (Old
// nil), went away (New nil) or changed; or, with Name "", a project folder
// that appeared or went away.
type Change struct {
	Project, Name string
	Old, New      *File
}

// NewIndex indexes the store at dir. Nothing is read until asked.
func NewIndex(dir string) *Index {
	x := &Index{dir: dir, projects: map[string]*project{}, flat: map[string]*File{}, byID: map[string][]*File{}}
	x.kept = &keeper{reads: &x.counts.reads}
	return x
}

// Dir is the store's folder.
func (x *Index) Dir() string { return x.dir }

// OnDir sets the function told about every folder the index reads from.
func (x *Index) OnDir(fn func(dir string)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.onDir = fn
}

// Stats are counts of the work an index has done: the files it stat'ed,
// the headers it read, the times it read a project folder, the files it
// took from the persistent cache without reading them (FromCache), and the
// times files' bytes were read besides their headers: tails, name scans
// and the readers that tell File.CountRead (Reads).
type Stats struct {
	Stats, Headers, FoldersRead, FromCache, Reads int64
}

// Stats returns the index's counts.
func (x *Index) Stats() Stats {
	return Stats{x.counts.stats.Load(), x.counts.headers.Load(), x.counts.folders.Load(), x.counts.kept.Load(), x.counts.reads.Load()}
}

// Len is how many session files the index holds.
func (x *Index) Len() int64 { return x.files.Load() }

// rootMissing tells that the store's folder does not exist (yet).
func (x *Index) rootMissing() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadRoot()
	return x.missing
}

// Projects lists the project folders, sorted: the store's folders and the
// folders pi would give the cwd of its flat files.
func (x *Index) Projects() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadRoot()
	var out []string
	for name, p := range x.projects {
		if p.shown() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (p *project) shown() bool {
	if p.folder {
		return true
	}
	for _, f := range p.files {
		if f.Header != nil {
			return true
		}
	}
	return false
}

// HasProject tells whether a project is listed.
func (x *Index) HasProject(name string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadRoot()
	p := x.projects[name]
	return p != nil && p.shown()
}

// ProjectFolder is whether a project has a folder of its own in the store
// (else only flat files name it), and its path.
func (x *Index) ProjectFolder(name string) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadRoot()
	p := x.projects[name]
	return filepath.Join(x.dir, name), p != nil && p.folder
}

// Sessions lists a project's sessions, sorted by name.
func (x *Index) Sessions(project string) ([]*File, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadRoot()
	p := x.projects[project]
	if p == nil || !p.shown() {
		return nil, fs.ErrNotExist
	}
	x.loadProject(p)
	return p.list(), nil
}

// Listed lists a project's sessions, sorted by name, if its folder was
// read already (ok false else): it never reads the store.
func (x *Index) Listed(project string) (files []*File, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.projects[project]
	if !x.loaded || p == nil || !p.shown() || (p.folder && !p.loaded) {
		return nil, false
	}
	return p.list(), true
}

func (p *project) list() []*File {
	if p.sorted == nil {
		p.sorted = make([]*File, 0, len(p.files))
		for _, f := range p.files {
			if f.Header != nil {
				p.sorted = append(p.sorted, f)
			}
		}
		sort.Slice(p.sorted, func(i, j int) bool { return p.sorted[i].Name < p.sorted[j].Name })
	}
	return p.sorted
}

// Lookup finds one session. In a project not listed yet, only that file is
// read.
func (x *Index) Lookup(project, name string) (*File, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadRoot()
	p := x.projects[project]
	if p == nil {
		return nil, fs.ErrNotExist
	}
	f := p.files[name]
	if f == nil && p.folder && validFileName(name) {
		// Not known: in a project not listed yet, read just this file; in
		// one listed, a file created a moment ago, before its change event.
		x.watch(filepath.Join(x.dir, project))
		f = x.load(filepath.Join(x.dir, project, name+".jsonl"), nil)
		if f != nil {
			f.Project, f.Name = project, nameIn(f.Path, name)
			x.put(p, f)
		}
	}
	if f != nil && f.Header == nil && f.Err != nil {
		return nil, f.Err
	}
	if f == nil || f.Header == nil {
		return nil, fs.ErrNotExist
	}
	return f, nil
}

// ByID finds the session with a given id; when several files share it, the
// first in project and name order. The first call reads every project.
func (x *Index) ByID(id string) (*File, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadAll()
	fs := x.byID[id]
	if len(fs) == 0 {
		return nil, false
	}
	return fs[0], true
}

// All returns every session, in project and name order. The first call
// reads every project.
func (x *Index) All() []*File {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadAll()
	names := make([]string, 0, len(x.projects))
	for n := range x.projects {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*File
	for _, n := range names {
		out = append(out, x.projects[n].list()...)
	}
	return out
}

// Update looks again at one path the store changed at (a file or a folder,
// as a watcher reports it) and returns what changed. A file whose
// signature is the same but was taken within racyWindow of its last change
// is given a new version all the same (see File.racy): the event may be of
// a rewrite in the same timestamp tick, which readers then check by its
// bytes.
func (x *Index) Update(path string) []Change {
	return x.counted(x.update(path, true))
}

// Look is Update for a path pifs itself just wrote (or is about to): a
// signature that did not change is the same version, since pifs knows what
// it wrote.
func (x *Index) Look(path string) []Change {
	return x.counted(x.update(path, false))
}

// counted counts the looks that found changes (see Changed).
func (x *Index) counted(changes []Change) []Change {
	if len(changes) > 0 {
		x.changed.Add(1)
	}
	return changes
}

// Changed counts the looks again (Update, Look, Poll) that found the store
// changed; the first reading of a folder is not a change. A reader that
// saw it move while it read may have read something older than the
// change's notification.
func (x *Index) Changed() uint64 { return x.changed.Load() }

func (x *Index) update(path string, relook bool) []Change {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.relook = relook
	defer func() { x.relook = false }()
	if !x.loaded {
		return nil
	}
	path = filepath.Clean(path)
	if path == x.dir || !within(path, x.dir) {
		return x.scanRoot()
	}
	rel, _ := filepath.Rel(x.dir, path)
	parts := strings.Split(rel, string(filepath.Separator))
	switch len(parts) {
	case 1:
		if strings.HasSuffix(parts[0], ".jsonl") {
			if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
				return x.updateFlat(parts[0])
			}
		}
		return x.scanRoot()
	case 2:
		name, ok := strings.CutSuffix(parts[1], ".jsonl")
		p := x.projects[parts[0]]
		if !ok || p == nil || !p.folder {
			if p == nil {
				return x.scanRoot()
			}
			return nil
		}
		if !p.loaded && p.files[name] == nil {
			return nil // nobody looked: it is read when someone does
		}
		return x.updateFile(p, name)
	}
	return nil
}

// Poll looks at everything the index holds, for stores where no change
// events come (network file systems), and returns what changed.
func (x *Index) Poll() []Change { return x.poll(0, 1) }

// PollTick is Poll spread over the ticks of a poll every interval: each
// tick looks at every folder (new and removed sessions), every file
// changed in the last hotWindow (a session in use) or not trusted yet,
// and a share of the others, so that every file is looked at within a
// sweep (see Sweep) and polling a large store costs pollBudget of a core.
// The share is chosen when a sweep starts, so that a sweep looks at every
// file once.
func (x *Index) PollTick(interval time.Duration) []Change {
	x.mu.Lock()
	if x.sweepPart == 0 {
		x.sweepParts = int(x.Sweep(interval) / interval)
	}
	part, parts := x.sweepPart, max(x.sweepParts, 1)
	x.sweepPart = (part + 1) % parts
	x.mu.Unlock()
	return x.poll(part, parts)
}

// hotWindow: a file changed within it is in use (pi appends to it) and
// looked at on every poll.
const hotWindow = 10 * time.Minute

// pollBudget is the share of a core that a poll's thread may take, so
// that polling costs under 1% with the runtime's share (the garbage a
// poll leaves, the garbage collector's passes over what the mount holds,
// the timer: 0.1–0.4% of a core more, measured with 10,000 sessions): a
// stat costs 3–5 µs of CPU here (a VM, where every system call costs
// 1.2 µs), so that looking at 10,000 files a second would take 3–5% of a
// core; within the budget, they are looked at every 6–12 s, and every
// second where a stat costs 0.5 µs. At 0.6% the whole came to 1.03%.
const pollBudget = 0.005

// maxSweep bounds a sweep where the budget would make it longer (a store
// so large, or stats so dear, that 1% of a core cannot look at it in a
// minute).
const maxSweep = time.Minute

// defaultStatCost is what a stat is taken to cost before a poll has
// measured it.
const defaultStatCost = 4 * time.Microsecond

// Sweep is how long polling every interval takes to look at every file
// the index holds: as many files each interval as pollBudget pays for, at
// what a poll cost per file it stat'ed when last measured (its share of
// the work every poll does, such as choosing the files, included); one
// interval at least, maxSweep at most.
func (x *Index) Sweep(interval time.Duration) time.Duration {
	if interval <= 0 {
		return interval
	}
	cost := time.Duration(x.statCost.Load())
	if cost <= 0 {
		cost = defaultStatCost
	}
	n := x.files.Load()
	sweep := min(time.Duration(float64(time.Duration(n)*cost)/pollBudget), maxSweep)
	parts := (sweep + interval - 1) / interval
	return max(parts, 1) * interval
}

// noteStatCost takes a poll's measure of what a stat cost: n stats in cpu.
func (x *Index) noteStatCost(cpu time.Duration, n int) {
	if n < 16 || cpu <= 0 {
		return // too few to tell from the clock's own cost
	}
	c := int64(cpu) / int64(n)
	if old := x.statCost.Load(); old > 0 {
		c = (3*old + c) / 4
	}
	x.statCost.Store(c)
}

// poll looks at the store's folders, at the files in use, and at the
// other files whose slot is part (of parts). The files are stat'ed
// without the index's lock, so that a poll of a large store holds up no
// lookup for its thousands of stats; the lock is taken to look again at
// what changed. They are stat'ed by name in their folder (no path walk,
// nothing allocated), on one thread whose CPU time measures what a stat
// costs (see Sweep).
func (x *Index) poll(part, parts int) []Change {
	type look struct {
		p          *project
		dir        string
		read       Sig
		files      []*File // due this time
		dirChanged bool
		changed    []*File
	}
	now := time.Now().UnixNano()
	due := func(f *File) bool {
		return parts <= 1 || f.Err != nil || f.racy || now-f.Sig.Mtime < int64(hotWindow) ||
			int(f.slot%uint32(parts)) == part
	}
	var looks []*look
	loaded, stats := false, 0
	// What this costs, choosing the files included, is what a sweep is
	// budgeted by (see Sweep).
	cpu := onThread(func() {
		x.mu.Lock()
		loaded = x.loaded
		for _, p := range x.projects {
			if !p.folder || !p.loaded {
				continue
			}
			l := &look{p: p, dir: filepath.Join(x.dir, p.name), read: p.read}
			for _, f := range p.files {
				if !f.Flat && due(f) {
					l.files = append(l.files, f)
				}
			}
			looks = append(looks, l)
		}
		x.mu.Unlock()
		for _, l := range looks {
			// A folder's times change when a name in it is added, removed
			// or renamed (see scanProject).
			d, err := openDir(l.dir)
			if err != nil {
				l.dirChanged = true
				continue
			}
			sig, typ, err := d.stat("")
			stats++
			if l.read == (Sig{}) || err != nil || typ != syscall.S_IFDIR || sig != l.read {
				l.dirChanged = true
				d.close()
				continue
			}
			for _, f := range l.files {
				x.counts.stats.Add(1)
				if f.Err != nil || f.racy {
					l.changed = append(l.changed, f)
					continue
				}
				stats++
				if sig, typ, err := d.stat(f.base()); err != nil || typ != syscall.S_IFREG || sig != f.Sig {
					l.changed = append(l.changed, f)
				}
			}
			d.close()
		}
	})
	if !loaded {
		return nil
	}
	x.noteStatCost(cpu, stats)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.relook = true
	defer func() { x.relook = false }()
	changes := x.scanRootDue(due)
	for _, l := range looks {
		p := l.p
		if x.projects[p.name] != p || !p.folder || !p.loaded {
			continue // the folder went away meanwhile: scanRoot said so
		}
		if l.dirChanged || p.read != l.read {
			changes = append(changes, x.scanProject(p)...)
			continue
		}
		for _, f := range l.changed {
			if p.files[f.Name] == f {
				changes = append(changes, x.updateFile(p, f.Name)...)
			}
		}
	}
	for _, p := range x.projects {
		if p.folder && !p.loaded {
			// Files looked up in a folder nobody listed: few.
			for name := range p.files {
				changes = append(changes, x.updateFile(p, name)...)
			}
		}
	}
	return x.counted(changes)
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func validFileName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "/\x00")
}

func (x *Index) watch(dir string) {
	if x.onDir != nil {
		x.onDir(dir)
	}
}

// loadRoot reads the store's folder once.
func (x *Index) loadRoot() {
	if !x.loaded {
		x.scanRoot()
	}
}

// loadProject reads a project's folder once.
func (x *Index) loadProject(p *project) {
	if p.folder && !p.loaded {
		x.scanProject(p)
	}
}

func (x *Index) loadAll() {
	x.loadRoot()
	if x.all {
		return
	}
	for _, p := range x.projects {
		x.loadProject(p)
	}
	x.all = true
}

// scanRoot reads the store's folder: project folders and flat files.
func (x *Index) scanRoot() []Change { return x.scanRootDue(nil) }

// scanRootDue is scanRoot that looks again only at the flat files due
// says (nil: all), and reads the folder again only when its times changed
// since a read it can trust.
func (x *Index) scanRootDue(due func(*File) bool) []Change {
	x.watch(x.dir)
	sig, typ, serr := statSig(x.dir)
	if due != nil && x.loaded && serr == nil && typ == syscall.S_IFDIR && x.rootRead != (Sig{}) && sig == x.rootRead {
		var changes []Change
		for name, f := range x.flat {
			if due(f) {
				changes = append(changes, x.updateFlat(name+".jsonl")...)
			}
		}
		return changes
	}
	x.rootRead = Sig{}
	if serr == nil && typ == syscall.S_IFDIR && !racy(sig) {
		x.rootRead = sig // taken before the read: a change during it shows next time
	}
	des, err := os.ReadDir(x.dir)
	x.loaded = true
	x.missing = errors.Is(err, fs.ErrNotExist)
	if err != nil {
		des = nil
		x.rootRead = Sig{}
	}
	var changes []Change
	folders := map[string]bool{}
	flats := map[string]bool{}
	for _, de := range des {
		name := de.Name()
		isDir := de.IsDir()
		if de.Type()&os.ModeSymlink != 0 {
			fi, err := os.Stat(filepath.Join(x.dir, name))
			isDir = err == nil && fi.IsDir()
		}
		switch {
		case isDir:
			folders[name] = true
		case strings.HasSuffix(name, ".jsonl"):
			flats[name] = true
		}
	}
	for name := range folders {
		p := x.projects[name]
		if p == nil {
			p = &project{name: name, files: map[string]*File{}}
			x.projects[name] = p
		}
		if !p.folder {
			p.folder = true
			changes = append(changes, Change{Project: name})
			if x.all {
				changes = append(changes, x.scanProject(p)...)
			}
		}
	}
	for name, p := range x.projects {
		if p.folder && !folders[name] {
			// The folder went away: its own files with it.
			p.folder, p.loaded = false, false
			for n, f := range p.files {
				if !f.Flat {
					x.remove(p, n)
					if f.Header != nil {
						changes = append(changes, Change{Project: name, Name: n, Old: f})
					}
				}
			}
			changes = append(changes, Change{Project: name})
		}
	}
	var kept map[string]*persist.Record
	for name := range flats {
		if x.flat[strings.TrimSuffix(name, ".jsonl")] == nil {
			kept = x.cache.Folder(x.dir) // as scanProject reads a folder's
			break
		}
	}
	for name := range flats {
		if f := x.flat[strings.TrimSuffix(name, ".jsonl")]; f != nil && due != nil && !due(f) {
			continue
		}
		changes = append(changes, x.updateFlatKept(name, kept)...)
	}
	for name := range x.flat {
		if !flats[name+".jsonl"] {
			changes = append(changes, x.updateFlat(name+".jsonl")...)
		}
	}
	x.dropEmpty()
	return changes
}

// dropEmpty forgets projects that have neither a folder nor files.
func (x *Index) dropEmpty() {
	for name, p := range x.projects {
		if !p.folder && len(p.files) == 0 {
			delete(x.projects, name)
		}
	}
}

// scanProject reads a project's folder.
func (x *Index) scanProject(p *project) []Change {
	dir := filepath.Join(x.dir, p.name)
	x.watch(dir) // before reading, so no file created meanwhile is missed
	var names []string
	// A folder's mtime and ctime change when a name in it is added,
	// removed or renamed: while they are as at the last read, its files
	// are the ones known, and only they are looked at, so that polls of a
	// large store read no folder that did not change. A read made within
	// the racy window of the folder's last change is not trusted (a name
	// added in the same clock tick leaves the times as they were): the
	// next look reads it again.
	sig, typ, err := statSig(dir)
	if p.loaded && err == nil && typ == syscall.S_IFDIR && p.read != (Sig{}) && sig == p.read {
		for name, f := range p.files {
			if !f.Flat {
				names = append(names, name)
			}
		}
	} else {
		x.counts.folders.Add(1)
		p.read = Sig{}
		if err == nil && typ == syscall.S_IFDIR && !racy(sig) {
			p.read = sig // taken before the read: a change during it shows next time
		}
		des, err := os.ReadDir(dir)
		p.loaded = true
		if err != nil {
			des = nil
			p.read = Sig{}
		}
		seen := map[string]bool{}
		for _, de := range des {
			name, ok := strings.CutSuffix(de.Name(), ".jsonl")
			if !ok || de.IsDir() {
				continue
			}
			if old := p.files[name]; old != nil && old.Flat {
				continue // a flat file of the same name keeps the place
			}
			seen[name] = true
			names = append(names, name)
		}
		for name, f := range p.files {
			if !f.Flat && !seen[name] {
				names = append(names, name)
			}
		}
	}
	// Each file is a stat, and a header read when it is new or rewritten:
	// on every core (ls -l by-id of 10,000 sessions reads 10,000 headers).
	olds := make([]*File, len(names))
	news := make([]*File, len(names))
	unknown := false
	for i, name := range names {
		olds[i] = p.files[name]
		unknown = unknown || olds[i] == nil
	}
	// The persistent cache's records of the folder, read at once for the
	// files not known yet (a new mount): one pass, not a look-up each.
	var kept map[string]*persist.Record
	if unknown {
		kept = x.cache.Folder(dir)
	}
	par.Each(len(names), func(i int) {
		path := ""
		if olds[i] != nil && !olds[i].Flat {
			path = olds[i].Path
		} else {
			path = filepath.Join(x.dir, p.name, names[i]+".jsonl")
		}
		news[i] = x.loadKept(path, olds[i], kept)
	})
	var changes []Change
	for i, name := range names {
		changes = append(changes, x.applyFile(p, name, olds[i], news[i])...)
	}
	return changes
}

// updateFile looks again at a project folder's file.
func (x *Index) updateFile(p *project, name string) []Change {
	old := p.files[name]
	if old != nil && old.Flat {
		return nil
	}
	return x.applyFile(p, name, old, x.load(filepath.Join(x.dir, p.name, name+".jsonl"), old))
}

// applyFile takes a project folder's file as load found it.
func (x *Index) applyFile(p *project, name string, old, f *File) []Change {
	if old != nil && old.Flat {
		return nil
	}
	if f == old {
		return nil
	}
	if f == nil {
		x.remove(p, name)
	} else {
		f.Project, f.Name = p.name, nameIn(f.Path, name)
		x.put(p, f)
	}
	return changeOf(p.name, name, old, f)
}

// updateFlat looks again at a file at the top of the store; it may move to
// another project when its header changed.
func (x *Index) updateFlat(file string) []Change { return x.updateFlatKept(file, nil) }

// updateFlatKept is updateFlat given the persistent cache's records of the
// store's folder (see loadKept).
func (x *Index) updateFlatKept(file string, kept map[string]*persist.Record) []Change {
	name := strings.TrimSuffix(file, ".jsonl")
	old := x.flat[name]
	f := x.loadKept(filepath.Join(x.dir, file), old, kept)
	if f == old {
		return nil
	}
	var changes []Change
	if old != nil {
		if p := x.projects[old.Project]; p != nil && p.files[name] == old {
			x.remove(p, name)
		}
		delete(x.flat, name)
	}
	if f != nil && f.Header != nil {
		f.Flat, f.Name, f.Project = true, nameIn(f.Path, name), ProjectFolder(f.Header.Cwd)
		x.flat[name] = f
		p := x.projects[f.Project]
		if p == nil {
			p = &project{name: f.Project, files: map[string]*File{}}
			x.projects[f.Project] = p
			changes = append(changes, Change{Project: f.Project})
		}
		x.put(p, f)
	}
	switch {
	case old != nil && f != nil && f.Header != nil && old.Project == f.Project:
		changes = append(changes, changeOf(f.Project, name, old, f)...)
	default:
		if old != nil {
			changes = append(changes, changeOf(old.Project, name, old, nil)...)
		}
		if f != nil && f.Header != nil {
			changes = append(changes, changeOf(f.Project, name, nil, f)...)
		}
	}
	x.dropEmpty()
	return changes
}

func changeOf(project, name string, old, f *File) []Change {
	if old != nil && old.Header == nil {
		old = nil
	}
	if f != nil && f.Header == nil {
		f = nil
	}
	if old == nil && f == nil {
		return nil
	}
	return []Change{{Project: project, Name: name, Old: old, New: f}}
}

// load returns the file at path as it is now: old when unchanged, a new
// File (Header nil when it is not a session), or nil when it is gone.
func (x *Index) load(path string, old *File) *File { return x.loadKept(path, old, nil) }

// loadKept is load given the persistent cache's records of the file's
// folder (see persist.Cache.Folder); with kept nil, the cache is asked
// for the file's own.
func (x *Index) loadKept(path string, old *File, kept map[string]*persist.Record) *File {
	x.counts.stats.Add(1)
	if old != nil && old.Err == nil {
		// The common case, a file as it was: one stat, nothing allocated.
		sig, typ, err := statSig(path)
		if err == nil && typ == syscall.S_IFREG && old.Sig == sig && (!old.racy || !x.relook) {
			return old
		}
	}
	// A file new to the index, with no persistent cache to take it from,
	// is opened straight away: its descriptor's stat is the version read.
	var fd *fdFile
	var st *syscall.Stat_t
	if old == nil && x.cache == nil {
		var err error
		fd, st, err = openFd(path)
		switch {
		case err == nil:
			defer fd.Close()
		case errors.Is(err, ErrNotSession) || errors.Is(err, fs.ErrNotExist):
			return nil
		default:
			fd = nil // stat it, as below, to tell what it is and why it cannot be read
		}
	}
	if fd == nil {
		st = new(syscall.Stat_t)
		err := ignoringEINTR(func() error { return syscall.Stat(path, st) })
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &File{Path: path, Err: &os.PathError{Op: "stat", Path: path, Err: err}} // there, but not to be read
		}
		if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return nil
		}
	}
	sig := sigOfStat(st)
	same := old != nil && old.Sig == sig
	if same && (!old.racy || !x.relook) {
		return old
	}
	f := &File{Path: path, Sig: sig, Mode: fileMode(st), racy: racy(sig), slot: slotOf(path)}
	f.kx = x.keeper()
	f.Uid, f.Gid = st.Uid, st.Gid
	if old != nil && old.Header != nil && sig.Grew(old.Sig) && !same {
		f.Header = old.Header // appends never change the header
		if n, ok := old.scannedName(); ok {
			f.nameState().from = n
		}
		f.whole = true // a version no mount has seen: the cache has nothing of it
		f.keepHeader(nil)
		return f
	}
	if old == nil && x.fromCache(path, f, kept) {
		x.counts.kept.Add(1)
		return f
	}
	if kept != nil {
		// The folder's records were read and none is of this version.
		f.whole = true
	}
	x.counts.headers.Add(1)
	if fd == nil {
		var err error
		if fd, st, err = openFd(path); err != nil {
			if !errors.Is(err, ErrNotSession) && !errors.Is(err, fs.ErrNotExist) {
				f.Err = err
			}
			return f
		}
		defer fd.Close()
		f.Sig = sigOfStat(st)
		f.racy = f.racy || racy(f.Sig)
	}
	h, err := readHeader(fd)
	switch {
	case err == nil:
		f.Header = h
	case !errors.Is(err, ErrNotSession):
		f.Err = err
	}
	f.grown(fd)
	f.keepHeader(fd)
	return f
}

// nameIn is name as it is spelled in path, the file's (NAME.jsonl at its
// end): the same string, held once for both.
func nameIn(path, name string) string {
	if rest, ok := strings.CutSuffix(path, ".jsonl"); ok && strings.HasSuffix(rest, name) && len(rest) > len(name) && rest[len(rest)-len(name)-1] == '/' {
		return rest[len(rest)-len(name):]
	}
	return name
}

// slotOf is a path's hash (FNV-1a).
func slotOf(path string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(path); i++ {
		h = (h ^ uint32(path[i])) * 16777619
	}
	return h
}

// put places f in p, keeping the id map.
func (x *Index) put(p *project, f *File) {
	if old := p.files[f.Name]; old != nil {
		x.unID(old)
	} else {
		x.files.Add(1)
	}
	p.files[f.Name] = f
	p.sorted = nil
	x.gen.Add(1)
	if f.Header == nil {
		return
	}
	if len(x.byID[f.Header.ID]) == 0 {
		x.ids.add(f.Header.ID)
	}
	x.linAdd(f)
	list := append(x.byID[f.Header.ID], f)
	sort.Slice(list, func(i, j int) bool {
		if list[i].Project != list[j].Project {
			return list[i].Project < list[j].Project
		}
		return list[i].Name < list[j].Name
	})
	x.byID[f.Header.ID] = list
}

func (x *Index) remove(p *project, name string) {
	if old := p.files[name]; old != nil {
		x.unID(old)
		x.files.Add(-1)
		delete(p.files, name)
		p.sorted = nil
		x.gen.Add(1)
	}
}

func (x *Index) unID(f *File) {
	if f.Header == nil {
		return
	}
	x.linRemove(f)
	list := x.byID[f.Header.ID]
	for i, g := range list {
		if g == f {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(x.byID, f.Header.ID)
	} else {
		x.byID[f.Header.ID] = list
	}
}
