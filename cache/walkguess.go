package cache

import (
	"sync"
	"sync/atomic"
	"time"
)

// Listings of entry folders (entries/, branches/<id>/, tree/ segments)
// give their files' attributes with the names, as READDIRPLUS asks: `ls
// -l entries/` of 60,000 entries then costs one listing, not 60,000
// lookups. But a walk over the store (grep -r, find) lists every entry
// folder of every session and stats none of their files: attributes given
// to it make the kernel create, and soon forget, an inode per name, two
// million over a 2,000-session store, for nothing.
//
// So the mount guesses which of the two is listing. Entry folders of
// several sessions listed one after the other, each soon after the one
// before, are a walk: from the walkRun+1th session on, their files are
// listed by name alone. A name listed alone and then looked up says the
// walk stats what it lists (ls -l, du, tar, grep of every file): for
// walkHold from then, listings give attributes again, and the run starts
// over. A walk that stats costs at most one folder's lookups per walkHold;
// one that does not costs walkRun sessions' inodes.

const (
	// walkRun is how many sessions in a row are listed with attributes
	// before a walk is taken for one.
	walkRun = 3
	// walkGap is the longest pause between two sessions of a walk.
	walkGap = time.Second
	// walkHold is how long attributes are given after a name listed alone
	// was looked up.
	walkHold = 5 * time.Second
)

// WalkGuess follows the listings of entry folders, for a mount that
// guesses whether a walk is listing them.
type WalkGuess struct {
	mu      sync.Mutex
	last    string    // session whose entry folder was listed last
	lastAt  time.Time // when
	run     int       // sessions in a row, each listed within walkGap of the one before
	statted time.Time // when a name listed alone was last looked up
	// Gap and Hold replace walkGap and walkHold when set, before the
	// guess is used.
	Gap, Hold time.Duration
	// Alone counts the names listed without attributes.
	Alone atomic.Int64
}

// GapTime is the longest pause between two sessions of a walk (for
// Options.WalkGap).
func (w *WalkGuess) GapTime() time.Duration {
	gap, _ := w.times()
	return gap
}

func (w *WalkGuess) times() (gap, hold time.Duration) {
	gap, hold = walkGap, walkHold
	if w.Gap > 0 {
		gap = w.Gap
	}
	if w.Hold > 0 {
		hold = w.Hold
	}
	return gap, hold
}

// Listing is told that an entry folder of session key is being listed;
// it says whether to list its files by name alone.
func (w *WalkGuess) Listing(key string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	gap, hold := w.times()
	if now.Sub(w.lastAt) > gap {
		w.run = 0
		w.last = ""
	}
	if key != w.last {
		w.run++
		w.last = key
	}
	w.lastAt = now
	return w.run > walkRun && now.Sub(w.statted) > hold
}

// LookedUp is told that a file listed by name alone was looked up.
func (w *WalkGuess) LookedUp(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.statted = now
	w.run = 0
}
