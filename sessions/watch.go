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
	// Poll makes the watcher poll the store at this interval, for changes
	// made where no change events come from (other machines writing to a
	// network file system); the kernel's change events (inotify, kqueue) are
	// still taken for the changes made on this machine, unless NoEvents.
	// When 0, change events alone are used where the store's file system
	// gives them, and polling every DefaultPoll elsewhere (network and FUSE
	// file systems, whose remote changes raise no events here).
	Poll time.Duration
	// NoEvents polls (every DefaultPoll unless Poll says) without taking
	// change events at all: what a store written only by other machines
	// sees.
	NoEvents bool
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
	if w.poll == 0 && (o.NoEvents || !eventsWork(x.dir)) {
		w.poll = DefaultPoll
	}
	if !o.NoEvents {
		fw, err := fsnotify.NewBufferedWatcher(4096)
		switch {
		case err != nil && w.poll == 0:
			w.report(fmt.Errorf("no change events (%v): polling the store every %v", err, DefaultPoll))
			w.poll = DefaultPoll
		case err != nil:
			w.report(fmt.Errorf("no change events (%v): changes made on this machine show at the next poll", err))
		default:
			w.w = fw
			x.OnDir(w.add)
		}
	}
	go w.run()
	return w
}

// Mode says how the watcher learns of changes, for the log.
func (w *Watcher) Mode() string {
	poll := fmt.Sprintf("polling every %v", w.poll)
	if sweep := w.x.Sweep(w.poll); sweep > w.poll {
		poll += fmt.Sprintf(" (sessions not written in the last %v: every %v)", hotWindow, sweep)
	}
	switch {
	case w.w != nil && w.poll > 0:
		return "change events (" + eventsKind + ") and " + poll
	case w.w != nil:
		return "change events (" + eventsKind + ")"
	}
	return poll
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
	var ticks <-chan time.Time
	if w.poll > 0 {
		t := time.NewTicker(w.poll)
		defer t.Stop()
		ticks = t.C
	}
	var events chan fsnotify.Event
	var errs chan error
	if w.w != nil {
		defer w.w.Close()
		events, errs = w.w.Events, w.w.Errors
	}
	pending := map[string]bool{}
	var timer <-chan time.Time
	for {
		select {
		case <-w.stop:
			return
		case <-ticks:
			w.deliver(w.x.PollTick(w.poll))
		case ev, ok := <-events:
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
		case err, ok := <-errs:
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

// Events tells whether change events alone keep the index current (else
// it polls, with change events or without).
func (w *Watcher) Events() bool { return w.w != nil && w.poll == 0 }
