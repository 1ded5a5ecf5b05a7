package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// sessionOf parses session lines.
func sessionOf(t *testing.T, lines ...string) *tree.Tree {
	t.Helper()
	l, err := sessions.Parse([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tree.New(l)
}

const filesHeader = `{"type":"session","version":3,"id":"s","timestamp":"2025-07-01T08:00:00.000Z","cwd":"/p"}`

// TestChangesReplay pins the sections pifs makes where pi's result holds
// no patch: a write, then edits replayed on the content it gave (the
// edit forms pi takes, a call without a result), a script's edit shown
// from its arguments, a failed call, and a write over a file a call
// changed before without the session showing it whole.
func TestChangesReplay(t *testing.T) {
	tr := sessionOf(t, filesHeader,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2025-07-01T08:00:01.000Z","message":{"role":"assistant","content":[`+
			`{"type":"toolCall","id":"c1","name":"write","arguments":{"path":"f.txt","content":"1\n2\n3\n4\n5\n6\n7\n8\n9\n"}},`+
			`{"type":"toolCall","id":"c2","name":"edit","arguments":{"path":"f.txt","edits":"[{\"oldText\":\"2\\n\",\"newText\":\"two\\n\"}]","oldText":"8","newText":"eight"}},`+
			`{"type":"toolCall","id":"c3","name":"edit","arguments":{"path":"/p/f.txt","edits":{"oldText":"5\n","newText":""}}}],"timestamp":1}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-07-01T08:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"write","content":[],"isError":false,"timestamp":1}}`,
		`{"type":"message","id":"r2","parentId":"r1","timestamp":"2025-07-01T08:00:03.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"edit","content":[],"isError":false,"timestamp":1,`+
			`"nestedCalls":{"calls":[{"id":"n1","name":"edit","arguments":{"path":"g.txt","oldText":"keep\nold\n","newText":"keep\nnew\n"},"status":"ok"},`+
			`{"id":"n2","name":"write","arguments":{"path":"g.txt","content":"x"},"status":"error","error":"EACCES\nmore"}]}}}`,
		`{"type":"message","id":"a2","parentId":"r2","timestamp":"2025-07-01T08:00:04.000Z","message":{"role":"assistant","content":[`+
			`{"type":"toolCall","id":"c4","name":"write","arguments":{"path":"g.txt","content":"all new\n"}}],"timestamp":1}}`,
	)
	f := tr.FilesAt("")
	got := string(ChangesPatch(f))
	want := `# what the write and edit calls of this path did: 2 files, 6 calls
# paths relative to /p
# does not apply as it stands: 2 sections cannot be placed in the file as it was (see their comments)
# a file changed more than once has a section per change: patch --dry-run checks each against the file as it was; git apply --check checks them in turn
# 1 failed call left out
# /p/f.txt: 3 write or edit calls of this path, in order
# paths relative to /p
# git apply (or patch -p1) there applies it to the files as they stood before the session (a file it creates must not exist)
# a file changed more than once has a section per change: patch --dry-run checks each against the file as it was; git apply --check checks them in turn
# write in a1 (call c1): the whole new content, as a new file (applies where the file did not exist)
--- /dev/null
+++ b/f.txt
@@ -0,0 +1,9 @@
+1
+2
+3
+4
+5
+6
+7
+8
+9
# edit in a1 (call c2): 2 replacements in the content the session wrote before
--- a/f.txt
+++ b/f.txt
@@ -1,9 +1,9 @@
 1
-2
+two
 3
 4
 5
 6
 7
-8
+eight
 9
# edit in a1 (call c3): 1 replacement in the content the session wrote before (no result on this path: shown as its arguments ask)
--- a/f.txt
+++ b/f.txt
@@ -2,7 +2,6 @@
 two
 3
 4
-5
 6
 7
 eight
# /p/g.txt: 3 write or edit calls of this path, in order
# paths relative to /p
# does not apply as it stands: 2 sections cannot be placed in the file as it was (see their comments)
# a file changed more than once has a section per change: patch --dry-run checks each against the file as it was; git apply --check checks them in turn
# 1 failed call left out
# edit by a script in r2 (call n1): 1 replacement without line numbers (no patch in its result, and the file's content is not known), so this section does not apply
--- a/g.txt
+++ b/g.txt
@@ -1,2 +1,2 @@
 keep
-old
+new
# write by a script in r2 (call n2) failed, left out: EACCES
# write in a2 (call c4): the whole new content, as a new file; the file existed and the session does not show what it held, so this section does not apply (no result on this path: shown as its arguments ask)
--- /dev/null
+++ b/g.txt
@@ -0,0 +1 @@
+all new
`
	if got != want {
		t.Errorf("changes.patch:\n%s\nwant\n%s", got, want)
	}
}

// TestFilesTextFormat pins files.txt's and files.json's layout: the
// fields, the order of the lists, and paths that need quoting.
func TestFilesTextFormat(t *testing.T) {
	tr := sessionOf(t, filesHeader,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2025-07-01T08:00:01.000Z","message":{"role":"assistant","content":[`+
			`{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"b c.go"}},`+
			`{"type":"toolCall","id":"c2","name":"edit","arguments":{"path":"tab\there\".go","oldText":"a","newText":"b"}},`+
			`{"type":"toolCall","id":"c3","name":"read","arguments":{"path":"tab\there\".go"}}],"timestamp":1}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-07-01T08:00:02.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"edit","content":[],"isError":true,"timestamp":1,`+
			`"nestedCalls":{"calls":[{"id":"n1","name":"write","arguments":{"path":"~/n.go","content":""},"status":"ok"}]}}}`,
	)
	f := tr.FilesAt("")
	if got, want := string(FilesText(f)), "read\t1\t0\t0\t0\ta1\tb c.go\n"+
		"modified\t1\t0\t1\t1\ta1\t\"tab\\there\\\".go\"\n"+
		"other\t0\t1\t0\t0\tr1\t~/n.go\n"; got != want {
		t.Errorf("files.txt\n%q\nwant\n%q", got, want)
	}
	home := tree.ResolvePath("~", "/")
	want := `{
  "readFiles": [
    "b c.go"
  ],
  "modifiedFiles": [
    "tab\there\".go"
  ],
  "files": [
    {
      "path": "b c.go",
      "list": "read",
      "reads": 1,
      "writes": 0,
      "edits": 0,
      "errors": 0,
      "lastEntryId": "a1",
      "absolutePath": "/p/b c.go"
    },
    {
      "path": "tab\there\".go",
      "list": "modified",
      "reads": 1,
      "writes": 0,
      "edits": 1,
      "errors": 1,
      "lastEntryId": "a1",
      "absolutePath": "/p/tab\there\".go"
    },
    {
      "path": "~/n.go",
      "list": "other",
      "reads": 0,
      "writes": 1,
      "edits": 0,
      "errors": 0,
      "lastEntryId": "r1",
      "absolutePath": "` + strings.TrimSuffix(home, "/") + `/n.go"
    }
  ]
}
`
	if got := string(FilesJSON(f)); got != want {
		t.Errorf("files.json\n%s\nwant\n%s", got, want)
	}
	empty := tree.PathFiles(nil, "/p")
	if got := string(FilesJSON(empty)); got != "{\n  \"readFiles\": [],\n  \"modifiedFiles\": [],\n  \"files\": []\n}\n" {
		t.Errorf("empty files.json:\n%s", got)
	}
	if got := FilesText(empty); len(got) != 0 {
		t.Errorf("empty files.txt: %q", got)
	}
	if got := string(ChangesPatch(empty)); got != "# what the write and edit calls of this path did: nothing\n" {
		t.Errorf("empty changes.patch: %q", got)
	}
}

// TestChangesInexactRefused: a write over a file a call read but the
// session never showed whole cannot be placed: the header says the patch
// does not apply, and git apply --check refuses it.
func TestChangesInexactRefused(t *testing.T) {
	tr := sessionOf(t, filesHeader,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2025-07-01T08:00:01.000Z","message":{"role":"assistant","content":[`+
			`{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"notes.txt"}}],"timestamp":1}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-07-01T08:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"old\ncontent\n"}],"isError":false,"timestamp":1}}`,
		`{"type":"message","id":"a2","parentId":"r1","timestamp":"2025-07-01T08:00:03.000Z","message":{"role":"assistant","content":[`+
			`{"type":"toolCall","id":"c2","name":"write","arguments":{"path":"notes.txt","content":"new\n"}}],"timestamp":1}}`,
		`{"type":"message","id":"r2","parentId":"a2","timestamp":"2025-07-01T08:00:04.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"write","content":[],"isError":false,"timestamp":1}}`,
	)
	patch := ChangesPatch(tr.FilesAt(""))
	if !bytes.Contains(patch, []byte("# does not apply as it stands: 1 section cannot be placed")) {
		t.Errorf("the header does not say the patch does not apply:\n%s", patch)
	}
	if out, ok := applyIn(t, copyProject(t, map[string]string{"notes.txt": "old\ncontent\n"}), patch, "git", "apply", "--check", "-"); ok {
		t.Errorf("git apply --check accepts it: %s", out)
	}
}
