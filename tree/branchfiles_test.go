package tree_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// filesSession writes a branchy session whose assistant messages read,
// write and edit files from a small pool (so that a file is read on one
// branch and modified on another), with other tools, calls without a path
// or with an empty one, branch summaries carrying details (pi's and an
// extension's), context edits that drop or replace an assistant message's
// tool calls, and tool results with nested calls. The pool's names sort
// differently by UTF-16 units than by UTF-8 bytes. The file is a function
// of seed.
func filesSession(t *testing.T, dir string, seed int64, n int) string {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	pool := []string{"a.go", "b.go", "src/c.go", "Z.go", "é.go", "😀.go", "～.go", "/home/user/proj/d.go"}
	file := func() string { return pool[r.Intn(len(pool))] }
	var lines []string
	add := func(v map[string]any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	clock := time.Date(2025, 7, 1, 8, 0, 0, 0, time.UTC)
	add(map[string]any{"type": "session", "version": 3, "id": fmt.Sprintf("files-%d", seed), "timestamp": clock.Format(time.RFC3339), "cwd": "/home/user/proj"})
	var ids, assistants []string
	leaf := ""
	entry := func(typ string, fields map[string]any) {
		id := fmt.Sprintf("%02d%06x", len(ids), r.Intn(1<<24))
		var parent any
		switch {
		case leaf != "" && r.Intn(6) == 0:
			parent = ids[r.Intn(len(ids))]
		case leaf != "":
			parent = leaf
		}
		clock = clock.Add(time.Second)
		e := map[string]any{"type": typ, "id": id, "parentId": parent, "timestamp": clock.Format("2006-01-02T15:04:05.000Z")}
		for k, v := range fields {
			e[k] = v
		}
		add(e)
		ids = append(ids, id)
		leaf = id
	}
	call := func() map[string]any {
		c := map[string]any{"type": "toolCall", "id": fmt.Sprintf("c%d", r.Int63())}
		switch k := r.Intn(10); {
		case k < 3:
			c["name"], c["arguments"] = "read", map[string]any{"path": file(), "offset": 1}
		case k < 5:
			c["name"], c["arguments"] = "edit", map[string]any{"path": file(), "oldText": "x", "newText": "y"}
		case k < 7:
			c["name"], c["arguments"] = "write", map[string]any{"path": file(), "content": "z"}
		case k == 7:
			c["name"], c["arguments"] = "bash", map[string]any{"command": "cat " + file()}
		case k == 8:
			c["name"], c["arguments"] = "read", map[string]any{"file_path": file()} // pi reads only path
		default:
			c["name"], c["arguments"] = "write", map[string]any{"path": ""}
		}
		return c
	}
	for len(ids) < n {
		switch k := r.Intn(12); {
		case k < 3:
			entry("message", map[string]any{"message": map[string]any{"role": "user", "content": "do it", "timestamp": 1}})
		case k < 7:
			blocks := []any{map[string]any{"type": "text", "text": "ok"}}
			for i := r.Intn(4); i > 0; i-- {
				blocks = append(blocks, call())
			}
			entry("message", map[string]any{"message": map[string]any{"role": "assistant", "content": blocks, "stopReason": "toolUse", "timestamp": 1}})
			assistants = append(assistants, leaf)
		case k == 7:
			entry("message", map[string]any{"message": map[string]any{"role": "toolResult", "toolCallId": "c", "toolName": "code",
				"content": []any{}, "nestedCalls": map[string]any{"calls": []any{map[string]any{"name": "edit", "arguments": map[string]any{"path": "nested.go"}}}}, "timestamp": 1}})
		case k == 8:
			details := map[string]any{"readFiles": []any{file(), file()}, "modifiedFiles": []any{file()}}
			hook := r.Intn(3) == 0
			if hook {
				details["readFiles"] = []any{"hook-only.go"}
			}
			entry("branch_summary", map[string]any{"fromId": leaf, "summary": "s", "details": details, "fromHook": hook})
		case k == 9 && len(assistants) > 0:
			var rep any
			if r.Intn(2) == 0 {
				rep = map[string]any{"content": []any{call(), call()}}
			}
			entry("context_edit", map[string]any{"targetId": assistants[r.Intn(len(assistants))], "replacement": rep})
		default:
			entry("custom", map[string]any{"customType": "x", "data": nil})
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("files-%d.jsonl", seed))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBranchFilesMatchPi: for moves from every tip to many entries, the
// details pifs gives a branch summary are the file lists pi's own
// branch-summary code computes.
func TestBranchFilesMatchPi(t *testing.T) {
	dir := t.TempDir()
	_, branchy := corpusSession(t)
	files := []string{branchy}
	for seed := int64(1); seed <= 6; seed++ {
		files = append(files, filesSession(t, dir, seed, 80))
	}
	var reqs []oracle.NavigateRequest
	var trees []*tree.Tree
	for _, f := range files {
		tr := session(t, f)
		for _, tip := range tr.Tips() {
			for i, e := range tr.Entries() {
				if i%4 == 0 && e.ID != "" && e.ID != tip.ID {
					reqs = append(reqs, oracle.NavigateRequest{Op: "files", File: f, OldLeafID: tip.ID, EntryID: e.ID})
					trees = append(trees, tr)
				}
			}
		}
	}
	answers := oracle.Navigate(t, reqs)
	nonEmpty := 0
	for i, a := range answers {
		q := reqs[i]
		if a.Error != nil {
			t.Fatalf("%+v: pi threw %s", q, *a.Error)
		}
		want := fmt.Sprintf(`{"readFiles":%s,"modifiedFiles":%s}`, jsonList(a.ReadFiles), jsonList(a.ModifiedFiles))
		if got := string(trees[i].BranchSummaryDetails(q.OldLeafID, q.EntryID)); got != want {
			t.Errorf("%s from %s to %s:\npifs %s\npi   %s", filepath.Base(q.File), q.OldLeafID, q.EntryID, got, want)
		}
		if len(a.ReadFiles)+len(a.ModifiedFiles) > 0 {
			nonEmpty++
		}
	}
	t.Logf("%d moves compared, %d with files", len(reqs), nonEmpty)
	if nonEmpty < 100 {
		t.Errorf("only %d moves with files", nonEmpty)
	}
}

func jsonList(vals []json.RawMessage) string {
	var s []string
	for _, v := range vals {
		s = append(s, string(v))
	}
	return "[" + strings.Join(s, ",") + "]"
}

// TestAppendBranchSummaryDetails: a branch_summary appended without
// details gets pi's file lists of the branch it leaves, which pi reads
// back; given details are kept, and an extension's summary (fromHook)
// gets none.
func TestAppendBranchSummaryDetails(t *testing.T) {
	path := filesSession(t, t.TempDir(), 7, 120)
	tr := session(t, path)
	oldLeaf := tr.FileLeafID()
	// A target whose move leaves files behind.
	var target string
	for _, e := range tr.Entries() {
		if string(tr.BranchSummaryDetails(oldLeaf, e.ID)) != `{"readFiles":[],"modifiedFiles":[]}` {
			target = e.ID
			break
		}
	}
	if target == "" {
		t.Fatal("no move from the leaf leaves files behind")
	}
	b := tr.NewBuilder()
	for _, line := range []string{
		`{"type":"branch_summary","parentId":"` + target + `","summary":"left it"}`,
		`{"type":"branch_summary","summary":"mine","details":{"readFiles":["x"]}}`,
		`{"type":"branch_summary","summary":"an extension's","fromHook":true}`,
	} {
		if err := b.AppendLine([]byte(line), 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := sessions.Append(path, b.Lines...); err != nil {
		t.Fatal(err)
	}
	answers := oracle.Navigate(t, []oracle.NavigateRequest{
		{Op: "files", File: path, OldLeafID: oldLeaf, EntryID: target},
		{Op: "open", File: path},
	})
	files, opened := answers[0], answers[1]
	if files.Error != nil || opened.Error != nil {
		t.Fatalf("pi threw: %v %v", files.Error, opened.Error)
	}
	n := len(opened.Entries)
	var got [3]struct {
		Details json.RawMessage
		FromID  string
	}
	for i := range got {
		if err := json.Unmarshal(opened.Entries[n-3+i], &got[i]); err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf(`{"readFiles":%s,"modifiedFiles":%s}`, jsonList(files.ReadFiles), jsonList(files.ModifiedFiles))
	if string(got[0].Details) != want || got[0].FromID != oldLeaf {
		t.Errorf("summary leaving %s for %s: details %s fromId %s, pi's files %s", oldLeaf, target, got[0].Details, got[0].FromID, want)
	}
	if string(got[1].Details) != `{"readFiles":["x"]}` {
		t.Errorf("given details: %s", got[1].Details)
	}
	if got[2].Details != nil {
		t.Errorf("an extension's summary got details %s", got[2].Details)
	}
}
