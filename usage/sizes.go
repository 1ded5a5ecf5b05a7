package usage

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/persist"
	"github.com/pifs/pifs/sessions"
)

// Sizes keeps the sizes of the report files in the persistent cache,
// under a digest of what the reports are over (Digest), so that ls -l of
// usage/ after a remount of an unchanged store builds no report: building
// them decodes every session's records again (0.6 s of CPU for 2,000
// sessions of 1 GB). A size is only given for the very digest it was
// counted under. The zero Sizes keeps nothing.
//
// The digest is the store's, not a project's: a model call copied into
// sessions of two projects (a fork, a clone) counts in the project of the
// one created first, so a project's report depends on the others'.
type Sizes struct {
	mu sync.Mutex
	// gen and digest are the index's version the digest was taken at and
	// the digest (0: none, a session changed too recently to be sure of);
	// taken tells that they are set.
	gen    uint64
	digest uint64
	taken  bool
	// of and sizes are the digest whose sizes are held, and the sizes.
	of    uint64
	sizes map[string][]byte
	// built are the store's reports as they are now, builtOf their
	// digest (0: none).
	built   *Reports
	builtOf uint64
}

// Built tells that reps are the store's reports over files (all: every
// one of them was read), so that Record keeps the sizes counted from them.
func (s *Sizes) Built(reps *Reports, files []*sessions.File, all bool, loc *time.Location) {
	d, ok := Digest(files, loc)
	if !ok || !all {
		d = 0
	}
	s.mu.Lock()
	s.built, s.builtOf = reps, d
	s.mu.Unlock()
}

// Digest is a digest of the versions of the session files the reports are
// over and of the zone their days are in; ok is false when a file changed
// too recently for its version to be sure of (sessions.File.Racy).
func Digest(files []*sessions.File, loc *time.Location) (d uint64, ok bool) {
	h := fnv.New64a()
	h.Write([]byte(ZoneName(loc)))
	var b [8]byte
	for _, f := range files {
		if f.Racy() {
			return 0, false
		}
		h.Write([]byte(f.Path))
		for _, n := range []uint64{f.Sig.Dev, f.Sig.Ino, uint64(f.Sig.Size), uint64(f.Sig.Mtime), uint64(f.Sig.Ctime)} {
			binary.LittleEndian.PutUint64(b[:], n)
			h.Write(b[:])
		}
	}
	// 0 stands for no digest.
	return max(h.Sum64(), 1), true
}

// sizesKey is the record of a store's report sizes in the persistent
// cache: a name no file of the store has.
func sizesKey(store string) string { return store + "\x00usage reports" }

// sizeName is a report file's name among the record's facts: the project
// ("" the store's), the file, and for the chart the day it ends on.
func sizeName(project, name string, now time.Time, loc *time.Location) string {
	k := project + "\x00" + name
	if name == "daily.svg" {
		if loc == nil {
			loc = time.Local // as Build takes it
		}
		k += "\x00" + now.In(loc).Format(time.DateOnly)
	}
	return k
}

// Known is the size and mtime of the report file name of project that an
// earlier count kept for the store as it is at the index's version gen,
// whose files files gives (asked for once per gen, for its digest).
func (s *Sizes) Known(c *persist.Cache, store string, gen uint64, files func() []*sessions.File, loc *time.Location, project, name string, now time.Time) (int64, time.Time, bool) {
	if c == nil {
		return 0, time.Time{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.taken || s.gen != gen {
		d, ok := Digest(files(), loc)
		if !ok {
			d = 0
		}
		s.gen, s.digest, s.taken = gen, d, true
	}
	if s.digest == 0 {
		return 0, time.Time{}, false
	}
	if s.of != s.digest {
		s.of, s.sizes = s.digest, nil
		if rec, ok := c.Get(sizesKey(store)); ok && rec.Version == version(s.digest) {
			s.sizes = rec.Facts
		}
	}
	b, ok := s.sizes[sizeName(project, name, now, loc)]
	if !ok {
		return 0, time.Time{}, false
	}
	d := persist.NewDecoder(b)
	n, mt := d.Varint(), d.Varint()
	if d.Err() != nil || d.Len() != 0 || n < 0 {
		return 0, time.Time{}, false
	}
	return n, time.Unix(0, mt), true
}

// Record keeps the size n and mtime mt of the report file name of
// project, counted from reps: when they are the store's reports as they
// are (Built), under their digest.
func (s *Sizes) Record(c *persist.Cache, store string, reps *Reports, loc *time.Location, project, name string, now time.Time, n int64, mt time.Time) {
	if c == nil {
		return
	}
	var e persist.Encoder
	e.Varint(n)
	e.Varint(mt.UnixNano())
	k := sizeName(project, name, now, loc)
	s.mu.Lock()
	d := s.builtOf
	if reps != s.built || d == 0 {
		s.mu.Unlock()
		return
	}
	if s.of != d {
		s.of, s.sizes = d, nil
	}
	if s.sizes == nil {
		s.sizes = map[string][]byte{}
	}
	if bytes.Equal(s.sizes[k], e.Data()) {
		s.mu.Unlock()
		return // kept already: a report read again is not written again
	}
	s.sizes[k] = e.Data()
	s.mu.Unlock()
	c.Put(sizesKey(store), version(d), map[string][]byte{k: e.Data()})
}

// version is a digest as the persistent cache names a version.
func version(d uint64) persist.Version { return persist.Version{Ino: d} }
