package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/fs"
)

// stats are the counts a mount shows in .pifs/stats (docs/reference.md).
type stats struct {
	View struct {
		Listings, Lookups, ListedNamesOnly, Scanned, Sights, TreeCounts, TxnHeld int64
	}
	Cache struct {
		Parsed, Uses, FromPlan, ReadAhead, Nodes, AheadBusy, AheadMade, AheadUnread, AheadGaveUp, ParentSteps int64
	}
	Events struct {
		Readers, Blocked, Queued, MaxQueued, Missed int
		Lines, Scanned                              int64
	}
	Index struct {
		Stats, Headers, FoldersRead, FromCache, Reads int64
	}
	Persist struct {
		Gets, Hits, Folders, FolderRecords, Puts, Flushes, Pruned, Released int64
	}
	Notices struct {
		Notifies, Touched int64
	}
	Files struct {
		RawReads, Passthrough, PassthroughOffered, ViewReads int64
	}
}

// mounted is a mount made in this process, and where it is mounted.
type mounted struct {
	*fs.FS
	t   *testing.T
	mnt string
}

// Stats reads .pifs/stats through the mount, as a user would.
func (m *mounted) Stats() stats {
	m.t.Helper()
	return readStats(m.t, m.mnt)
}

// readStats reads MNT/.pifs/stats.
func readStats(t *testing.T, mnt string) stats {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(mnt, ".pifs", "stats"))
	if err != nil {
		t.Fatal(err)
	}
	var s stats
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf(".pifs/stats: %v: %s", err, data)
	}
	return s
}
