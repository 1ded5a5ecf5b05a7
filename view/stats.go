package view

import (
	"sync"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/names"
)

// MOUNT/.pifs/stats: the counts of the work a mount has done since it
// started, for a look at a running mount (and for tests that guard a
// cost): one JSON object with a member per part of pifs ("view", "cache",
// "events", "index", and those the layers above add: the kernel's notices,
// the persistent cache), each an object of counters. .pifs/ is looked up,
// never listed: a walk (find, grep -r, tar) of the mount does not go there.

// counts are the view's own counters (see stats).
type counts struct {
	// Listings is the folders listed, Lookups the names looked up, and
	// ListedNamesOnly the names listed without attributes because a walk
	// was listing (see walkGuess).
	Listings, Lookups, ListedNamesOnly int64
	// Scanned is the sessions read for the usage reports without a parse.
	Scanned int64
	// Sights is how many times what a caller sees of the store was
	// worked out (once per identity and version of the index).
	Sights int64
	// TreeCounts is how many times the sizes of a session's six /tree
	// views (tree*.txt, prompts.txt) were counted, all six at once.
	TreeCounts int64
	// TxnHeld is the most one transaction held in memory at once: its
	// unfinished line, and its lines and entries not in a temporary file
	// (see package spill).
	TxnHeld int64
}

// statsGroups are the groups of counters the layers above the view add.
type statsGroups struct {
	mu     sync.Mutex
	names  []string
	counts []func() any
}

// AddStats adds a group of counters to .pifs/stats: read returns a struct
// (or a pointer to one) whose exported integer fields, or atomic.Int64
// fields, are the counters.
func (v *View) AddStats(group string, read func() any) {
	v.moreStats.mu.Lock()
	defer v.moreStats.mu.Unlock()
	v.moreStats.names = append(v.moreStats.names, group)
	v.moreStats.counts = append(v.moreStats.counts, read)
}

// stats is .pifs/stats's content.
func (v *View) stats() []byte {
	var o jsjson.Builder
	o.Raw("view", jsjson.Counters(counts{
		Listings:        v.listings.Load(),
		Lookups:         v.lookups.Load(),
		ListedNamesOnly: v.walk.Alone.Load(),
		Scanned:         v.usage.Scanned.Load(),
		Sights:          v.sighted.Load(),
		TreeCounts:      v.treeCounts.Load(),
		TxnHeld:         v.txnPeak.Load(),
	}))
	o.Raw("cache", jsjson.Counters(v.cache.Stats()))
	o.Raw("events", jsjson.Counters(v.events.Stats()))
	o.Raw("index", jsjson.Counters(v.x.Stats()))
	v.moreStats.mu.Lock()
	names, reads := v.moreStats.names, v.moreStats.counts
	v.moreStats.mu.Unlock()
	for i, name := range names {
		o.Raw(name, jsjson.Counters(reads[i]()))
	}
	return append(o.Bytes(), '\n')
}

const (
	pifsName  = ".pifs"
	statsName = "stats"
)

// pifsDir is .pifs/: what pifs tells of itself.
type pifsDir struct{ inRoot }

func (d *pifsDir) list() ([]Child, error) { return []Child{d.stats()}, nil }

func (d *pifsDir) lookup(name string) (Child, error) {
	if name == statsName {
		return d.stats(), nil
	}
	return Child{}, ErrNotFound
}

func (d *pifsDir) mtime() (time.Time, error) { return dirMtime(d.v.opts.SessionsDir) }

func (d *pifsDir) stats() Child {
	return Child{statsName, syscall.S_IFREG, names.Ino(pifsName, statsName), func() Node { return &statsFile{d.inRoot} }}
}

func pifsChild(v *View) Child {
	return Child{pifsName, syscall.S_IFDIR, names.Ino(pifsName), func() Node { return &pifsDir{inRoot{v}} }}
}

// statsFile is .pifs/stats: the counts as they are when it is read.
type statsFile struct{ inRoot }

func (f *statsFile) content() ([]byte, time.Time, error) { return f.v.stats(), time.Now(), nil }
