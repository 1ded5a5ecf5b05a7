// Package nodes adapts a store of pi sessions to FUSE: one node type per kind
// of file or folder of the mount (see SPEC.md, "The tree"), the encoding of
// ids as file names, inode numbers, the cache of parsed sessions, and the
// invalidation of what the kernel cached when session files change.
//
// It reads the store only through packages sessions and tree; package fs
// mounts it and runs the watcher.
package nodes

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/sessions"
)

// Names the mount gives to its own files.
const (
	byIDName   = "by-id"
	byCwdName  = "by-cwd"
	newName    = "new"
	cwdName    = "cwd"
	latestName = "latest"
	usageName  = "usage"
	byNameName = "by-name"
)

// rootNames are the root's own names (no project folder can take them);
// projectNames a project folder's (no session file can take them).
var (
	rootNames    = map[string]bool{byIDName: true, byCwdName: true, newName: true, latestName: true, usageName: true}
	projectNames = map[string]bool{cwdName: true, newName: true, latestName: true, usageName: true, byNameName: true}
)

// Options configure the tree.
type Options struct {
	SessionsDir string
	// TimeZone is the zone of the usage reports' days and months (nil:
	// local).
	TimeZone *time.Location
	// Flat tells that the store is a directory the user chose, where pi
	// writes every session at the top (else one folder per cwd).
	Flat     bool
	ReadOnly bool
	// CacheBytes bounds what the mount keeps in memory: parsed sessions
	// and their renderings.
	CacheBytes int64
	// Logger receives what cannot be returned: unexpected errors and why
	// writes were refused.
	Logger *slog.Logger
	// Parsed, when set, is told the size of each session file parsed (the
	// command raises the collector's limit for the largest).
	Parsed func(size int64)
}

// Root is the mount's root folder: the projects, by-id/ and new.
type Root struct {
	dir
	opts     Options
	st       *store
	uid, gid uint32
	log      *slog.Logger
	refused  refusals
	removals removals
	ahead    *ahead
	walk     walkGuess
	// notifying: a goroutine delivers the outbox (see Notifying).
	notifying atomic.Bool
	listings  atomic.Int64
	// lookups counts the names folders looked up (for tests that guard a
	// cost).
	lookups atomic.Int64
}

var (
	_ = (fs.NodeStatfser)((*Root)(nil))
	_ = (fs.NodeLookuper)((*Root)(nil))
	_ = (fs.NodeReaddirer)((*Root)(nil))
)

// NewRoot makes the root of a mount of o.SessionsDir.
func NewRoot(o Options) *Root {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	r := &Root{opts: o, log: o.Logger, st: newStore(o.SessionsDir, o.CacheBytes), uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	r.dir = dir{r: r, src: rootSource{r}}
	r.ahead = newAhead(r, r.st.budget)
	r.st.onParse = o.Parsed
	return r
}

// fill sets the attributes every node shares.
func (r *Root) fill(out *fuse.Attr, mode uint32, size uint64, mtime time.Time) {
	out.Mode = mode
	out.Size = size
	out.Blocks = (size + 511) / 512
	out.Blksize = 4096
	out.Nlink = 1
	out.Owner = fuse.Owner{Uid: r.uid, Gid: r.gid}
	if mtime.IsZero() || mtime.Unix() < 0 {
		mtime = time.Unix(0, 0)
	}
	out.SetTimes(&mtime, &mtime, &mtime)
}

func (r *Root) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize = 4096
	out.Frsize = 4096
	out.NameLen = 255
	return 0
}

// dirMtime is the store's mtime, for the folders that show the whole
// store. A store that is not there (not created yet, moved away) leaves
// them there, empty, dated at the epoch: the mount's root must always
// answer, or the mountpoint itself is "no such file or directory".
func dirMtime(path string) (time.Time, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, nil
	}
	return fi.ModTime(), nil
}

type rootSource struct{ r *Root }

func (s rootSource) mtime() (time.Time, error) { return dirMtime(s.r.opts.SessionsDir) }

func (s rootSource) list() ([]child, error) {
	out := []child{s.byID(), s.byCwd(), s.newFile(), s.usage()}
	if c, err := s.latest(); err == nil {
		out = append(out, c)
	}
	for _, p := range s.r.st.projects() {
		out = append(out, s.project(p))
	}
	return out, nil
}

func (s rootSource) lookup(name string) (child, error) {
	switch name {
	case byIDName:
		return s.byID(), nil
	case byCwdName:
		return s.byCwd(), nil
	case newName:
		return s.newFile(), nil
	case latestName:
		return s.latest()
	case usageName:
		return s.usage(), nil
	}
	if !s.r.st.hasProject(name) {
		return child{}, ErrNotFound
	}
	return s.project(name), nil
}

