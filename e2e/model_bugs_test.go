package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelLabelSetLast (a case of TestModel, cut down; its seed is in
// testdata/model/seeds.txt): when two entries carry one label text, the
// README gives labels/NAME (and `leaf < NAME`) to the one whose label was
// set last, not to the last in the order of pi's label Map, where an entry
// that is relabelled keeps its first place.
func TestModelLabelSetLast(t *testing.T) {
	store, _ := writeStore(t)
	s := sessionPath(testMount(t, store))
	// a1 is labelled first (with another text), b1 then gets "shared", and
	// last a1 is relabelled "shared": a1 was labelled last.
	for _, line := range []string{
		`{"type":"label","targetId":"a1","label":"first"}`,
		`{"type":"label","targetId":"b1","label":"shared"}`,
		`{"type":"label","targetId":"a1","label":"shared"}`,
	} {
		if err := writeControl(filepath.Join(s, "append"), line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if target, err := os.Readlink(filepath.Join(s, "labels", "shared")); err != nil || filepath.Base(target) != "a1.json" {
		t.Errorf("labels/shared -> %q (%v), want the entry labelled last, a1", target, err)
	}
	if err := writeControl(filepath.Join(s, "leaf"), "shared\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(readText(t, filepath.Join(s, "leaf"))); got != "a1" {
		t.Errorf("leaf < shared moved to %q, want a1", got)
	}
}

// TestModelRewriteEntryFile (a situation of TestModel, cut down): an entry
// rewritten in place (a second same-length rewrite of one message's text,
// the entry also present, by id, in a fork of the session) shows in its
// entry file each time, not the old bytes the kernel may keep, as it shows
// in pi and in context.json.
func TestModelRewriteEntryFile(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	entry := filepath.Join(s, "entries", "a1.json")
	// A fork holds the same entry (same id, same bytes).
	path, err := forkThrough(filepath.Join(s, "fork"), "\n")
	if err != nil {
		t.Fatal(err)
	}
	forked := filepath.Join(mnt, path, "entries", "a1.json")
	for i, text := range []string{"hellO", "HellO", "HeLlO"} {
		readText(t, entry) // in the page cache
		readText(t, forked)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		at := strings.Index(string(data), `"content":"`) + len(`"content":"`)
		f, err := os.OpenFile(file, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt([]byte(text), int64(at))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "context.json shows the rewrite", func() (bool, string) {
			c := readText(t, filepath.Join(s, "context.json"))
			return strings.Contains(c, text), c
		})
		if got := readText(t, entry); !strings.Contains(got, `"`+text+`"`) {
			t.Errorf("rewrite %d: entries/a1.json still says %s after context.json shows %q", i+1, got, text)
		}
	}
}
