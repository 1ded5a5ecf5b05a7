package view

import (
	"sync"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

// usageCache holds what the usage reports need of each session, kept per
// version of its file so that a report after a change parses only the
// sessions that changed (usage.FactsCache), and the reports of the
// index's current state.
type usageCache struct {
	mu      sync.Mutex // held while reports are built
	gen     uint64
	reports *usage.Reports
	mtime   map[string]time.Time // newest session file per project, "" the store
	// list are the sessions the reports were built from, files their
	// index versions; bySight the reports as each sight sees them (see
	// reportsFor), at the same version.
	list    []usage.Session
	files   []*sessions.File
	bySight map[uint64]sightReports
	// sizes keeps the reports' sizes for the next mount.
	sizes usage.Sizes
	// FactsCache's Scanned counts the sessions read for their records
	// (see counts); its Held is what it holds, in bytes: it counts
	// against the cache's budget (cache.Options.Others).
	usage.FactsCache
}

// keep records what the reports need of a parsed session. ss.mu is held.
func (c *usageCache) keep(ss *session) { c.Keep(ss.File, ss.Log.Entries, ss.Tree.Name()) }
