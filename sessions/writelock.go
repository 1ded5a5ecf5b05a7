package sessions

import "sync"

// writeLocks keeps one lock per session file that pifs is writing, so that
// its own writes to one file go one at a time, each built against what
// the one before it wrote, whatever else (a cache that dropped and made
// again its copy of the session) holds the file.
type writeLocks struct {
	mu    sync.Mutex
	locks map[string]*writeLock
}

type writeLock struct {
	sync.Mutex
	users int // holders and waiters; the lock is forgotten at 0
}

// LockWrites takes the write lock of a session file (by its path, or any
// key naming it) and returns its unlock. A writer holds it from the read
// of the file it builds its lines against to the end of its append.
func (x *Index) LockWrites(key string) (unlock func()) {
	w := &x.writes
	w.mu.Lock()
	if w.locks == nil {
		w.locks = map[string]*writeLock{}
	}
	l := w.locks[key]
	if l == nil {
		l = &writeLock{}
		w.locks[key] = l
	}
	l.users++
	w.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		w.mu.Lock()
		if l.users--; l.users == 0 {
			delete(w.locks, key)
		}
		w.mu.Unlock()
	}
}
