package view

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/tree"
)

// treeViewFiles are a session folder's six /tree views, as ls -l stats
// them.
func treeViewFiles(s sessionRef) map[string]interface {
	File
	sizer
	costly
} {
	files := map[string]interface {
		File
		sizer
		costly
	}{promptsName: newPromptsFile(s)}
	for _, f := range tree.Filters {
		files[f.FileName()] = newTreeViewFile(s, f)
	}
	return files
}

// TestTreeViewSizesCountedTogether: the first stat of one of the six
// /tree views counts the six at once, each size the length of the view;
// the other five stats count nothing, the sizes stay known after the
// parse leaves the cache, and a new version of the file counts them again,
// once.
func TestTreeViewSizesCountedTogether(t *testing.T) {
	v, proj := costStore(t, 0, 400)
	s := newSessionRef(v, proj, "big")
	files := treeViewFiles(s)
	for name, f := range files {
		if _, _, ok := f.knownSize(); ok {
			t.Fatalf("%s: a size known before any stat", name)
		}
	}
	sizes := map[string]int64{}
	for name, f := range files {
		n, _, err := f.size()
		if err != nil {
			t.Fatal(err)
		}
		sizes[name] = n
		if c := statsOf(t, v).View.TreeCounts; c != 1 {
			t.Fatalf("after the stat of %s: the views counted %d times, want once", name, c)
		}
	}
	for name, f := range files {
		if n, _, ok := f.knownSize(); !ok || n != sizes[name] {
			t.Errorf("%s: known size %d, %v; want %d", name, n, ok, sizes[name])
		}
	}
	// The parse leaves the cache: stat parses and counts nothing.
	s.with(func(ss *session) error { v.cache.Drop(ss); return nil })
	parsed := statsOf(t, v).Cache.Parsed
	for name, f := range files {
		if n, _, err := f.size(); err != nil || n != sizes[name] {
			t.Fatalf("%s after eviction: %d, %v; want %d", name, n, err, sizes[name])
		}
	}
	if p, c := statsOf(t, v).Cache.Parsed-parsed, statsOf(t, v).View.TreeCounts; p != 0 || c != 1 {
		t.Errorf("stats after eviction parsed %d times and counted %d times; want none and once", p, c)
	}
	for name, f := range files {
		data, _, err := f.content()
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != sizes[name] || (len(data) == 0 && name != tree.FilterLabeledOnly.FileName()) {
			t.Errorf("%s: %d bytes, size %d", name, len(data), sizes[name])
		}
	}
	// A new version counts again, once for the six.
	m, err := s.meta()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := os.OpenFile(m.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd.WriteString(`{"type":"message","id":"new1","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"one more prompt","timestamp":1}}` + "\n")
	fd.Close()
	if len(v.x.Update(filepath.Clean(m.Path))) == 0 {
		t.Fatal("the index saw no change")
	}
	for name, f := range files {
		n, _, err := f.size()
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := f.content()
		if err != nil || int64(len(data)) != n {
			t.Errorf("%s after an append: size %d, %d bytes (%v)", name, n, len(data), err)
		}
		if name == promptsName && n <= sizes[name] {
			t.Errorf("prompts.txt did not grow with a prompt: %d, was %d", n, sizes[name])
		}
	}
	if c := statsOf(t, v).View.TreeCounts; c != 2 {
		t.Errorf("the views of two versions counted %d times, want twice", c)
	}
}
