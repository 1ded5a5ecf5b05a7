package search

import (
	"encoding/binary"
	"errors"
)

// Between the merges into one segment (merge.go), each commit of the
// builder (an append told, a batch of the first build) writes a segment
// of its own at level 0, and FTS5 merges a level only once it holds four
// segments and the writes since have added up to 64 pages (its automerge),
// or sixteen (its crisis merge): a store that pi appends to keeps 6 to 19
// segments, and a project's search, a seek a session in each, took 73 ms
// on store B in 6 segments against 42 ms in one. So after each commit,
// when the builder has nothing else to do, the levels below the one that
// holds the table's largest segment are tidied as FTS5 would in time, but
// at once: level 0 when it holds two segments, a level above it when it
// holds four, one page a transaction. The largest segment is never
// rewritten this way (only an eighth more is worth that, merge.go): each
// byte of the small segments is rewritten once a level, and a level is
// four times the one below.

// structureID is the row of a table's %_data that holds its structure:
// its levels and their segments, the merge under way.
const structureID = 10

// errStructure is a structure record that does not parse.
var errStructure = errors.New("search: the structure of a text table does not parse")

// ftsLevel is a level of a text table: merging is how many of its
// segments (the oldest) a merge under way reads, sizes the pages each
// segment holds, oldest first.
type ftsLevel struct {
	merging int
	sizes   []int64
}

// parseStructure reads a table's structure record (fts5_index.c: a 4-byte
// cookie; for tables with contentless_delete the bytes FF 00 00 01; the
// number of levels, of segments and the write counter; then for each
// level the segments an ongoing merge reads and the number of segments,
// and for each segment its id, first and last leaf page, and with FF 00
// 00 01 five counters more), as varints.
func parseStructure(rec []byte) ([]ftsLevel, error) {
	if len(rec) < 4 {
		return nil, errStructure
	}
	b, more := rec[4:], 0
	if len(b) >= 4 && binary.BigEndian.Uint32(b) == 0xff000001 {
		b, more = b[4:], 5
	}
	next := func() (int64, bool) {
		v, k := sqliteVarint(b)
		if k == 0 || v > 1<<40 {
			return 0, false
		}
		b = b[k:]
		return int64(v), true
	}
	nLevel, ok1 := next()
	nSeg, ok2 := next()
	_, ok3 := next()
	if !ok1 || !ok2 || !ok3 || nLevel > 64 {
		return nil, errStructure
	}
	levels := make([]ftsLevel, nLevel)
	seen := int64(0)
	for i := range levels {
		merging, ok1 := next()
		n, ok2 := next()
		if !ok1 || !ok2 || merging > n || seen+n > nSeg {
			return nil, errStructure
		}
		levels[i].merging = int(merging)
		for range n {
			_, ok1 := next()
			first, ok2 := next()
			last, ok3 := next()
			if !ok1 || !ok2 || !ok3 || last < first-1 {
				return nil, errStructure
			}
			for range more {
				if _, ok := next(); !ok {
					return nil, errStructure
				}
			}
			levels[i].sizes = append(levels[i].sizes, last-first+1)
		}
		seen += n
	}
	if seen != nSeg || len(b) != 0 {
		return nil, errStructure
	}
	return levels, nil
}

// nextMerged is the level FTS5's 'merge' command reads from, with its
// usermerge at 2: the level of a merge under way, unless a level below it
// holds more segments; else the lowest of those that hold the most, when
// they are 2 or more; -1 when there is none.
func nextMerged(levels []ftsLevel) int {
	best, n := -1, 0
	for i, l := range levels {
		if l.merging > 0 {
			if l.merging > n {
				best, n = i, 2
			}
			break
		}
		if len(l.sizes) > n {
			best, n = i, len(l.sizes)
		}
	}
	if n < 2 {
		return -1
	}
	return best
}

// largestLevel is the level that holds the table's largest segment (-1:
// none).
func largestLevel(levels []ftsLevel) int {
	at, most := -1, int64(-1)
	for i, l := range levels {
		for _, s := range l.sizes {
			if s > most {
				at, most = i, s
			}
		}
	}
	return at
}

// tidyWanted tells whether the next merge of a table of these levels is
// a tidying one: of a level below the largest segment's, begun or with two
// segments at level 0, four above.
func tidyWanted(levels []ftsLevel) bool {
	lvl := nextMerged(levels)
	if lvl < 0 || lvl >= largestLevel(levels) {
		return false
	}
	l := levels[lvl]
	return l.merging > 0 || lvl == 0 || len(l.sizes) >= 4
}

// structure reads a table's levels.
func (x *Index) structure(table string) ([]ftsLevel, error) {
	var rec []byte
	if err := x.w.QueryRow(`SELECT block FROM `+table+`_data WHERE id = ?`, structureID).Scan(&rec); err != nil {
		return nil, err
	}
	return parseStructure(rec)
}

// mergeUnderWay tells whether a merge of table's segments is under way.
func (x *Index) mergeUnderWay(table string) (bool, error) {
	levels, err := x.structure(table)
	if err != nil {
		return false, err
	}
	for _, l := range levels {
		if l.merging > 0 {
			return true, nil
		}
	}
	return false, nil
}

// tidyStep does one page of the next tidying merge of table (see above),
// and tells whether there was one.
func (x *Index) tidyStep(table string) (bool, error) {
	levels, err := x.structure(table)
	if err != nil || !tidyWanted(levels) {
		return false, err
	}
	if _, err := x.mergeStep(table, 1); err != nil {
		return false, err
	}
	return true, nil
}