func (s rootSource) byID() child {
	return child{byIDName, syscall.S_IFDIR, inoOf(byIDName), func() fs.InodeEmbedder { return newByIDDir(s.r) }}
}

func (s rootSource) byCwd() child {
	return child{byCwdName, syscall.S_IFDIR, inoOf(byCwdName), func() fs.InodeEmbedder { return newByCwdDir(s.r, "/") }}
}

func (s rootSource) usage() child {
	return child{usageName, syscall.S_IFDIR, inoOf(usageName), func() fs.InodeEmbedder { return newUsageDir(s.r, "") }}
}

func (s rootSource) newFile() child {
	return child{newName, syscall.S_IFREG, inoOf(newName), func() fs.InodeEmbedder { return newNewFile(s.r, "") }}
}

// latest is listed while there is a project: where it points takes reading
// every project, which only readlink does.
func (s rootSource) latest() (child, error) {
	if len(s.r.st.projects()) == 0 {
		return child{}, ErrNotFound
	}
	// Its inode number stays while its target is not known: the watcher
	// forgets the name on every change, so the kernel reads it again.
	return child{latestName, syscall.S_IFLNK, inoOf(latestName), func() fs.InodeEmbedder { return newLatestLink(s.r, "") }}, nil
}

func (s rootSource) project(p string) child {
	return child{p, syscall.S_IFDIR, inoOf("p", p), func() fs.InodeEmbedder { return newProjectDir(s.r, p) }}
}

// projectDir is one folder of the sessions directory: its sessions, cwd and
// new.
type projectDir struct {
	dir
	project string
}

var _ = (fs.NodeLookuper)((*projectDir)(nil))

func newProjectDir(r *Root, project string) *projectDir {
	d := &projectDir{project: project}
	d.dir = dir{r: r, src: d}
	return d
}

func (d *projectDir) mtime() (time.Time, error) { return d.r.st.projectMtime(d.project) }

func (d *projectDir) list() ([]child, error) {
	files, err := d.r.st.sessionFiles(d.project)
	if err != nil {
		return nil, err
	}
	d.r.ahead.listing(d.project, time.Now())
	out := make([]child, 0, len(files)+3)
	out = append(out, d.cwd(), d.newFile(), d.usage(), d.byName())
	if c, err := d.latest(); err == nil {
		out = append(out, c)
	}
	for _, f := range files {
		out = append(out, d.session(f.Name))
	}
	return out, nil
}

func (d *projectDir) lookup(name string) (child, error) {
	switch name {
	case cwdName:
		return d.cwd(), nil
	case newName:
		return d.newFile(), nil
	case latestName:
		return d.latest()
	case usageName:
		return d.usage(), nil
	case byNameName:
		return d.byName(), nil
	}
	if _, err := d.r.st.meta(d.project, name); err != nil {
		return child{}, err
	}
	return d.session(name), nil
}

func (d *projectDir) byName() child {
	return child{byNameName, syscall.S_IFDIR, inoOf("p", d.project, byNameName), func() fs.InodeEmbedder { return newByNameDir(d.r, d.project) }}
}

func (d *projectDir) usage() child {
	return child{usageName, syscall.S_IFDIR, inoOf("p", d.project, usageName), func() fs.InodeEmbedder { return newUsageDir(d.r, d.project) }}
}

func (d *projectDir) latest() (child, error) {
	f, ok := d.r.st.latest(d.project)
	if !ok {
		return child{}, ErrNotFound
	}
	return child{latestName, syscall.S_IFLNK, inoOf("p", d.project, latestName, f.Name), func() fs.InodeEmbedder { return newLatestLink(d.r, d.project) }}, nil
}

func (d *projectDir) cwd() child {
	return child{cwdName, syscall.S_IFREG, inoOf("p", d.project, cwdName), func() fs.InodeEmbedder { return newCwdFile(d.r, d.project) }}
}

func (d *projectDir) newFile() child {
	return child{newName, syscall.S_IFREG, inoOf("p", d.project, newName), func() fs.InodeEmbedder { return newNewFile(d.r, d.project) }}
}

func (d *projectDir) session(name string) child {
	return child{name, syscall.S_IFDIR, inoOf("s", d.project, name), func() fs.InodeEmbedder { return newSessionDir(d.r, d.project, name) }}
}

// cwdFile holds a project's working directory: the cwd of its newest
// session that names one (empty when none does).
type cwdFile struct {
	file
	project string
}

func newCwdFile(r *Root, project string) *cwdFile {
	f := &cwdFile{project: project}
	f.file = file{r: r, src: f}
	return f
}

func (f *cwdFile) content() ([]byte, time.Time, error) {
	mt, err := f.r.st.projectMtime(f.project)
	if err != nil {
		return nil, mt, err
	}
	cwd, err := f.r.st.projectCwd(f.project)
	if err != nil || cwd == "" {
		return nil, mt, err
	}
	return []byte(cwd + "\n"), mt, nil
}

