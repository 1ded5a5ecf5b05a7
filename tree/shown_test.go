package tree_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// TestResolveShown: the entry a user names is found by its id (blanks
// around forgiven), by a label, by the names a mount shows for it (alone
// or at the end of a path: entries/<id>.json, branches/<id>/,
// labels/<label>), with ^ for a parent, and by an id built earlier in the
// batch; anything else is no entry.
func TestResolveShown(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}`,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}`,
		`{"type":"message","id":"b/2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[]}}`,
		`{"type":"label","id":"l1","parentId":"b/2","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","label":"the start/1"}`,
	}
	l, err := sessions.Parse([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr := tree.New(l)
	b := tr.NewBuilder()
	if err := b.AppendLine([]byte(`{"type":"message","message":{"role":"user","content":"n"}}`), 0); err != nil {
		t.Fatal(err)
	}
	var built struct{ ID string }
	if len(b.Lines) != 1 || json.Unmarshal(b.Lines[0], &built) != nil || built.ID == "" {
		t.Fatalf("built %q", b.Lines)
	}
	newID := built.ID
	for ref, want := range map[string]string{
		"a1":                       "a1",
		"  a1\t":                   "a1",
		"b/2":                      "b/2",
		"b%2F2":                    "b/2",
		"entries/b%2F2.json":       "b/2",
		"/mnt/p/s/branches/b%2F2/": "b/2",
		"b/2^":                     "a1",
		"the start/1":              "a1",
		"labels/the start%2F1":     "a1",
		newID:                      newID,
		"entries/a1.json":          "a1",
		"nothing":                  "-",
		"entries/nothing.json":     "-",
		"":                         "-",
		"labels/":                  "-",
	} {
		id, ok := tr.ResolveShown(b, ref)
		if !ok {
			id = "-"
		}
		if id != want {
			t.Errorf("%q: %q, want %q", ref, id, want)
		}
	}
	if _, ok := tr.ResolveShown(nil, newID); ok {
		t.Error("an id of the batch found without the batch")
	}
	spelled, texts := tr.ShownLabels()
	if len(spelled) != 1 || spelled[0] != "the start%2F1" || texts[spelled[0]] != "the start/1" {
		t.Errorf("labels %q %q", spelled, texts)
	}
}
