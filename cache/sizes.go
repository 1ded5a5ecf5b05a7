package cache

import (
	"maps"
	"slices"
	"sync"

	"github.com/pifs/pifs/internal/persist"
	"github.com/pifs/pifs/sessions"
)

// factSizes is the name under which the sizes are kept in the persistent
// cache (sessions.File.SetFact), so that a remount of an unchanged store
// answers ls -l without rendering.
const factSizes = "view.sizes"

// viewSizes are the sizes of the views of one version of a session file,
// by view (its file name): kept with the version (sessions.File.Memo), so
// that stat never renders a view twice while the file is unchanged,
// however often the parsed session leaves the cache, and a new version
// counts again.
type viewSizes struct {
	mu sync.Mutex
	n  map[string]int64
}

// sizesOf is f's sizes, first taken from the persistent cache; nil when
// none was recorded or kept and make is false.
func sizesOf(f *sessions.File, make bool) *viewSizes {
	s, _ := f.Memo(func() any {
		if b, ok := f.Fact(factSizes); ok {
			if n, ok := decodeSizes(b); ok {
				return &viewSizes{n: n}
			}
		}
		if !make {
			return nil
		}
		return &viewSizes{n: map[string]int64{}}
	}).(*viewSizes)
	return s
}

// RecordedSize is the size recorded for view of version f.
func RecordedSize(f *sessions.File, view string) (int64, bool) {
	s := sizesOf(f, false)
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.n[view]
	return n, ok
}

// RecordSize records the size of view of version f.
func RecordSize(f *sessions.File, view string, n int64) {
	RecordSizes(f, map[string]int64{view: n})
}

// RecordSizes records the sizes of views of version f, by view.
func RecordSizes(f *sessions.File, sizes map[string]int64) {
	s := sizesOf(f, true)
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for view, n := range sizes {
		if old, ok := s.n[view]; !ok || old != n {
			s.n[view] = n
			changed = true
		}
	}
	if changed {
		f.SetFact(factSizes, encodeSizes(s.n))
	}
}

// keepSizes gives version f the sizes recorded for an earlier version,
// old, whose bytes turned out the same (a version taken again only because
// it was racy).
func keepSizes(f, old *sessions.File) {
	if old == nil || old == f {
		return
	}
	from := sizesOf(old, false)
	if from == nil {
		return
	}
	from.mu.Lock()
	sizes := maps.Clone(from.n)
	from.mu.Unlock()
	to := sizesOf(f, true)
	to.mu.Lock()
	defer to.mu.Unlock()
	added := false
	for k, v := range sizes {
		if _, ok := to.n[k]; !ok {
			to.n[k] = v
			added = true
		}
	}
	if added {
		f.SetFact(factSizes, encodeSizes(to.n))
	}
}

func encodeSizes(m map[string]int64) []byte {
	var e persist.Encoder
	keys := slices.Sorted(maps.Keys(m))
	e.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.String(k)
		e.Varint(m[k])
	}
	return e.Data()
}

func decodeSizes(b []byte) (map[string]int64, bool) {
	d := persist.NewDecoder(b)
	n := d.Uvarint()
	if d.Err() != nil || n > uint64(len(b)) {
		return nil, false
	}
	m := make(map[string]int64, n)
	for range n {
		k := d.Text()
		m[k] = d.Varint()
	}
	return m, d.Err() == nil && d.Len() == 0
}

// SizeOf is the size of the rendering key of the session's version: the
// one recorded with its file, the held rendering's, or counted by count;
// it is recorded with the file. s.mu is held.
func SizeOf(s *Session, key string, count func(*Session) int64) int64 {
	if n, ok := RecordedSize(s.File, key); ok {
		return n
	}
	var n int64
	if data, ok := s.renders[key].([]byte); ok {
		n = int64(len(data))
	} else {
		n = count(s)
	}
	RecordSize(s.File, key, n)
	return n
}
