// Package fs owns a pifs mount's lifecycle: it checks the options, mounts
// the tree of package nodes with go-fuse, runs the watcher that keeps the
// kernel's caches in step with the store, and unmounts.
package fs

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/internal/mountinfo"
	"github.com/pifs/pifs/internal/persist"
	"github.com/pifs/pifs/nodes"
	"github.com/pifs/pifs/search"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
	"github.com/pifs/pifs/view"
)

// Name is the file system's name and type, as mount and df -T show it.
const Name = "pifs"

// Options configure a mount.
type Options struct {
	// SessionsDir is the store: one folder per project, and session files
	// at the top where pi keeps them flat. df and findmnt show it as the
	// mount's source. One that does not exist yet is mounted empty.
	SessionsDir string
	// Flat tells that new sessions go at the top of the store, as pi
	// writes them into a directory the user chose (sessions.Location).
	Flat bool
	// TimeZone is the zone of the usage reports' days (nil: local).
	TimeZone *time.Location
	ReadOnly bool
	// AllowOther lets other users in; it implies default_permissions.
	AllowOther bool
	// NonEmpty mounts over a directory that has files in it.
	NonEmpty bool
	// MountOptions are fstab-style options (-o); ro, rw, allow_other,
	// nonempty and debug are understood, fstab-only ones ignored, a few
	// passed to the kernel, and any other refused.
	MountOptions []string
	// Debug logs every FUSE request, at debug level.
	Debug bool
	// Home is the home directory tree.txt writes as "~", as pi's /tree
	// does ("": $HOME).
	Home string
	// noReadDirPlus turns READDIRPLUS off (-o noreaddirplus), to measure
	// walks both ways.
	noReadDirPlus bool
	// noEvents polls without taking change events (-o noevents): what a
	// store written only by other machines sees, to measure polling.
	noEvents bool
	// CacheBytes bounds what the mount keeps in memory: parsed sessions
	// and their renderings, the index, and the persistent cache's part
	// (default DefaultCacheBytes).
	CacheBytes int64
	// CacheDir, when set, is where what pifs learns of the store's files
	// is kept across mounts, one file per store (see DiskCacheBytes); a
	// new mount of an unchanged store reads the files from there.
	CacheDir string
	// SearchDir, when set, is where the store's full-text index is kept
	// across mounts (search/, by-file/; see package search), usually
	// CacheDir; "" mounts without one. Its memory (SQLite's page caches,
	// the builder's batch) comes out of CacheBytes.
	SearchDir string
	// PollInterval, when set, makes the watcher poll the store at this
	// interval for changes made by other machines, besides taking the
	// kernel's change events for those made on this one; it polls anyway
	// where the store's file system raises none (NFS, FUSE). Sessions
	// not written for a while are looked at less often in a large store
	// (sessions.Index.PollTick).
	PollInterval time.Duration
	Logger       *slog.Logger
	// Parsed, when set, is told the size of each session file parsed.
	Parsed func(size int64)
	// WalkGap and WalkHold time the guess that a walk is listing (see
	// view.Options); zero for the defaults.
	WalkGap, WalkHold time.Duration
	// TxnBytes bounds a transaction through a control (0: 256 MiB; see
	// view.Options).
	TxnBytes int64
}

// DefaultCacheBytes is the default memory budget of a mount.
const DefaultCacheBytes = 256 << 20

// DiskCacheBytes is the part of a memory budget set aside for the
// persistent cache: an eighth (32 MiB of the default 256 MiB). Its records
// take at most that much (those used least recently are dropped beyond
// it), and of its file, mapped in memory, the pages read last are held,
// an eighth of that at most (see persist).
func DiskCacheBytes(budget int64) int64 { return budget / 8 }

// FS is a mounted pifs.
type FS struct {
	Mountpoint string
	server     *fuse.Server
	dirs       *noOpendir
	view       *view.View
	root       *nodes.Root
	watcher    *sessions.Watcher
	cache      *persist.Cache // nil: none
	search     *search.Index  // nil: none
	logger     *slog.Logger
	// mounted is set once server is: the watcher notifies only then.
	mounted atomic.Bool
	// stop ends the goroutine that delivers (see deliver); applyMu keeps
	// it and the watcher's apply one at a time.
	stop     chan struct{}
	stopOnce sync.Once
	applyMu  sync.Mutex
}

