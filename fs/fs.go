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
	"sync"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/nodes"
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
	// CacheSize is how many parsed sessions are kept (default 64).
	CacheSize int
	// PollInterval is how often the watcher looks at the store (default
	// 300ms).
	PollInterval time.Duration
	Logger       *log.Logger
}

// FS is a mounted pifs.
type FS struct {
	Mountpoint string
	server     *fuse.Server
	root       *nodes.Root
	stop       chan struct{}
	done       chan struct{}
	once       sync.Once
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
	if o.CacheSize <= 0 {
		o.CacheSize = 64
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 300 * time.Millisecond
	}
	store, err := filepath.Abs(o.SessionsDir)
	if err != nil {
		return nil, err
	}
	root := nodes.NewRoot(nodes.Options{SessionsDir: store, ReadOnly: o.ReadOnly, CacheSize: o.CacheSize, Logger: o.Logger})
	server, err := mountRoot(mountpoint, root, o, kernelOpts)
	if err != nil {
		return nil, err
	}
	f := &FS{Mountpoint: mountpoint, server: server, root: root, stop: make(chan struct{}), done: make(chan struct{}), logger: o.Logger}
	go f.watch(o.PollInterval)
	return f, nil
}

// mountRoot mounts a node tree with pifs's go-fuse options.
func mountRoot(mountpoint string, root gofs.InodeEmbedder, o Options, kernelOpts []string) (*fuse.Server, error) {
	second := time.Second
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
	if o.AllowOther {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "default_permissions")
	}
	if o.ReadOnly {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "ro")
	}
	return gofs.Mount(mountpoint, root, opts)
}

// watch runs the watcher until Unmount: every interval it lets the tree
// compare the store with what the kernel holds and send notifications.
// This goroutine is the only one that notifies.
func (f *FS) watch(every time.Duration) {
	defer close(f.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			f.sync()
		}
	}
}

func (f *FS) sync() {
	defer func() {
		if r := recover(); r != nil {
			f.logger.Printf("panic in watcher: %v\n%s", r, debug.Stack())
		}
	}()
	f.root.Sync()
}

// Wait blocks until the file system is unmounted.
func (f *FS) Wait() {
	f.server.Wait()
	f.stopWatcher()
}

func (f *FS) stopWatcher() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

// Unmount stops the watcher and unmounts.
func (f *FS) Unmount() error {
	f.stopWatcher()
	return f.server.Unmount()
}
