// Package view is what a pifs mount shows, without FUSE: every folder,
// file and link of the tree (docs/reference.md, "Files") as small values
// that compute their content from the store, the controls that write to it
// and their transactions (docs/reference.md, "Controls"), who may see and
// change what, and what the kernel must be told when the store changes.
//
// It reads the store through packages sessions and tree, keeps parsed
// sessions in package cache and renders through render and usage; package
// nodes serves its values to the kernel.
package view

import (
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/events"
	"github.com/pifs/pifs/search"
	"github.com/pifs/pifs/sessions"
)

// Options configure a view.
type Options struct {
	SessionsDir string
	// TimeZone is the zone of the usage reports' days and months (nil:
	// local).
	TimeZone *time.Location
	// Flat tells that the store is a directory the user chose, where pi
	// writes every session at the top (else one folder per cwd).
	Flat     bool
	ReadOnly bool
	// Shared tells that users other than the mount's may enter it
	// (--allow-other): what each is shown of the store's sessions is
	// then what they may read (see sightOf).
	Shared bool
	// CacheBytes bounds what the mount keeps in memory: parsed sessions
	// and their renderings, what the index holds, the nodes the kernel
	// holds.
	CacheBytes int64
	// Logger receives what cannot be returned: unexpected errors and why
	// writes were refused.
	Logger *slog.Logger
	// Parsed, when set, is told the size of each session file parsed (the
	// command raises the collector's limit for the largest).
	Parsed func(size int64)
	// WalkGap is the longest pause between two sessions of a walk, and
	// WalkHold how long a lookup of a name listed alone turns attributes
	// back on (see walkGuess); zero for 1 s and 5 s.
	WalkGap, WalkHold time.Duration
	// Home is the user's home directory, which pi's /tree writes as "~"
	// in the paths of tool calls (tree.txt); "" for none.
	Home string
	// TxnBytes bounds a transaction: what is written through one open
	// control, and the entries it makes (0: 256 MiB, see txn.MaxBytes).
	TxnBytes int64
	// SpillDir is where a transaction past 1 MiB is kept, in a file
	// that has no name ("": os.TempDir()).
	SpillDir string
	// Search is the store's full-text index, which search/ and by-file/
	// ask (nil: none; those folders say so).
	Search *search.Index
	// SearchOff, when Search is nil, says why the index asked for is off
	// (search/status shows it); "" when none was asked for: no search/.
	SearchOff string
}

// View is what a mount of one store shows.
type View struct {
	opts     Options
	uid, gid uint32
	log      *slog.Logger
	// x is the store's index (the watcher keeps it current), cache the
	// parsed sessions, out what the kernel must be told (see PendingNotices).
	x        *sessions.Index
	cache    *cache.Cache
	out      *outbox
	refused  refusals
	removals removals
	walk     walkGuess
	events   *events.Hub
	// What the views that gather the store keep between changes.
	trash   *trashState
	usage   usageCache
	byNames byNames
	cwdTree cwdTrees
	// searches are the last answers of search/ (see searchFor), byFiles
	// the last folders of by-file/.
	searches search.Answers
	byFiles  search.Folders
	// treeCounts counts the sizes of the /tree views counted (see counts).
	treeCounts atomic.Int64
	moreStats  statsGroups
	// notifying: a goroutine delivers the outbox (see Notifying).
	notifying atomic.Bool
	// listings and lookups count the folders listed and the names looked
	// up (see counts).
	listings, lookups atomic.Int64
	// sights are what each caller sees; sighted counts the sights worked
	// out (see counts).
	sights  sights
	sighted atomic.Int64
	// txnPeak is the most one transaction held in memory (see counts).
	txnPeak atomic.Int64
}

// New makes the view of a mount of o.SessionsDir.
func New(o Options) *View {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	v := &View{opts: o, log: o.Logger, uid: uint32(os.Getuid()), gid: uint32(os.Getgid()),
		x: sessions.NewIndex(o.SessionsDir), out: newOutbox(), trash: sessions.NewTrashList(o.SessionsDir, validTrashName)}
	v.events = events.NewHub(v.x)
	v.walk.Gap, v.walk.Hold = o.WalkGap, o.WalkHold
	v.cache = cache.New(v.x, cache.Options{
		Budget: o.CacheBytes,
		Parsed: o.Parsed,
		Evicted: func(project, name, path string) {
			v.out.put(nil, evictedSession{project, name, path})
		},
		Shed: func(folders []cache.Folder) {
			notices := make([]Notice, 0, len(folders))
			for _, f := range folders {
				notices = append(notices, Notice{[]string{f.Project, f.Session}, ShedNames})
			}
			v.out.putNotices(notices...)
		},
		Others:     v.othersHeld,
		Shown:      validSessionName,
		WalkGap:    v.walk.GapTime,
		ShowsTimes: func(key string) bool { return key == infoName },
	})
	return v
}

// othersHeld is what the views and the search index hold outside the
// cache that the budget covers: the usage reports' records, the index's
// rows.
func (v *View) othersHeld() int64 {
	n := v.usage.Held.Load()
	if v.opts.Search != nil {
		n += v.opts.Search.Held()
	}
	return n
}

// Squeeze asks the session cache to keep n bytes below its budget (see
// cache.Cache.Squeeze).
func (v *View) Squeeze(n int64) { v.cache.Squeeze(n) }

// Index is the store's index, which the watcher keeps current.
func (v *View) Index() *sessions.Index { return v.x }

// Changed counts the changes to the store: what was read while it stayed
// the same is still what the store holds.
func (v *View) Changed() uint64 { return v.x.Changed() }

// txnHeld records that a transaction holds n bytes in memory.
func (v *View) txnHeld(n int64) {
	for {
		p := v.txnPeak.Load()
		if n <= p || v.txnPeak.CompareAndSwap(p, n) {
			return
		}
	}
}
