// Package fs owns a pifs mount's lifecycle: it checks the options, mounts
// the tree of package nodes with go-fuse, runs the watcher that keeps the
// kernel's caches in step with the store, and unmounts.
package fs

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/nodes"
	"github.com/pifs/pifs/sessions"
)

// Name is the file system's name and type, as mount and df -T show it.
const Name = "pifs"

// Options configure a mount.
type Options struct {
	// SessionsDir is the store: one folder per project.
	SessionsDir string
	ReadOnly    bool
	// AllowOther lets other users in; it implies default_permissions.
	AllowOther bool
	// MountOptions are fstab-style options (-o); ro, rw, allow_other and
	// debug are understood, fstab-only ones ignored, the rest passed to
	// the kernel.
	MountOptions []string
	Debug        bool
	// CacheBytes bounds what the mount keeps in memory: parsed sessions
	// and their renderings (default DefaultCacheBytes).
	CacheBytes int64
	// PollInterval, when set, makes the watcher poll the store at this
	// interval instead of using the kernel's change events; it polls
	// anyway where the store's file system raises none (NFS, FUSE).
	PollInterval time.Duration
	Logger       *log.Logger

	// NoReadDirPlus turns off READDIRPLUS (-o noreaddirplus), to measure
	// walks both ways (bench/scale.sh).
	NoReadDirPlus bool
}

// DefaultCacheBytes is the default memory budget of a mount.
const DefaultCacheBytes = 256 << 20

// FS is a mounted pifs.
type FS struct {
	Mountpoint string
	server     *fuse.Server
	root       *nodes.Root
	watcher    *sessions.Watcher
	logger     *log.Logger
}

// fstabOnly are options that mean something to mount(8) or fstab, not to
// the file system.
var fstabOnly = map[string]bool{
	"defaults": true, "auto": true, "noauto": true, "user": true, "nouser": true, "users": true,
	"_netdev": true, "nofail": true, "rw": true, "exec": true, "noexec": true, "suid": true,
	"nosuid": true, "dev": true, "nodev": true, "async": true,
}

// parseMountOptions folds -o options into o and returns those for the kernel.
func parseMountOptions(o *Options) []string {
	var kernel []string
	for _, opts := range o.MountOptions {
		for _, opt := range strings.Split(opts, ",") {
			opt = strings.TrimSpace(opt)
			switch {
			case opt == "":
			case opt == "ro":
				o.ReadOnly = true
			case opt == "allow_other":
				o.AllowOther = true
			case opt == "debug":
				o.Debug = true
			case opt == "readdirplus", opt == "noreaddirplus":
				o.NoReadDirPlus = opt == "noreaddirplus"
			case fstabOnly[opt], strings.HasPrefix(opt, "x-"), strings.HasPrefix(opt, "comment="):
			default:
				kernel = append(kernel, opt)
			}
		}
	}
	return kernel
}

// checkOverlap refuses a mountpoint inside the store, or a store inside the
// mountpoint: the mount would read itself and deadlock.
func checkOverlap(store, mnt string) error {
	s, err := realPath(store)
	if err != nil {
		return fmt.Errorf("sessions directory: %w", err)
	}
	m, err := realPath(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint: %w", err)
	}
	if within(m, s) {
		return fmt.Errorf("mountpoint %s is inside the sessions directory %s", mnt, store)
	}
	if within(s, m) {
		return fmt.Errorf("sessions directory %s is inside the mountpoint %s", store, mnt)
	}
	return nil
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within tells whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Mount mounts the store at mountpoint and returns once the mount is ready.
func Mount(mountpoint string, o Options) (*FS, error) {
	if o.SessionsDir == "" {
		return nil, errors.New("no sessions directory")
	}
	if fi, err := os.Stat(o.SessionsDir); err != nil {
		return nil, fmt.Errorf("sessions directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("sessions directory %s is not a directory", o.SessionsDir)
	}
	if err := checkOverlap(o.SessionsDir, mountpoint); err != nil {
		return nil, err
	}
	kernelOpts := parseMountOptions(&o)
	if o.Logger == nil {
		o.Logger = log.New(os.Stderr, "pifs: ", log.LstdFlags)
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	store, err := filepath.Abs(o.SessionsDir)
	if err != nil {
		return nil, err
	}
	root := nodes.NewRoot(nodes.Options{SessionsDir: store, ReadOnly: o.ReadOnly, CacheBytes: o.CacheBytes, Logger: o.Logger})
	f := &FS{Mountpoint: mountpoint, root: root, logger: o.Logger}
	// The watcher starts first, so that it watches every folder the
	// index reads from its first request on.
	f.watcher = root.Index().Watch(sessions.WatchOptions{
		Poll:    o.PollInterval,
		OnError: func(err error) { o.Logger.Printf("watcher: %v", err) },
	}, f.apply)
	server, err := mountRoot(mountpoint, root, o, kernelOpts, f.watcher.Events())
	if err != nil {
		f.watcher.Stop()
		return nil, err
	}
	f.server = server
	return f, nil
}

// mountRoot mounts a node tree with pifs's go-fuse options.
//
// With change events, the kernel may keep names and attributes for long:
// the watcher tells it of every change. Without them, for a second.
func mountRoot(mountpoint string, root gofs.InodeEmbedder, o Options, kernelOpts []string, events bool) (*fuse.Server, error) {
	second := time.Second
	if events {
		second = cacheTimeout
	}
	negative := time.Duration(0) // new sessions show at once
	opts := &gofs.Options{
		EntryTimeout:    &second,
		AttrTimeout:     &second,
		NegativeTimeout: &negative,
		Logger:          o.Logger,
		MountOptions: fuse.MountOptions{
			FsName:        Name,
			Name:          Name,
			Options:       kernelOpts,
			AllowOther:    o.AllowOther,
			Debug:         o.Debug,
			Logger:        o.Logger,
			DisableXAttrs: true,
			// Entry files keep their pages; the others are direct I/O.
			ExplicitDataCacheControl: true,
			MaxReadAhead:             128 << 10,
			PanicHandler: func(r any) fuse.Status {
				o.Logger.Printf("panic in handler: %v\n%s", r, debug.Stack())
				return fuse.EIO
			},
		},
	}
	opts.MountOptions.DisableReadDirPlus = o.NoReadDirPlus
	if o.AllowOther {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "default_permissions")
	}
	if o.ReadOnly {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "ro")
	}
	return gofs.Mount(mountpoint, root, opts)
}

// cacheTimeout is how long the kernel keeps names and attributes when
// change events keep them current.
const cacheTimeout = 30 * time.Second

// apply runs in the watcher's goroutine, the only one that notifies.
func (f *FS) apply(changes []sessions.Change) {
	defer func() {
		if r := recover(); r != nil {
			f.logger.Printf("panic in watcher: %v\n%s", r, debug.Stack())
		}
	}()
	if f.server == nil {
		return // not mounted yet: the kernel holds nothing
	}
	f.root.Apply(changes)
}

// Wait blocks until the file system is unmounted.
func (f *FS) Wait() {
	f.server.Wait()
	f.watcher.Stop()
}

// Unmount unmounts, then stops the watcher; a mount that stays (busy) keeps
// its watcher.
func (f *FS) Unmount() error {
	if err := f.server.Unmount(); err != nil {
		return err
	}
	f.watcher.Stop()
	return nil
}