// fstabOnly are options that mean something to mount(8), mount.fuse3,
// systemd or fstab, not to the file system.
var fstabOnly = map[string]bool{
	"defaults": true, "auto": true, "noauto": true, "user": true, "nouser": true, "users": true,
	"owner": true, "group": true, "_netdev": true, "nofail": true, "rw": true, "async": true,
	"loud": true, "silent": true, "drop_privileges": true,
}

// installFuse says how to install FUSE, for a machine without it.
const installFuse = "install fuse3 (apt install fuse3 on Debian and Ubuntu, dnf install fuse3 on Fedora and RHEL), or macFUSE on macOS (https://macfuse.github.io)"

// kernelFlags pass through to fusermount3 and the kernel as they are.
var kernelFlags = map[string]bool{
	"exec": true, "noexec": true, "suid": true, "nosuid": true, "dev": true, "nodev": true,
	"atime": true, "noatime": true, "relatime": true, "norelatime": true, "strictatime": true,
	"nodiratime": true, "diratime": true, "sync": true, "dirsync": true, "lazytime": true,
	"default_permissions": true, "allow_root": true,
}

// parseMountOptions folds -o options into o and returns those for the
// kernel; an option pifs does not know is an error, so that a typo is
// named before anything is mounted.
func parseMountOptions(o *Options) ([]string, error) {
	var kernel []string
	for _, opts := range o.MountOptions {
		for _, opt := range strings.Split(opts, ",") {
			opt = strings.TrimSpace(opt)
			key, _, _ := strings.Cut(opt, "=")
			switch {
			case opt == "":
			case opt == "ro":
				o.ReadOnly = true
			case opt == "allow_other":
				o.AllowOther = true
			case opt == "debug":
				o.Debug = true
			case opt == "nonempty":
				o.NonEmpty = true
			case opt == "readdirplus", opt == "noreaddirplus":
				o.noReadDirPlus = opt == "noreaddirplus"
			case opt == "events", opt == "noevents":
				o.noEvents = opt == "noevents"
			case opt == "auto_unmount":
				// fusermount3 then stays to watch us, and go-fuse waits for
				// it to exit: the mount would hang.
				return nil, fmt.Errorf("mount option auto_unmount is not supported: pifs unmounts itself on SIGHUP, SIGINT and SIGTERM, and clears a dead pifs mount when mounting again")
			case fstabOnly[opt], strings.HasPrefix(opt, "x-"), key == "comment", key == "setuid":
			case kernelFlags[opt], key == "max_read", key == "blksize":
				kernel = append(kernel, opt)
			default:
				return nil, fmt.Errorf("unknown mount option %q", opt)
			}
		}
	}
	return kernel, nil
}

// checkOverlap refuses a mountpoint inside the store, or a store inside the
// mountpoint: the mount would read itself and deadlock.
func checkOverlap(store, mnt string) error {
	s, err := mountinfo.RealPath(store)
	if err != nil {
		return fmt.Errorf("sessions directory: %w", err)
	}
	m, err := mountinfo.RealPath(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint: %w", err)
	}
	if within(m, s) {
		return fmt.Errorf("mountpoint %s is inside the sessions directory %s; mount outside it", mnt, store)
	}
	if within(s, m) {
		return fmt.Errorf("sessions directory %s is inside the mountpoint %s; mount elsewhere", store, mnt)
	}
	return nil
}

// within tells whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// checkSessionsDir refuses a store that is not a directory. One that does
// not exist yet is mounted empty and filled in when pi creates it.
func checkSessionsDir(dir string) (missing bool, err error) {
	if dir == "" {
		return false, refuse(KindSessionsDir, "no sessions directory")
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, nil
	case err != nil:
		return false, refuse(KindSessionsDir, "sessions directory: %v", err)
	case !fi.IsDir():
		return false, refuse(KindSessionsDir, "sessions directory %s is not a directory; choose another with --sessions-dir", dir)
	}
	return false, nil
}