// newFile is the control that creates sessions: in a project, or at the
// root for any working directory. Reading the same open file after a write
// gives the new sessions' paths.
type newFile struct {
	file
	project string // "" at the root
}

func newNewFile(r *Root, project string) *newFile {
	f := &newFile{project: project}
	f.file = file{r: r, src: f, ctl: newControl{r, project}}
	return f
}

func (f *newFile) content() ([]byte, time.Time, error) {
	if f.project == "" {
		mt, err := dirMtime(f.r.opts.SessionsDir)
		return nil, mt, err
	}
	mt, err := f.r.st.projectMtime(f.project)
	return nil, mt, err
}

// byIDDir lists every session by its id, as a symlink to its folder.
type byIDDir struct{ dir }

func newByIDDir(r *Root) *byIDDir {
	d := &byIDDir{}
	d.dir = dir{r: r, src: d}
	return d
}

func (d *byIDDir) mtime() (time.Time, error) { return dirMtime(d.r.opts.SessionsDir) }

func (d *byIDDir) list() ([]child, error) {
	var out []child
	seen := map[string]bool{}
	for _, f := range d.r.st.x.All() {
		if !seen[f.Header.ID] && validProject(f.Project) && validSessionName(f.Name) {
			seen[f.Header.ID] = true
			out = append(out, d.link(f.Header.ID))
		}
	}
	return out, nil
}

func (d *byIDDir) lookup(name string) (child, error) {
	id, ok := decodeName(name)
	if !ok {
		// A hashed name: compare with every session's spelling.
		for _, f := range d.r.st.x.All() {
			if EncodeName(f.Header.ID) == name {
				id, ok = f.Header.ID, true
				break
			}
		}
	}
	if !ok {
		return child{}, ErrNotFound
	}
	if _, found := d.r.st.sessionByID(id); !found || EncodeName(id) != name {
		return child{}, ErrNotFound
	}
	return d.link(id), nil
}

func (d *byIDDir) link(id string) child {
	return child{EncodeName(id), syscall.S_IFLNK, inoOf(byIDName, id), func() fs.InodeEmbedder { return newByIDLink(d.r, id) }}
}

// byIDLink points at a session's folder: ../<project>/<session>.
type byIDLink struct {
	link
	id string
}

func newByIDLink(r *Root, id string) *byIDLink {
	l := &byIDLink{id: id}
	l.link = link{r: r, src: l}
	return l
}

// target is the session's folder; a link's mtime is its session file's, so
// that listing links reads no session.
func (l *byIDLink) target() (string, time.Time, error) {
	f, ok := l.r.st.sessionByID(l.id)
	if !ok {
		return "", time.Time{}, ErrNotFound
	}
	return "../" + f.Project + "/" + f.Name, time.Unix(0, f.Sig.Mtime), nil
}

// latestLink is latest: the session whose file changed last, at the root
// or in a project.
type latestLink struct {
	link
	project string // "" at the root
}

func newLatestLink(r *Root, project string) *latestLink {
	l := &latestLink{project: project}
	l.link = link{r: r, src: l}
	return l
}

func (l *latestLink) target() (string, time.Time, error) {
	f, ok := l.r.st.latest(l.project)
	if !ok {
		return "", time.Time{}, ErrNotFound
	}
	mt := time.Unix(0, f.Sig.Mtime)
	if l.project != "" {
		return f.Name, mt, nil
	}
	return f.Project + "/" + f.Name, mt, nil
}

// Index is the store's index, which the watcher keeps current.
func (r *Root) Index() *sessions.Index { return r.st.x }

// Parsed counts the sessions this mount has parsed (for tests that guard
// a cost).
func (r *Root) Parsed() int64 { return r.st.opened.Load() }

// Listings counts the folders this mount has listed (for tests that guard
// a cost).
func (r *Root) Listings() int64 { return r.listings.Load() }

// FromPlan counts the context.json renderings made from a plan, without a
// parse (for tests that guard a cost).
func (r *Root) FromPlan() int64 { return r.st.plans.rendered.Load() }

// ListedAlone counts the names listed without attributes because a walk
// was listing (see walkGuess; for tests that guard a cost).
func (r *Root) ListedAlone() int64 { return r.walk.alone.Load() }

// SetWalkTimes sets the longest pause within a walk and how long a lookup
// of a name listed alone turns attributes back on (1 s and 5 s unless
// set), for tests that must not depend on the machine's speed.
func (r *Root) SetWalkTimes(gap, hold time.Duration) {
	r.walk.mu.Lock()
	defer r.walk.mu.Unlock()
	r.walk.gap, r.walk.hold = gap, hold
}
