package tree_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// piFiles is files.mjs's answer for one session file.
type piFiles struct {
	Lists map[string]struct {
		ReadFiles     []json.RawMessage `json:"readFiles"`
		ModifiedFiles []json.RawMessage `json:"modifiedFiles"`
		Error         *string           `json:"error"`
	} `json:"lists"`
	Ops map[string]struct {
		Read    []string `json:"read"`
		Written []string `json:"written"`
		Edited  []string `json:"edited"`
	} `json:"ops"`
	Resolved map[string]*string `json:"resolved"`
	Error    *string            `json:"error"`
}

// filesOfPi runs files.mjs on files with home as $HOME.
func filesOfPi(t *testing.T, home string, files []string) []piFiles {
	t.Helper()
	in, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	out := oracle.NodeWith(t, oracle.NodeOptions{Stdin: in, Env: []string{"HOME=" + home}}, "files.mjs")
	var answers []piFiles
	if err := json.Unmarshal(out, &answers); err != nil {
		t.Fatalf("files.mjs: %v\n%.2000s", err, out)
	}
	if len(answers) != len(files) {
		t.Fatalf("files.mjs answered %d files of %d", len(answers), len(files))
	}
	return answers
}

// pathsSession writes a session whose calls name files in every way pi's
// tools resolve: relative, absolute, "~", "@", file:// URLs, special
// spaces, dot segments, and scripts' nested calls; cwd is the header's.
func pathsSession(t *testing.T, dir, cwd string) string {
	t.Helper()
	paths := []string{
		"a.go", "./src/../b.go", "src/c.go", "../up.go", "/abs//dir/d.go", "/abs/dir/", "~", "~/notes.md",
		"~user/x", "@src/at.go", "@~/at-home.go", "@@twice.go", "file:///tmp/a%20b.go", "file://localhost/tmp/l.go",
		"file://host/x.go", "file:///a%2Fb.go", "a\u00a0b\u2003c.go", "a\u3000d.go", ".", "..", "~/", "tab\there.go",
		"new\nline.go", `back\slash.go`, `"quoted".go`, "é.go", "😀.go",
	}
	var lines []string
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	add(map[string]any{"type": "session", "version": 3, "id": "paths", "timestamp": "2025-07-01T08:00:00.000Z", "cwd": cwd})
	parent := any(nil)
	for i, p := range paths {
		id := fmt.Sprintf("%08x", i+1)
		op := []string{"read", "write", "edit"}[i%3]
		call := map[string]any{"type": "toolCall", "id": fmt.Sprintf("c%d", i), "name": op, "arguments": map[string]any{"path": p}}
		add(map[string]any{"type": "message", "id": id, "parentId": parent, "timestamp": "2025-07-01T08:00:01.000Z",
			"message": map[string]any{"role": "assistant", "content": []any{call}, "timestamp": 1}})
		parent = id
		rid := fmt.Sprintf("r%07x", i+1)
		add(map[string]any{"type": "message", "id": rid, "parentId": parent, "timestamp": "2025-07-01T08:00:02.000Z",
			"message": map[string]any{"role": "toolResult", "toolCallId": fmt.Sprintf("c%d", i), "toolName": op, "content": []any{},
				"isError": i%4 == 0, "timestamp": 1,
				"nestedCalls": map[string]any{"calls": []any{map[string]any{"id": "n", "name": "edit", "arguments": map[string]any{"path": "nested/" + p}, "status": "ok"}}}}})
		parent = rid
	}
	path := filepath.Join(dir, "paths.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFilesMatchPi: for every entry of every session of pi's conformance
// corpus, of sessions with scripts' calls, context edits and branch
// summaries, and of sessions naming files in every way, the path's file
// lists are pi's branch-summary lists of the same path, and the files each
// message touches are the ones pi's extractFileOpsFromMessage finds,
// resolved as pi's tools resolve them.
func TestFilesMatchPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	files := sessionFiles(t, store)
	dir := t.TempDir()
	for seed := int64(1); seed <= 4; seed++ {
		files = append(files, filesSession(t, dir, seed, 80))
	}
	for i, cwd := range []string{"/home/user/proj", "~/proj", "/"} {
		d := filepath.Join(dir, fmt.Sprint("paths", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		files = append(files, pathsSession(t, d, cwd))
	}
	home, _ := os.UserHomeDir()
	answers := filesOfPi(t, home, files)
	paths, withFiles, touched, threw, unresolved := 0, 0, 0, 0, 0
	for i, f := range files {
		a := answers[i]
		if a.Error != nil {
			t.Fatalf("%s: pi threw %s", f, *a.Error)
		}
		l, err := sessions.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tree.New(l)
		for _, e := range tr.Entries() {
			if e.ID == "" {
				continue
			}
			want, ok := a.Lists[e.ID]
			if !ok {
				t.Fatalf("%s: pi has no lists for %s", f, e.ID)
			}
			got := tr.FilesAt(e.ID)
			if want.Error != nil {
				threw++
				continue
			}
			paths++
			if len(want.ReadFiles)+len(want.ModifiedFiles) > 0 {
				withFiles++
			}
			if g, w := rawList(got.ReadFiles), piList(want.ReadFiles); g != w {
				t.Errorf("%s at %s: readFiles\npifs %s\npi   %s", filepath.Base(f), e.ID, g, w)
			}
			if g, w := rawList(got.ModifiedFiles), piList(want.ModifiedFiles); g != w {
				t.Errorf("%s at %s: modifiedFiles\npifs %s\npi   %s", filepath.Base(f), e.ID, g, w)
			}
			// Touches is pi's ops of the one message, resolved.
			var gotT, wantT []string
			for _, x := range tree.Touches(e, tr.Header.Cwd) {
				gotT = append(gotT, x.Op+" "+x.Path)
			}
			refused := false
			if ops, ok := a.Ops[e.ID]; ok {
				touched++
				for _, set := range []struct {
					op    string
					paths []string
				}{{tree.OpRead, ops.Read}, {tree.OpWrite, ops.Written}, {tree.OpEdit, ops.Edited}} {
					for _, p := range set.paths {
						if a.Resolved[p] == nil {
							refused = true
							continue
						}
						wantT = append(wantT, set.op+" "+*a.Resolved[p])
					}
				}
			}
			if refused {
				// pi's tool throws on the path: the call fails, and pifs
				// keeps a path of its own for it.
				unresolved++
				continue
			}
			slices.Sort(gotT)
			gotT = slices.Compact(gotT)
			slices.Sort(wantT)
			if !slices.Equal(gotT, wantT) {
				t.Errorf("%s: touches of %s\npifs %q\npi   %q", filepath.Base(f), e.ID, gotT, wantT)
			}
		}
	}
	t.Logf("%d sessions, %d paths compared, %d with files (pi threw on %d); %d messages touching files (%d paths pi refuses)", len(files), paths, withFiles, threw, touched, unresolved)
	if withFiles < 200 || touched < 100 {
		t.Errorf("too few paths with files (%d) or messages touching files (%d)", withFiles, touched)
	}
}

func rawList(vals [][]byte) string { return "[" + string(joinBytes(vals)) + "]" }

func joinBytes(vals [][]byte) []byte {
	var out []byte
	for i, v := range vals {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return out
}

func piList(vals []json.RawMessage) string { return jsonList(vals) }

// TestResolvePathHome: "~" is this process's home, as pi's os.homedir().
func TestResolvePathHome(t *testing.T) {
	home, _ := os.UserHomeDir()
	for in, want := range map[string]string{
		"~":          home,
		"~/a/../b":   filepath.Join(home, "b"),
		"@~/x":       filepath.Join(home, "x"),
		"~user/x":    "/p/~user/x",
		"x":          "/p/x",
		"/a/./b/../": "/a",
	} {
		if got := tree.ResolvePath(in, "/p"); got != want {
			t.Errorf("ResolvePath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFileStats pins what pi has no counterpart for: the counts and last
// entries of each file, the results each call gets (by id, with ids
// reused from turn to turn), scripts' calls and their statuses, the files
// only calls pi's lists leave out name, and the files changed.
func TestFileStats(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2025-07-01T08:00:00.000Z","cwd":"/p"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2025-07-01T08:00:01.000Z","message":{"role":"user","content":"go","timestamp":1}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-07-01T08:00:02.000Z","message":{"role":"assistant","content":[` +
			`{"type":"toolCall","id":"call_0","name":"read","arguments":{"path":"x.go"}},` +
			`{"type":"toolCall","id":"call_1","name":"edit","arguments":{"path":"x.go","oldText":"a","newText":"b"}},` +
			`{"type":"toolCall","id":"call_2","name":"bash","arguments":{"command":"ls"}}],"timestamp":1}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-07-01T08:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_0","toolName":"read","content":[],"isError":false,"timestamp":1}}`,
		`{"type":"message","id":"r2","parentId":"r1","timestamp":"2025-07-01T08:00:04.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"edit","content":[],"isError":true,"timestamp":1}}`,
		`{"type":"message","id":"a2","parentId":"r2","timestamp":"2025-07-01T08:00:05.000Z","message":{"role":"assistant","content":[` +
			`{"type":"toolCall","id":"call_0","name":"write","arguments":{"path":"y.go","content":"y"}}],"timestamp":1}}`,
		`{"type":"message","id":"r3","parentId":"a2","timestamp":"2025-07-01T08:00:06.000Z","message":{"role":"toolResult","toolCallId":"call_0","toolName":"write","content":[],"isError":false,"timestamp":1,` +
			`"nestedCalls":{"calls":[{"id":"call_0/1","name":"edit","arguments":{"path":"z.go"},"status":"ok"},` +
			`{"id":"call_0/2","name":"write","arguments":{"path":"y.go"},"status":"error"},` +
			`{"id":"call_0/3","name":"read","arguments":{"path":"x.go"},"status":"unfinished"},` +
			`{"id":"call_0/4","name":"edit","argumentsBytes":9999,"status":"ok"}],"complete":false}}}`,
		`{"type":"message","id":"a3","parentId":"r3","timestamp":"2025-07-01T08:00:07.000Z","message":{"role":"assistant","content":[` +
			`{"type":"toolCall","id":"call_9","name":"edit","arguments":{"path":"w.go","oldText":"a","newText":"b"}}],"timestamp":1}}`,
		`{"type":"context_edit","id":"ce","parentId":"a3","timestamp":"2025-07-01T08:00:08.000Z","targetId":"a2","replacement":null}`,
		`{"type":"branch_summary","id":"bs","parentId":"ce","timestamp":"2025-07-01T08:00:09.000Z","fromId":"ce","summary":"s","details":{"readFiles":["s.go"],"modifiedFiles":["m.go"]}}`,
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := session(t, path)
	f := tr.FilesAt("")
	var got []string
	for _, s := range f.Stats {
		got = append(got, fmt.Sprintf("%s %s r%d w%d e%d x%d %s", s.List, s.Path, s.Reads, s.Writes, s.Edits, s.Errors, s.Last))
	}
	want := []string{
		"read s.go r0 w0 e0 x0 bs",
		"modified m.go r0 w0 e0 x0 bs",
		"modified w.go r0 w0 e1 x0 a3",
		"modified x.go r2 w0 e1 x1 r3",
		"other y.go r0 w2 e0 x1 r3",
		"other z.go r0 w0 e1 x0 r3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("stats\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = nil
	for _, c := range f.Calls {
		res := "-"
		if c.Result != nil {
			res = c.Result.ID
		}
		got = append(got, fmt.Sprintf("%s %s %s %v %d %s", c.Entry.ID, c.Op, c.Abs, c.Nested, c.Status, res))
	}
	want = []string{
		"a1 read /p/x.go false 1 r1",
		"a1 edit /p/x.go false 2 r2",
		"a2 write /p/y.go false 1 r3",
		"r3 edit /p/z.go true 1 r3",
		"r3 write /p/y.go true 2 r3",
		"r3 read /p/x.go true 0 -",
		"a3 edit /p/w.go false 0 -",
	}
	if !slices.Equal(got, want) {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = nil
	for _, c := range f.Changed {
		got = append(got, fmt.Sprint(c.Abs, " ", c.Calls))
	}
	want = []string{"/p/w.go [6]", "/p/x.go [0 1 5]", "/p/y.go [2 4]", "/p/z.go [3]"}
	if !slices.Equal(got, want) {
		t.Errorf("changed %q, want %q", got, want)
	}
	got = nil
	for _, id := range []string{"a1", "r3", "bs"} {
		got = append(got, fmt.Sprint(tree.Touches(tr.Node(id).Entry, "/p")))
	}
	want = []string{"[{/p/x.go read} {/p/x.go edit}]", "[{/p/z.go edit} {/p/y.go write} {/p/x.go read}]", "[]"}
	if !slices.Equal(got, want) {
		t.Errorf("touches %q, want %q", got, want)
	}
}