// Mount mounts the store at mountpoint and returns once the mount is
// ready. A refusal is an *Error (see KindOf), given before anything is
// mounted; on any error nothing is left mounted.
func Mount(mountpoint string, o Options) (*FS, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	missing, err := checkSessionsDir(o.SessionsDir)
	if err != nil {
		return nil, err
	}
	kernelOpts, err := parseMountOptions(&o)
	if err != nil {
		return nil, &Error{Kind: KindMount, Err: err}
	}
	if err := checkFuseHelper(); err != nil {
		return nil, err
	}
	unlock, err := lockMountpoint(mountpoint, o.Logger)
	if err != nil {
		return nil, err
	}
	defer unlock() // once mounted, or refused
	if err := checkMountpoint(mountpoint, o.SessionsDir, o.NonEmpty, o.Logger); err != nil {
		return nil, err
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	store, err := filepath.Abs(o.SessionsDir)
	if err != nil {
		return nil, err
	}
	o.SessionsDir = store
	inMemory := o.CacheBytes
	var cache *persist.Cache
	if o.CacheDir != "" {
		// What the cache holds in memory (the pages of its file read
		// last, its queued writes) comes out of the budget.
		bound := DiskCacheBytes(o.CacheBytes)
		inMemory -= bound
		cache = persist.Open(persist.Options{Dir: o.CacheDir, Store: store, Build: buildID(), MaxBytes: bound,
			Log: func(msg string) { o.Logger.Warn(msg) }})
	}
	idx, off := openSearch(o, store, &inMemory)
	v := view.New(view.Options{SessionsDir: store, Flat: o.Flat, TimeZone: o.TimeZone, ReadOnly: o.ReadOnly, Shared: o.AllowOther, CacheBytes: inMemory,
		Logger: o.Logger, Parsed: o.Parsed, WalkGap: o.WalkGap, WalkHold: o.WalkHold, Home: o.Home, TxnBytes: o.TxnBytes, Search: idx, SearchOff: off})
	v.Index().Keep(cache)
	v.AddStats("persist", func() any { return cache.Stats() })
	if idx != nil {
		v.AddStats("search", func() any { return idx.Stats() })
	}
	root := nodes.NewRoot(v, o.Logger)
	f := &FS{Mountpoint: mountpoint, view: v, root: root, cache: cache, search: idx, logger: o.Logger}
	// The watcher starts first, so that it watches every folder the
	// index reads from its first request on.
	f.watcher = v.Index().Watch(sessions.WatchOptions{
		Poll:     o.PollInterval,
		NoEvents: o.noEvents,
		OnError:  func(err error) { o.Logger.Warn("watcher: " + err.Error()) },
	}, f.apply)
	server, dirs, err := mountRoot(mountpoint, root, o, kernelOpts, f.watcher.Events())
	if err != nil {
		f.watcher.Stop()
		cache.Close()
		if idx != nil {
			idx.Close()
		}
		// The checks above saw no mount here: a pifs mount now is ours.
		if m, ok := mountAt(canonical(mountpoint)); ok && m.FSType == "fuse."+Name {
			detach(m.Point)
		}
		return nil, &Error{Kind: KindMount, Err: fmt.Errorf("mount failed: %w", err)}
	}
	f.server, f.dirs = server, dirs
	root.PassthroughOffered(server.KernelSettings().Flags64()&fuse.CAP_PASSTHROUGH != 0)
	f.mounted.Store(true)
	f.stop = make(chan struct{})
	go f.deliver()
	v.Notifying()
	if idx != nil {
		// The index catches up with the store in the background, at a
		// low priority; the watcher tells it of each change from now on.
		idx.Start(v.Index())
	}
	if missing {
		o.Logger.Info(fmt.Sprintf("the sessions directory %s does not exist yet: mounted empty, waiting for it", store))
	}
	o.Logger.Debug("watching the store: " + f.watcher.Mode())
	return f, nil
}

// mountRoot mounts a node tree with pifs's go-fuse options.
//
// With change events, the kernel may keep names and attributes for long:
// the watcher tells it of every change. Without them, for a second.
func mountRoot(mountpoint string, root gofs.InodeEmbedder, o Options, kernelOpts []string, events bool) (*fuse.Server, *noOpendir, error) {
	second := time.Second
	if events {
		second = cacheTimeout
	}
	negative := time.Duration(0) // new sessions show at once
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	fuseLog := slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	source := o.SessionsDir
	if source == "" {
		source = Name
	}
	opts := &gofs.Options{
		EntryTimeout:    &second,
		AttrTimeout:     &second,
		NegativeTimeout: &negative,
		Logger:          fuseLog,
		// The modes the view gives are the store's, 000 included: never
		// widened to 0644 or 0755.
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			FsName:        source,
			Name:          Name,
			Options:       kernelOpts,
			AllowOther:    o.AllowOther,
			Debug:         o.Debug,
			Logger:        fuseLog,
			DisableXAttrs: true,
			// READDIRPLUS: a listing looks up every name it gives, in
			// one request per batch; the views whose size takes a render
			// answer those lookups without it when their size is not
			// known (see view.KnownAttr).
			DisableReadDirPlus: o.noReadDirPlus,
			// Symlink targets are kept by the kernel: a link whose target
			// changes (latest, labels/, current) is invalidated by the
			// watcher like any other view.
			EnableSymlinkCaching: true,
			// Entry files keep their pages; the others are direct I/O.
			ExplicitDataCacheControl: true,
			MaxReadAhead:             128 << 10,
			// pifs answers every read from memory or with pread: go-fuse's
			// splice path would only write each reply's header into a
			// pipe, find no file to splice and empty the pipe again, three
			// system calls per READ for nothing.
			DisableSplice: true,
			// The views are direct I/O (their size changes with the
			// session); the kernel still maps them (mmap, MAP_SHARED)
			// when it may, through the page cache, from the open file.
			ExtraCapabilities: fuse.CAP_DIRECT_IO_ALLOW_MMAP,
			PanicHandler: func(r any) fuse.Status {
				logger.Error(fmt.Sprintf("panic in handler: %v", r), "stack", string(debug.Stack()))
				return fuse.EIO
			},
		},
	}
	if o.AllowOther {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "default_permissions")
	}
	if o.ReadOnly {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "ro")
	}
	dirs := newNoOpendir(gofs.NewNodeFS(root, opts))
	dirs.shared = o.AllowOther
	if r, ok := root.(interface{ Opened(<-chan struct{}, bool) }); ok {
		dirs.opened = r.Opened
	}
	server, err := fuse.NewServer(dirs, mountpoint, &opts.MountOptions)
	if err != nil {
		return nil, nil, err
	}
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		return nil, nil, err
	}
	return server, dirs, nil
}

