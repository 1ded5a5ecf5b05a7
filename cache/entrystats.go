package cache

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// EntryStats is what stat shows of the entry files of a session, by the
// entries' Seq, counted when first asked: an entry has a file in
// entries/, in every branches/<id>/ whose path holds it and in tree/, and
// `ls -l` of each counts its size and reads its timestamp once. An entry
// never changes once written, so the table is kept from a version to the
// next while the file only grows (see Refresh): after an append, only
// the new entries are counted.
type EntryStats struct {
	stats   []entryStat
	counted *atomic.Int64 // the cache's count of sizes counted (Stats.EntrySizes)
}

// entryStat is an entry file's size and mtime (UnixNano); 0 for what is
// not counted yet, noMtime for an entry without a valid timestamp. A node
// made by a listing reads it without the session's lock: its fields are
// atomic, and two that count at once count alike.
type entryStat struct{ sizeN, mtimeN atomic.Int64 }

// EntryStat is one entry's place in EntryStats.
type EntryStat struct {
	st      *entryStat // nil: none, counted every time
	counted *atomic.Int64
}

const noMtime = math.MinInt64

// entryStatsKey is the table's key among a session's renderings.
const entryStatsKey = "entry stats"

// EntryStatsOf is the table of s's version, made at the first call: what
// the version before it counted, when the file only grew, and room for
// the new entries. s.mu is held.
func EntryStatsOf(c *Cache, s *Session) EntryStats {
	return Rendered(c, s, entryStatsKey, func(t EntryStats) int64 { return int64(len(t.stats)) * int64(unsafe.Sizeof(entryStat{})) },
		func() EntryStats {
			n := 0
			if es := s.Tree.Entries(); len(es) > 0 {
				n = es[len(es)-1].Seq + 1
			}
			t := EntryStats{make([]entryStat, n), &c.entrySizes}
			for i := range min(len(s.grownStats), n) {
				t.stats[i].sizeN.Store(s.grownStats[i].sizeN.Load())
				t.stats[i].mtimeN.Store(s.grownStats[i].mtimeN.Load())
			}
			s.grownStats = nil
			return t
		})
}

// Of is e's place in the table (none when it has none, which counts
// every time).
func (t EntryStats) Of(e *sessions.Entry) EntryStat {
	if e.Seq < 0 || e.Seq >= len(t.stats) {
		return EntryStat{counted: t.counted}
	}
	return EntryStat{&t.stats[e.Seq], t.counted}
}

// Size is the size of e's file: e indented.
func (s EntryStat) Size(e *sessions.Entry) int64 {
	var n int64
	if s.st != nil {
		n = s.st.sizeN.Load()
	}
	if n == 0 {
		n = int64(render.IndentSize(e.Raw))
		if s.counted != nil {
			s.counted.Add(1)
		}
		if s.st != nil {
			s.st.sizeN.Store(n)
		}
	}
	return n
}

// Mtime is the mtime of e's file: its timestamp (zero when not valid).
func (s EntryStat) Mtime(e *sessions.Entry) time.Time {
	if s.st == nil {
		return tree.DateTime(e.Timestamp)
	}
	mt := s.st.mtimeN.Load()
	if mt == 0 {
		mt = noMtime
		if t := tree.DateTime(e.Timestamp); !t.IsZero() {
			mt = t.UnixNano()
		}
		s.st.mtimeN.Store(mt)
	}
	if mt == noMtime {
		return time.Time{}
	}
	return time.Unix(0, mt)
}
