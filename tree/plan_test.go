package tree_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// checkPlan: the context put together from the file's bytes by its plan is
// the context itself, message for message. It returns how many of the
// messages' bytes the plan had to keep.
func checkPlan(t *testing.T, name string, c *tree.Context, l *sessions.Log, file []byte) int {
	t.Helper()
	p := tree.NewPlan(c, int64(len(file)), l.FileOffset, 1<<30)
	if p == nil {
		t.Fatalf("%s: no plan", name)
	}
	from, to := p.Span()
	got, ok := p.Context(file[from:to], from)
	if !ok {
		t.Fatalf("%s: the plan reads outside its span", name)
	}
	if len(got.Messages) != len(c.Messages) {
		t.Fatalf("%s: %d messages, want %d", name, len(got.Messages), len(c.Messages))
	}
	located := 0
	for i, m := range c.Messages {
		if !bytes.Equal(got.Messages[i], m) {
			t.Fatalf("%s: message %d is\n%s\nwant\n%s", name, i, got.Messages[i], m)
		}
		if off, ok := l.FileOffset(m); ok {
			if !bytes.Equal(file[off:off+int64(len(m))], m) {
				t.Fatalf("%s: message %d is not at offset %d of the file", name, i, off)
			}
			located += len(m)
		}
	}
	if !bytes.Equal(got.JSON(), c.JSON()) {
		t.Fatalf("%s: context from the plan differs", name)
	}
	n := 0
	for _, m := range c.Messages {
		n += len(m)
	}
	return n - located
}

// TestPlan: every context of every fixture and demo session, at its leaf
// and at each entry, comes back the same from its plan; in a version 3
// session whose messages are all messages of entries, the plan keeps
// nothing but their places.
func TestPlan(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*.jsonl"))
	demo, _ := filepath.Glob(filepath.Join("..", "testdata", "demo", "*", "*.jsonl"))
	files = append(files, demo...)
	if len(files) < 20 {
		t.Fatalf("%d sessions in testdata", len(files))
	}
	for _, path := range files {
		l, err := sessions.Open(path)
		if err != nil {
			continue // not a session
		}
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tr := tree.New(l)
		checkPlan(t, path, tr.Context(), l, file)
		for _, e := range l.Entries {
			if e.ID != "" {
				checkPlan(t, path+"@"+e.ID, tr.ContextAt(e.ID), l, file)
			}
		}
	}

	var buf bytes.Buffer
	if err := gen.Session(&buf, 400, 300); err != nil {
		t.Fatal(err)
	}
	l, err := sessions.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	c := tree.New(l).Context()
	if len(c.Messages) < 100 {
		t.Fatalf("%d messages", len(c.Messages))
	}
	if kept := checkPlan(t, "generated", c, l, buf.Bytes()); kept != 0 {
		t.Errorf("the plan of a plain session keeps %d bytes of messages, want 0", kept)
	}
	// A session read in pieces, as it grows.
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := buf.Bytes()
	cut := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	grown, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := grown.Refresh(); err != nil {
		t.Fatal(err)
	}
	if kept := checkPlan(t, "grown", tree.New(grown).Context(), grown, data); kept != 0 {
		t.Errorf("the plan of a session read in two pieces keeps %d bytes of messages, want 0", kept)
	}
	// A bound on what it keeps.
	if p := tree.NewPlan(c, int64(len(data)), func([]byte) (int64, bool) { return 0, false }, 1000); p != nil {
		t.Error("a plan that would keep every message was made")
	}
}