// cacheTimeout is how long the kernel keeps names and attributes when
// change events keep them current.
const cacheTimeout = 30 * time.Second

// apply runs in the watcher's goroutine; deliver is the only other one
// that notifies.
func (f *FS) apply(changes []sessions.Change) {
	defer func() {
		if r := recover(); r != nil {
			f.logger.Error(fmt.Sprintf("panic in watcher: %v", r), "stack", string(debug.Stack()))
		}
	}()
	if !f.mounted.Load() {
		return // not mounted yet: the kernel holds nothing
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	f.root.Apply(changes)
}

// deliver tells the kernel what the mount changed itself and lets it forget
// the entry names of sessions dropped from the cache (nodes.Root.Deliver).
// Like apply, it runs outside FUSE handlers.
func (f *FS) deliver() {
	for {
		select {
		case <-f.stop:
			return
		case <-f.view.NoticesReady():
			f.deliverOnce()
		}
	}
}

func (f *FS) deliverOnce() {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			f.logger.Error(fmt.Sprintf("panic while notifying: %v", r), "stack", string(debug.Stack()))
		}
	}()
	f.root.Deliver()
}

// stopped stops the goroutines that serve the mount besides the server.
func (f *FS) stopped() {
	f.watcher.Stop()
	f.stopOnce.Do(func() {
		close(f.stop)
		f.view.CloseEvents()
		if err := f.cache.Close(); err != nil {
			f.logger.Warn(fmt.Sprintf("persistent cache %s: %v", f.cache.Path(), err))
		}
		if f.search != nil {
			if err := f.search.Close(); err != nil {
				f.logger.Warn(fmt.Sprintf("search index in %s: %v", f.searchDir(), err))
			}
		}
	})
}

