package view

import (
	"sync"
	"time"

	"github.com/pifs/pifs/sessions"
)

// outbox holds what the kernel must be told and has not been yet: the
// changes pifs made to the store itself (the index sees them at once, so
// the watcher finds nothing new when their events come) and the sessions
// dropped from the cache (see PendingNotices). Handlers put; one goroutine outside
// them delivers.
type outbox struct {
	mu      sync.Mutex
	changes []sessions.Change
	evicted []evictedSession
	notices []Notice // what pifs changed that no Change says
	// queued counts what was put, delivered what was delivered of it;
	// tick is closed, and replaced, at each delivery.
	queued, delivered uint64
	tick              chan struct{}
	// signal tells the delivering goroutine that there is work.
	signal chan struct{}
}

// evictedSession is a session the cache dropped: its folder and file.
type evictedSession struct{ project, name, path string }

func newOutbox() *outbox {
	return &outbox{tick: make(chan struct{}), signal: make(chan struct{}, 1)}
}

// put adds changes and evicted sessions.
func (o *outbox) put(changes []sessions.Change, evicted ...evictedSession) {
	if len(changes) == 0 && len(evicted) == 0 {
		return
	}
	o.mu.Lock()
	o.changes = append(o.changes, changes...)
	o.evicted = append(o.evicted, evicted...)
	o.queued++
	o.mu.Unlock()
	o.wake()
}

// putNotices adds notices of what pifs changed that the index's changes do
// not say (a name the kernel moved in a rename).
func (o *outbox) putNotices(ns ...Notice) {
	o.mu.Lock()
	o.notices = append(o.notices, ns...)
	o.queued++
	o.mu.Unlock()
	o.wake()
}

// wake tells the delivering goroutine that there is work.
func (o *outbox) wake() {
	select {
	case o.signal <- struct{}{}:
	default:
	}
}

// take empties the outbox; done says it was delivered.
func (o *outbox) take() (changes []sessions.Change, evicted []evictedSession, notices []Notice, done func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	changes, evicted, notices, seq := o.changes, o.evicted, o.notices, o.queued
	o.changes, o.evicted, o.notices = nil, nil, nil
	return changes, evicted, notices, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.delivered = max(o.delivered, seq)
		close(o.tick)
		o.tick = make(chan struct{})
	}
}

// wait returns once everything put so far was delivered, or after
// timeout: a writer waits for the kernel to be told what it changed, so
// that the next command sees it (a listing the kernel keeps, a size).
func (o *outbox) wait(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	o.mu.Lock()
	target := o.queued
	for o.delivered < target {
		tick := o.tick
		o.mu.Unlock()
		select {
		case <-tick:
		case <-deadline.C:
			return
		}
		o.mu.Lock()
	}
	o.mu.Unlock()
}
