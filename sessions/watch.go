package sessions

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Poll forces polling at this interval instead of change events.
	// When 0, the kernel's change events (inotify, kqueue) are used where the
	// store's file system gives them, and polling every DefaultPoll
	// elsewhere (network and FUSE file systems, whose remote changes raise
	// no events here).
	Poll time.Duration
	// OnError is told about what the watcher could not do (optional).
	OnError func(error)
}

// DefaultPoll is the polling interval where no change events come.
const DefaultPoll = 500 * time.Millisecond

// settle is how long change events are gathered before the index looks:
// one append raises several events.
const settle = 10 * time.Millisecond

// Watcher keeps an Index current and reports what changed.
type Watcher struct {
	x    *Index
	fn   func([]Change)
	o    WatchOptions
	w    *fsnotify.Watcher // nil when polling
	poll time.Duration

	mu      sync.Mutex
	watched map[string]bool

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Watch keeps x current until Stop, calling fn with what changed. fn runs
// in the watcher's own goroutine, one call at a time.
func (x *Index) Watch(o WatchOptions, fn func([]Change)) *Watcher {
	w := &Watcher{x: x, fn: fn, o: o, watched: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	w.poll = o.Poll
	if w.poll == 0 && !eventsWork(x.dir) {
		w.poll = DefaultPoll
	}
	if w.poll == 0 {
		fw, err := fsnotify.NewBufferedWatcher(4096)
		if err != nil {
			w.report(fmt.Errorf("no change events (%v): polling the store every %v", err, DefaultPoll))
			w.poll = DefaultPoll
		} else {
			w.w = fw
			x.OnDir(w.add)
		}
	}
	go w.run()
	return w
}

// Mode says how the watcher learns of changes, for the log.
func (w *Watcher) Mode() string {
	if w.w != nil {
		return "change events (" + eventsKind + ")"
	}
	return fmt.Sprintf("polling every %v", w.poll)
}

// Stop ends the watcher and waits for it.
func (w *Watcher) Stop() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *Watcher) report(err error) {
	if w.o.OnError != nil {
		w.o.OnError(err)
	}
}

// add watches a folder the index reads from. A store that does not exist
// yet is waited for by watching the nearest folder above it that does.
func (w *Watcher) add(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[dir] {
		return
	}
	err := w.w.Add(dir)
	if err == nil {
		w.watched[dir] = true
		return
	}
	if !errors.Is(err, syscall.ENOENT) {
		w.report(fmt.Errorf("watching %s: %w", dir, err))
		return
	}
	if dir != w.x.dir {
		return
	}
	// The store is missing: watch for it to appear, from above.
	for d := filepath.Dir(dir); !w.watched[d]; d = filepath.Dir(d) {
		if w.w.Add(d) == nil {
			w.watched[d] = true
			return
		}
		if filepath.Dir(d) == d {
			return
		}
	}
}

func (w *Watcher) run() {
	defer close(w.done)
	if w.w == nil {
		t := time.NewTicker(w.poll)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.deliver(w.x.Poll())
			}
		}
	}
	defer w.w.Close()
	pending := map[string]bool{}
	var timer <-chan time.Time
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				w.mu.Lock()
				delete(w.watched, ev.Name) // the kernel dropped its watch
				w.mu.Unlock()
			}
			pending[w.pathOf(ev.Name)] = true
			if timer == nil {
				timer = time.After(settle)
			}
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.deliver(w.x.Poll())
				continue
			}
			w.report(err)
		case <-timer:
			timer = nil
			var changes []Change
			for p := range pending {
				if p != "" {
					changes = append(changes, w.x.Update(p)...)
				}
			}
			clear(pending)
			w.deliver(changes)
		}
	}
}

// pathOf maps an event's path to what the index should look at: the path
// itself inside the store; the store for a folder above it (it may have
// just been created); nothing otherwise.
func (w *Watcher) pathOf(p string) string {
	if within(p, w.x.dir) {
		return p
	}
	if within(w.x.dir, p) {
		return w.x.dir
	}
	return ""
}

func (w *Watcher) deliver(changes []Change) {
	if len(changes) > 0 {
		w.fn(changes)
	}
}

// eventsWork tells whether change events can be trusted for dir (or, while
// it does not exist, the nearest folder above it).
func eventsWork(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			return hasEvents(&st)
		}
		if filepath.Dir(d) == d {
			return true
		}
	}
}

// Events tells whether the watcher has change events (else it polls).
func (w *Watcher) Events() bool { return w.w != nil }
