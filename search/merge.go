package search

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// FTS5 writes each commit's terms as a segment of its own and merges
// segments level by level as it goes (its automerge), so a first build
// leaves each text table in a dozen or more segments. Every segment costs
// each seek a lookup for each term: a project's search, a seek for each
// of its sessions, took 2 to 4 times as long on 17 segments as on one.
// So when the builder has nothing else to do and a table's segments
// other than its largest have grown to an eighth of it (mergeWanted),
// the table is merged into one segment, in steps of mergePages pages,
// each its own transaction, taking the changes told between steps. A
// table is thus rewritten once it has grown by an eighth since it was
// last merged: about nine times the text added, at the builder's low
// priority, and never while the store is quiet.

// mergePages is how many pages (about 4 KB each) a merge step writes:
// 100 to 200 ms of work, the longest a change told waits for one.
const mergePages = 1000

// mergeFraction: a table is merged when its segments but the largest
// hold at least 1/mergeFraction of the largest's pages.
const mergeFraction = 8

// merging is the builder's state of merging.
type merging struct {
	// checked is the batch commits counted, plus one, when the tables
	// were last looked at (0: never): they are looked at when the builder
	// first runs out of work and again after each commit.
	checked int
	// tables are those left to merge, the first under way; started is
	// when it began, first tells that its first step is next, steps
	// counts them.
	tables  []string
	started time.Time
	first   bool
	steps   int
	// tidy are the tables left to tidy (tidy.go), the first under way.
	tidy []string
}

// mergeWanted tells whether a table whose segments have these sizes
// (in any unit) is merged.
func mergeWanted(sizes []int64) bool {
	if len(sizes) < 2 {
		return false
	}
	var sum int64
	for _, s := range sizes {
		sum += s
	}
	big := slices.Max(sizes)
	return (sum-big)*mergeFraction >= big
}

// mergeStep writes up to |pages| pages of a merge of table's segments,
// in a transaction of its own: a negative count starts a merge of all of
// them, a positive one goes on with it. It tells whether there is more
// to do (FTS5 counts two changes or more for a step that did work).
func (x *Index) mergeStep(table string, pages int) (bool, error) {
	tx, err := x.w.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var before, after int64
	if err := tx.QueryRow(`SELECT total_changes()`).Scan(&before); err != nil {
		return false, err
	}
	if _, err := tx.Exec(`INSERT INTO `+table+`(`+table+`, rank) VALUES('merge', ?)`, pages); err != nil {
		return false, err
	}
	if err := tx.QueryRow(`SELECT total_changes()`).Scan(&after); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	x.stats.mergeSteps.Add(1)
	return after-before >= 2, nil
}

// mergeSettle is how long after its last commit the builder waits before
// it looks for segments to merge: while pi appends, a turn at a time,
// merges wait for a pause instead of running between the commits.
const mergeSettle = time.Second

// mergeWait is how long the builder still waits before it looks for
// segments to merge (0: it looks now); a merge under way goes on at once.
func (b *builder) mergeWait() time.Duration {
	m := &b.merging
	if len(m.tables) > 0 || len(m.tidy) > 0 || m.checked == b.batch.commits+1 {
		return 0
	}
	return b.x.mergeSettle - time.Since(b.batch.committed)
}

// merge does one step of merging the text tables (see above) and tells
// whether it did; false when there is nothing to merge.
func (b *builder) merge() bool {
	x, m := b.x, &b.merging
	b.commit() // the writer's one connection is the steps'
	if len(m.tables) == 0 && len(m.tidy) == 0 {
		if m.checked == b.batch.commits+1 {
			return false
		}
		m.checked = b.batch.commits + 1
		var counts []string
		for _, t := range []string{tableTri, tableWords} {
			levels, err := x.structure(t)
			var sizes []int64
			for _, l := range levels {
				sizes = append(sizes, l.sizes...)
			}
			if err != nil {
				x.log(fmt.Sprintf("search index: the segments of %s: %v", t, err))
				continue
			}
			if mergeWanted(sizes) {
				m.tables = append(m.tables, t)
				counts = append(counts, fmt.Sprintf("%s %d", t, len(sizes)))
			} else {
				m.tidy = append(m.tidy, t)
			}
		}
		if len(m.tables) > 0 {
			m.started, m.first, m.steps = time.Now(), true, 0
			x.info("search index: merging segments into one (" + strings.Join(counts, ", ") + ")")
		}
	}
	if len(m.tables) == 0 {
		for len(m.tidy) > 0 && !x.noTidy {
			did, err := x.tidyStep(m.tidy[0])
			if err != nil {
				x.log(fmt.Sprintf("search index: tidying %s: %v", m.tidy[0], err))
			}
			if did && err == nil {
				return true
			}
			m.tidy = m.tidy[1:]
		}
		m.tidy = nil
		return false
	}
	t := m.tables[0]
	pages := mergePages
	if m.first {
		pages = -pages
	}
	_, err := x.mergeStep(t, pages)
	more := false
	if err == nil {
		// Done once no merge is under way: a further 'merge' would start
		// another, of segments written meanwhile, and could climb up to
		// the one just made.
		more, err = x.mergeUnderWay(t)
	}
	if err != nil {
		// Left for the next time something is committed; FTS5 goes on
		// with a merge begun.
		x.log(fmt.Sprintf("search index: merging %s: %v", t, err))
		m.tables = nil
		return false
	}
	m.first = false
	m.steps++
	if !more {
		m.tables, m.first = m.tables[1:], true
		if len(m.tables) == 0 {
			x.info(fmt.Sprintf("search index: segments merged in %d steps, %s", m.steps, time.Since(m.started).Round(time.Millisecond)))
			x.stats.merges.Add(1)
		}
	}
	return true
}
