package view

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// noticeStore is a view of one named session of a project, held parsed.
func noticeStore(t *testing.T) (v *View, project, file string) {
	t.Helper()
	project = "--home-u-p--"
	v = aheadStore(t, []string{project}, 1)
	if _, err := v.sessionFiles(project); err != nil {
		t.Fatal(err)
	}
	f, err := v.meta(project, "s000")
	if err != nil {
		t.Fatal(err)
	}
	appendLine(t, f.Path, `{"type":"session_info","id":"nm000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","name":"a name"}`)
	v.Index().Look(f.Path)
	if _, _, err := newContextFile(newSessionRef(v, project, "s000"), "", false).content(); err != nil {
		t.Fatal(err)
	}
	return v, project, f.Path
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func noticeStrings(ns []Notice) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%d %s", n.Do, strings.Join(n.Path, "/")))
	}
	return out
}

// TestNoticesOfAnAppend: appends to a named session held parsed tell the
// kernel of its own by-name/ link, never of the whole folder, even when
// the version the index had before was never read (two appends, one
// look each, no read between); the watcher's look again at a racy file
// whose bytes are those the session holds tells nothing.
func TestNoticesOfAnAppend(t *testing.T) {
	v, project, file := noticeStore(t)
	msg := func(i int) string {
		return fmt.Sprintf(`{"type":"message","id":"ap%06d","parentId":"nm000001","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"x","timestamp":1}}`, i)
	}
	appendLine(t, file, msg(1))
	v.Index().Look(file) // a version no reader brought the session to
	appendLine(t, file, msg(2))
	changes := v.Index().Look(file)
	if len(changes) != 1 || changes[0].Old.NameKnown() {
		t.Fatalf("changes %v: want one, from a version whose name was never read", changes)
	}
	got := noticeStrings(v.Notices(changes))
	if want := fmt.Sprintf("%d %s/%s/a name", Refresh, project, byNameName); !slices.Contains(got, want) {
		t.Errorf("notices %q: want %q", got, want)
	}
	if whole := fmt.Sprintf("%d %s/%s", Refresh, project, byNameName); slices.Contains(got, whole) {
		t.Errorf("notices %q: the whole of by-name/ looked at again for an append", got)
	}
	if entry := fmt.Sprintf("%d %s/s000/%s/ap000002.json", Forget, project, entriesName); !slices.Contains(got, entry) {
		t.Errorf("notices %q: want the append's new name %q", got, entry)
	}

	// The watcher comes to the file after pifs looked at it: racy, the
	// same signature, the same bytes.
	if _, _, err := newContextFile(newSessionRef(v, project, "s000"), "", false).content(); err != nil {
		t.Fatal(err)
	}
	changes = v.Index().Update(file)
	if len(changes) == 0 || !changes[0].New.Racy() || changes[0].New.Sig != changes[0].Old.Sig {
		t.Fatalf("changes %v: want a racy version with the same signature", changes)
	}
	if got := v.Notices(changes); len(got) != 0 {
		t.Errorf("a look again that found the same bytes: notices %q, want none", noticeStrings(got))
	}

	// A session_info appended renames: by-name/ is looked at again whole
	// (the old link goes, the new one comes); an append after it, its
	// own link only.
	appendLine(t, file, `{"type":"session_info","id":"nm000002","parentId":"ap000002","timestamp":"2026-01-01T00:00:02.000Z","name":"another"}`)
	got = noticeStrings(v.Notices(v.Index().Look(file)))
	whole := fmt.Sprintf("%d %s/%s", Refresh, project, byNameName)
	if !slices.Contains(got, whole) {
		t.Errorf("notices %q after a rename: want %q", got, whole)
	}
	appendLine(t, file, msg(3))
	got = noticeStrings(v.Notices(v.Index().Look(file)))
	if want := fmt.Sprintf("%d %s/%s/another", Refresh, project, byNameName); !slices.Contains(got, want) || slices.Contains(got, whole) {
		t.Errorf("notices %q after an append to the renamed session: want %q and not %q", got, want, whole)
	}

	// A write caught half-way, its mtime set before its size: the index
	// takes a version of the old size with new times, and the session,
	// brought up to date, reads the whole line. That change tells of
	// info.json, active/ and latest alone; the next, of the entry.
	if _, _, err := newContextFile(newSessionRef(v, project, "s000"), "", false).content(); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	half := v.Index().Update(file)
	appendLine(t, file, msg(4))
	got = noticeStrings(v.Notices(half))
	want := []string{
		fmt.Sprintf("%d %s/s000/%s", Refresh, project, infoName),
		fmt.Sprintf("%d %s/%s", Refresh, project, activeName),
		fmt.Sprintf("%d %s/%s", ForgetHeld, project, latestName),
		fmt.Sprintf("%d %s", Refresh, activeName),
		fmt.Sprintf("%d %s", ForgetHeld, latestName),
	}
	if !slices.Equal(got, want) {
		t.Errorf("notices of a change of times alone:\n got %q\nwant %q", got, want)
	}
	got = noticeStrings(v.Notices(v.Index().Update(file)))
	if entry := fmt.Sprintf("%d %s/s000/%s/ap000004.json", Forget, project, entriesName); !slices.Contains(got, entry) {
		t.Errorf("notices %q of the rest of the write: want %q", got, entry)
	}
}