// openSearch opens the store's full-text index in o.SearchDir (nil when
// there is none, or it cannot be opened: the mount goes on without it and
// the log and off say why), and takes what it holds in memory from *budget.
func openSearch(o Options, store string, budget *int64) (idx *search.Index, off string) {
	if o.SearchDir == "" {
		return nil, ""
	}
	idx, err := search.Open(search.Options{Dir: o.SearchDir, Store: store, Touches: touches,
		CacheKiB: int(searchCacheKiB(o.CacheBytes)), Log: func(msg string) { o.Logger.Warn(msg) },
		Info: func(msg string) { o.Logger.Info(msg) }})
	if err != nil {
		hint := "check the folder, or mount with --index none"
		if errors.Is(err, search.ErrInUse) {
			hint = "another mount of this store keeps it; unmount it, or give this one --index DIR"
		}
		off = fmt.Sprintf("search index in %s: %v (%s)", o.SearchDir, err, hint)
		o.Logger.Warn(off + ": search/ and by-file/ are off for this mount")
		return nil, off
	}
	*budget -= SearchBytes(o.CacheBytes)
	return idx, ""
}

// searchCacheKiB is the search index builder's page cache for a memory
// budget: a 32nd of it (8 MiB of the default), between 2 and 32 MiB.
func searchCacheKiB(budget int64) int64 { return min(max(budget/32>>10, 2<<10), 32<<10) }

// SearchBytes is the part of a memory budget set aside for what the
// search index holds outside the Go heap, in SQLite: the builder's page
// cache, the two query connections' (2 MiB each) and FTS5's pending terms
// and work (4 MiB). Its rows and batch, in the Go heap, count against
// the cache's budget as they are held (view.Options.Search).
func SearchBytes(budget int64) int64 { return searchCacheKiB(budget)<<10 + 8<<20 }

// touches is what the index keeps of an entry's tool calls: the files
// they read, wrote and edited, as files.txt counts them.
func touches(e *sessions.Entry, cwd string) []search.Touch {
	ts := tree.Touches(e, cwd)
	if len(ts) == 0 {
		return nil
	}
	out := make([]search.Touch, len(ts))
	for i, t := range ts {
		out[i] = search.Touch{Path: t.Path, Op: t.Op}
	}
	return out
}

// searchDir is the folder of the mount's search index.
func (f *FS) searchDir() string { return filepath.Dir(f.search.Path()) }

// buildID names this build of pifs for the persistent cache: facts that
// another build took (its parser, its renderings may differ) are not
// used. The executable's identity changes with every build.
func buildID() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown " + time.Now().String() // nothing is trusted
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "unknown " + time.Now().String()
	}
	id := fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id += fmt.Sprintf(" %d:%d", st.Dev, st.Ino)
	}
	return id
}

// Wait blocks until the file system is unmounted.
func (f *FS) Wait() {
	f.server.Wait()
	f.stopped()
}

// Unmount unmounts, and stops the watcher once that worked: a mount that
// stays (busy) keeps being kept current.
func (f *FS) Unmount() error {
	if err := f.server.Unmount(); err != nil {
		return err
	}
	f.stopped()
	return nil
}

// Detach unmounts lazily (umount -l): the mount leaves the namespace at
// once and the server answers the files still open until they are closed;
// Wait returns then. The events streams end first (their readers read the
// end of the file, at once): a stream has no end of its own, and its
// readers would hold the mount, and pifs, until killed.
func (f *FS) Detach() error {
	f.view.CloseEvents()
	return detach(canonical(f.Mountpoint))
}

// Watching says how the mount learns of changes to the store: "change
// events (inotify)" or "polling every 500ms".
func (f *FS) Watching() string { return f.watcher.Mode() }

// Squeeze asks the session cache to keep n bytes below its budget, for
// the collector's room (see cache.Cache.Squeeze).
func (f *FS) Squeeze(n int64) { f.view.Squeeze(n) }

// Polls tells that the mount polls the store (asked for, or no change
// events there).
func (f *FS) Polls() bool { return !f.watcher.Events() }

// MountNodes mounts a node tree with the go-fuse options and the folder
// handling pifs mounts its own with (names and attributes kept 30 s, no
// OPENDIR, READDIRPLUS), and returns the server, serving: bench/gofloor
// serves a tree of names from memory through it, to tell what go-fuse
// itself costs a walk from what pifs adds.
func MountNodes(mountpoint string, root gofs.InodeEmbedder, logger *slog.Logger) (*fuse.Server, error) {
	server, _, err := mountRoot(mountpoint, root, Options{Logger: logger}, nil, true)
	return server, err
}
