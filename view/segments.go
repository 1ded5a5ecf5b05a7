package view

import (
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// segmentDir is tree/ (first == "") or one segment in it: a run of entries
// each with exactly one child, named by its first entry, holding its
// entries' files and one folder per segment that starts where it forks.
type segmentDir struct {
	inSession
	first string
	ino   names.Hash // what the numbers in tree/ start with
}

func newSegmentDir(s sessionRef, first string) *segmentDir {
	return &segmentDir{inSession{s}, first, s.inoBase().With(treeName)}
}

// segmentTable is tree/ for one version of a session, made once
// (tree.SegmentTable): by the first entry's id, "" for tree/ itself.
func segmentTable(v *View, ss *session) map[string]*tree.SegmentInfo {
	return cache.Rendered(v.cache, ss, "segments", func(m map[string]*tree.SegmentInfo) int64 { return 96 * int64(len(m)+ss.Tree.Len()) },
		ss.Tree.SegmentTable)
}

// segment returns the segment's entries, the position of the first on its
// root path, and the segments that start below it (the roots for tree/).
func (d *segmentDir) segment(v *View, ss *session) (nodes []*tree.Node, pos int, next []*tree.Node, err error) {
	info := segmentTable(v, ss)[d.first]
	if info == nil {
		return nil, 0, nil, ErrNotFound
	}
	return info.Nodes, info.Pos, info.Next, nil
}

func (d *segmentDir) mtime() (time.Time, error) {
	if d.first == "" {
		return d.s.activity()
	}
	var mt time.Time
	err := d.s.with(func(ss *session) error {
		nodes, _, _, err := d.segment(d.s.v, ss)
		if err != nil {
			return err
		}
		stats := cache.EntryStatsOf(d.s.v.cache, ss)
		for _, n := range nodes {
			if t := stats.Of(n.Entry).Mtime(n.Entry); t.After(mt) {
				mt = t
			}
		}
		return nil
	})
	if err == nil && mt.IsZero() {
		return d.s.activity()
	}
	return mt, err
}

func (d *segmentDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		nodes, pos, next, err := d.segment(d.s.v, ss)
		if err != nil {
			return err
		}
		stats := cache.EntryStatsOf(d.s.v.cache, ss)
		for i, n := range nodes {
			out = append(out, d.entry(pos+i, n.Entry, stats))
		}
		for _, n := range next {
			out = append(out, d.sub(n.ID))
		}
		return nil
	})
	return out, err
}

func (d *segmentDir) lookup(name string) (Child, error) {
	var c Child
	err := d.s.with(func(ss *session) error {
		nodes, pos, next, err := d.segment(d.s.v, ss)
		if err != nil {
			return err
		}
		if p, ok := names.PathPos(name); ok && strings.HasSuffix(name, jsonExt) {
			if i := p - pos; i >= 0 && i < len(nodes) && pathFileName(p, nodes[i].Entry) == name {
				c = d.entry(p, nodes[i].Entry, cache.EntryStatsOf(d.s.v.cache, ss))
				return nil
			}
		}
		for _, n := range next {
			if names.Encode(n.ID) == name {
				c = d.sub(n.ID)
				return nil
			}
		}
		return ErrNotFound
	})
	return c, err
}

func (d *segmentDir) entry(pos int, e *sessions.Entry, stats cache.EntryStats) Child {
	return entryChild(d.s, pathFileName(pos, e), entryIno(d.ino.With(entriesName), e), e, stats)
}

func (d *segmentDir) sub(id string) Child {
	s := d.s
	return Child{names.Encode(id), syscall.S_IFDIR, d.ino.With(id).Ino(), func() Node { return newSegmentDir(s, id) }}
}
func (d *segmentDir) entryFiles() {}
