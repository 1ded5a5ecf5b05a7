package main

import (
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
