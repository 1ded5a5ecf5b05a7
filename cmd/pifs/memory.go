package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// memory keeps the Go heap near the cache's budget. What the mount keeps
// is counted in bytes against the budget (the store fills three quarters
// of it), and the collector returns the rest: the heap's limit is the
// budget and 40 MiB, for what is not heap (stacks, the runtime) and work
// in flight. A session is read whole while it is parsed and its views
// rendered, so the limit is raised by one and a half times the size of a
// session too large for that slack as it is parsed. Once the mount gives
// that session up, the limit comes down again and the memory goes back to
// the system at once: the bound holds idle, not only at the peak.
type memory struct {
	base  int64
	slack int64 // what the base leaves over the store's share of the budget
	every time.Duration

	mu       sync.Mutex
	limit    int64
	lowering bool

	// squeezed is what the cache was last asked to keep below its
	// budget (see watch); only the goroutine watch starts uses it.
	squeezed int64
}

func newMemory(budget int64) *memory {
	m := &memory{base: budget + 40<<20, slack: budget/4 + 40<<20, every: 5 * time.Second}
	m.limit = m.base
	debug.SetMemoryLimit(m.base)
	return m
}

// parsed is told the size of each session file the mount parses.
func (m *memory) parsed(size int64) {
	if size+size/2 <= m.slack {
		return
	}
	want := m.base + size + size/2
	m.mu.Lock()
	defer m.mu.Unlock()
	if want <= m.limit {
		return
	}
	m.limit = want
	debug.SetMemoryLimit(want)
	if !m.lowering {
		m.lowering = true
		go m.lower()
	}
}

// lower runs while the limit is above the base: every few seconds it
// collects, returns the free memory to the system, and lowers the limit to
// what is live and the slack, never below the base.
func (m *memory) lower() {
	t := time.NewTicker(m.every)
	defer t.Stop()
	for range t.C {
		debug.FreeOSMemory()
		live := liveHeap()
		m.mu.Lock()
		if want := max(m.base, live+m.slack); want < m.limit {
			m.limit = want
			debug.SetMemoryLimit(want)
		}
		done := m.limit <= m.base
		m.lowering = !done
		m.mu.Unlock()
		if done {
			return
		}
	}
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// watch has the cache keep the collector room to work in: after each
// collection it compares what the heap holds (what was found live, the
// holes among it, the runtime's own) with the limit, and when less than
// an eighth of the base is left over it asks the cache (squeeze) to keep
// that much more below its budget; with more than twice that left over it
// gives the cache some back. Without that room a heap that fills its limit
// is collected at every allocation (see cache.Cache.Squeeze). It costs
// nothing while nothing is collected.
func (m *memory) watch(squeeze func(int64)) {
	gc := make(chan struct{}, 1)
	armGC(gc)
	go func() {
		for range gc {
			m.afterGC(squeeze)
		}
	}()
}

// gcMark is an object made to be collected: its cleanup tells that a
// collection ran. It is larger than the runtime's tiny objects, which
// share a slot and may never be cleaned up alone.
type gcMark [32]byte

// armGC has the next collection send on gc (without waiting) and arm
// the one after.
func armGC(gc chan struct{}) {
	runtime.AddCleanup(new(gcMark), func(gc chan struct{}) {
		select {
		case gc <- struct{}{}:
		default:
		}
		armGC(gc)
	}, gc)
}

// memClasses are the runtime's measures of what the heap's limit covers
// (see afterGC).
var memClasses = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/live:bytes",
}

func (m *memory) afterGC(squeeze func(int64)) {
	s := make([]metrics.Sample, len(memClasses))
	for i := range s {
		s[i].Name = memClasses[i]
	}
	metrics.Read(s)
	v := make([]int64, len(s))
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return
		}
		v[i] = int64(s[i].Value.Uint64())
	}
	total, released, free, objects, live := v[0], v[1], v[2], v[3], v[4]
	// What the collector's goal leaves room for: the limit less the
	// runtime's margin (3%), less all the heap holds but its objects,
	// less what was found live.
	held := total - released - free - objects + live
	m.mu.Lock()
	limit := m.limit
	m.mu.Unlock()
	room := limit - limit*3/100 - held
	next := nextSqueeze(m.squeezed, room, m.base)
	if next == m.squeezed {
		return
	}
	m.squeezed = next
	squeeze(next)
}

// nextSqueeze is what the cache is asked to keep below its budget when a
// collection leaves room bytes under the limit and it was asked to keep
// squeezed: the room wanted is an eighth of the base; the cache gives up
// what is missing, at most half the base, and takes back what is more than
// twice that, down to one and a half times it.
func nextSqueeze(squeezed, room, base int64) int64 {
	want := base / 8
	switch {
	case room < want:
		return min(squeezed+want-room, base/2)
	case room > 2*want:
		return max(squeezed-(room-want*3/2), 0)
	}
	return squeezed
}
