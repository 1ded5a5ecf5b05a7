package view

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/cache"
)

// TestSizesKeptWithVersion: a view's size counted for a version of a
// session file survives the parse leaving the cache (stat then parses
// nothing), and goes with the version: after an append it is counted
// again.
func TestSizesKeptWithVersion(t *testing.T) {
	v, proj := costStore(t, 0, 50)
	s := newSessionRef(v, proj, "big")
	f := newContextFile(s, "", false)
	n, _, err := f.size()
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.meta()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := cache.RecordedSize(m, contextName); !ok || got != n {
		t.Fatalf("recorded %d, %v; want %d", got, ok, n)
	}
	// The parse leaves the cache.
	s.with(func(ss *session) error { v.cache.Drop(ss); return nil })
	parsed := statsOf(t, v).Cache.Parsed
	if again, _, err := f.size(); err != nil || again != n {
		t.Fatalf("size after eviction: %d, %v; want %d", again, err, n)
	}
	if p := statsOf(t, v).Cache.Parsed - parsed; p != 0 {
		t.Errorf("stat after eviction parsed %d times, want none", p)
	}
	// A new version counts again.
	path := m.Path
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd.WriteString(`{"type":"message","id":"new1","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"more","timestamp":1}}` + "\n")
	fd.Close()
	if len(v.x.Update(filepath.Clean(path))) == 0 {
		t.Fatal("the index saw no change")
	}
	m2, err := s.meta()
	if err != nil || m2 == m {
		t.Fatalf("no new version (%v)", err)
	}
	if _, ok := cache.RecordedSize(m2, contextName); ok {
		t.Error("a new version has the size of the old")
	}
}
