package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
)

// appendNoticeBound is what one append may cost the kernel's caches, in
// notifications and in inodes looked at: the views of the session that
// changed, the new entry's names, the folders listing them. It does not
// depend on how many names of the session the kernel holds.
const appendNoticeBound = 100

// TestAppendCostFollowsChange: after `ls -l` of entries/, of
// branches/<leaf>/ and `ls -lR` of tree/ of a 10,000-entry session, and
// of its project's 2,000 other sessions and their by-name/ links (the
// kernel then holds some 34,000 names), an append, through the
// mount or written to the file by another program as pi writes, costs a
// bounded number of notifications and inodes looked at, not one per name
// held; and every view the kernel cached that changed shows the change.
func TestAppendCostFollowsChange(t *testing.T) {
	store := genProject(t, "big", 1, 10000, 200)
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	file := files[0]
	// 2,000 more sessions in the project, each with a name: by-name/ and
	// the project's listing hold one name each.
	for i := range 2000 {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		lines := fmt.Sprintf(`{"type":"session","version":3,"id":"%s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/user/big"}`+"\n"+
			`{"type":"session_info","id":"n%d","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","name":"session %d"}`+"\n", id, i, i)
		if err := os.WriteFile(filepath.Join(filepath.Dir(file), "2025-01-01T00-00-00-000Z_"+id+".jsonl"), []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Files changed within 2 s are looked at again at every change event
	// (a rewrite in the same clock tick): the appends measured come later.
	time.Sleep(2100 * time.Millisecond)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store})
	dir := filepath.Join(mnt, filepath.Base(filepath.Dir(file)), strings.TrimSuffix(filepath.Base(file), ".jsonl"))
	leaf := strings.TrimSpace(string(readMount(t, filepath.Join(dir, "leaf"))))
	entries := len(lines(run(t, dir, "ls", "entries")))
	run(t, dir, "ls", "-l", "entries")
	run(t, dir, "ls", "-l", "branches/"+leaf)
	tree := run(t, dir, "ls", "-lR", "tree")
	run(t, dir, "cat", "info.json", "context.json", "transcript.md", "leaf")
	run(t, dir, "ls", "-l", "..", "../by-name", "../usage")
	if n := m.Stats().Cache.Nodes; n < 24000 {
		t.Fatalf("the kernel holds %d nodes after the listings; want over 24,000", n)
	}
	costOf := func(what string, do func() string) string {
		t.Helper()
		before := m.Stats().Notices
		id := do()
		got := m.Stats().Notices
		n, touched := got.Notifies-before.Notifies, got.Touched-before.Touched
		t.Logf("%s: %d notifications, %d inodes looked at", what, n, touched)
		if n > appendNoticeBound || touched > appendNoticeBound {
			t.Errorf("%s with %d names held: %d notifications, %d inodes looked at; want at most %d each",
				what, m.Stats().Cache.Nodes, n, touched, appendNoticeBound)
		}
		return id
	}
	var added []string
	for i := range 3 {
		added = append(added, costOf("echo > append", func() string {
			if err := os.WriteFile(filepath.Join(dir, "append"), fmt.Appendf(nil, "message %d through the mount\n", i), 0o644); err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(string(readMount(t, filepath.Join(dir, "leaf"))))
		}))
	}
	// Another program appends, as pi does: the watcher tells the kernel.
	added = append(added, costOf("an append to the file", func() string {
		prev := added[len(added)-1]
		id := "ext00001"
		line := fmt.Sprintf(`{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"written by another program","timestamp":1767225600000}}`+"\n", id, prev)
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		before := m.Stats().Notices
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		f.Close()
		eventually(t, "the watcher tells the kernel of the append", func() (bool, string) {
			got := strings.TrimSpace(string(readMount(t, filepath.Join(dir, "leaf"))))
			return got == id && m.Stats().Notices.Notifies > before.Notifies, got
		})
		time.Sleep(100 * time.Millisecond) // the rest of the watcher's notices
		return id
	}))

	// What the kernel cached and changed shows the change.
	if n := len(lines(run(t, dir, "ls", "entries"))); n != entries+len(added) {
		t.Errorf("entries/ lists %d names after %d appends; want %d", n, len(added), entries+len(added))
	}
	for _, id := range added {
		if b := readMount(t, filepath.Join(dir, "entries", id+".json")); !strings.Contains(string(b), id) {
			t.Errorf("entries/%s.json: %q", id, b)
		}
	}
	last := added[len(added)-1]
	if got := strings.TrimSpace(string(readMount(t, filepath.Join(dir, "leaf")))); got != last {
		t.Errorf("leaf reads %q; want %q", got, last)
	}
	if target, err := os.Readlink(filepath.Join(dir, "current")); err != nil || target != "branches/"+last {
		t.Errorf("current -> %q (%v); want branches/%s", target, err, last)
	}
	if b := readMount(t, filepath.Join(dir, "context.json")); !strings.Contains(string(b), "written by another program") {
		t.Errorf("context.json does not show the last append")
	}
	if b := run(t, dir, "ls", "branches"); !strings.Contains(b, last) || strings.Contains(b, leaf+"\n") {
		t.Errorf("branches/ lists %q; want the new tip %s instead of %s", b, last, leaf)
	}
	after := run(t, dir, "ls", "-lR", "tree")
	for _, id := range added {
		if !strings.Contains(after, id+".json") {
			t.Errorf("tree/ does not show entry %s", id)
		}
	}
	if len(after) <= len(tree) {
		t.Errorf("ls -lR tree/ did not grow")
	}
	if fi, err := os.Stat(filepath.Join(dir, "session.jsonl")); err != nil || fi.Size() != fileSize(t, file) {
		t.Errorf("session.jsonl: %v, size %d; want %d", err, fi.Size(), fileSize(t, file))
	}

	// Branching off in the middle of a segment splits its folder of tree/:
	// the names after the entry move into a folder of their own. The
	// listings the kernel kept show what a fresh mount shows.
	path := lines(run(t, dir, "ls", "branches/"+last))
	mid := path[len(path)/2]
	mid = strings.TrimSuffix(mid[strings.LastIndexByte(mid[:len(mid)-len(".json")], '-')+1:], ".json")
	moved := nameAfter(t, run(t, dir, "ls", "-R", "tree"), "-"+mid+".json")
	if _, err := os.Stat(filepath.Join(dir, moved)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "leaf"), []byte(mid+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "append"), []byte("a branch off the middle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, fresh := mountFS(t, fs.Options{SessionsDir: store})
	freshDir := filepath.Join(fresh, filepath.Base(filepath.Dir(file)), filepath.Base(dir))
	for _, args := range [][]string{{"ls", "-lR", "tree"}, {"ls", "-l", "entries"}, {"ls", "-l", ".", "branches", "labels"},
		{"cat", "leaf", "info.json", "context.json", "transcript.md"}} {
		if got, want := run(t, dir, args[0], args[1:]...), run(t, freshDir, args[0], args[1:]...); got != want {
			t.Errorf("%s after a branch off the middle differs from a fresh mount's", strings.Join(args, " "))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, moved)); !os.IsNotExist(err) {
		t.Errorf("%s, moved into a folder of its own by the branch, still stats: %v", moved, err)
	}
}

// nameAfter finds, in the output of ls -R, the file listed after the one
// whose name ends in suffix, in the same folder, and gives its path.
func nameAfter(t *testing.T, lsR, suffix string) string {
	folder := ""
	ls := lines(lsR)
	for i, l := range ls {
		if strings.HasSuffix(l, ":") {
			folder = strings.TrimSuffix(l, ":")
			continue
		}
		if strings.HasSuffix(l, suffix) && i+1 < len(ls) && strings.HasSuffix(ls[i+1], ".json") {
			return filepath.Join(folder, ls[i+1])
		}
	}
	t.Fatalf("no file after one ending in %s in a folder of ls -R", suffix)
	return ""
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
