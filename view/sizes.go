package view

import (
	"maps"
	"sync"

	"github.com/pifs/pifs/sessions"
)

// viewSizes are the sizes of the views of one version of a session file,
// by view (its file name): kept with the version (sessions.File.Memo), so
// that stat never renders a view twice while the file is unchanged,
// however often the parsed session leaves the cache, and a new version
// counts again.
type viewSizes struct {
	mu sync.Mutex
	n  map[string]int64
}

// sizesOf is f's sizes; nil when none was recorded and make is false.
func sizesOf(f *sessions.File, make bool) *viewSizes {
	var mk func() any
	if make {
		mk = func() any { return &viewSizes{n: map[string]int64{}} }
	}
	s, _ := f.Memo(mk).(*viewSizes)
	return s
}

// recordedSize is the size recorded for view of version f.
func recordedSize(f *sessions.File, view string) (int64, bool) {
	s := sizesOf(f, false)
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.n[view]
	return n, ok
}

// recordSize records the size of view of version f.
func recordSize(f *sessions.File, view string, n int64) {
	s := sizesOf(f, true)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n[view] = n
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
	for k, v := range sizes {
		if _, ok := to.n[k]; !ok {
			to.n[k] = v
		}
	}
}
