package render

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/fakemodel"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The real pi CLI against a scripted model whose tool calls write and edit
// files in a temporary project: changes.patch, applied to a copy of the
// project as it was before, gives the files exactly as pi left them.

// calls is one reply of tool calls; each call is a tool name and its
// arguments as JSON.
func calls(cs ...[2]string) fakemodel.Reply {
	var r fakemodel.Reply
	for i, c := range cs {
		r.ToolCalls = append(r.ToolCalls, fakemodel.ToolCall{ID: "call_" + string(rune('a'+i)), Name: c[0], Arguments: c[1]})
	}
	return r
}

func args(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type rep = map[string]string

// writeTree writes files (path → content) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads every file below dir (path → content).
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runPi runs pi -p in proj against a model answering replies in turn, and
// returns the session file pi wrote.
func runPi(t *testing.T, proj string, replies ...fakemodel.Reply) string {
	t.Helper()
	srv, err := fakemodel.Start(fakemodel.Queue(append(replies, fakemodel.Reply{Text: "done"})...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	a := oracle.NewAgent(t, srv.ModelsJSON(fakemodel.DefaultCosts()), fakemodel.Provider, fakemodel.Model)
	a.Print(t, proj, "change the files")
	var files []string
	filepath.WalkDir(a.Sessions, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	})
	if len(files) != 1 {
		t.Fatalf("pi wrote %d session files", len(files))
	}
	return files[0]
}

// leafFiles reads a session file and returns the Files of its leaf path.
func leafFiles(t *testing.T, file string) *tree.Files {
	t.Helper()
	l, err := sessions.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	return tree.New(l).FilesAt("")
}

// applyIn applies a patch in dir with the command given (its last
// argument reads the patch from stdin); it returns the command's output
// and whether it succeeded.
func applyIn(t *testing.T, dir string, patch []byte, command ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(patch)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// copyProject copies the files into a new temporary directory.
func copyProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	return dir
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s missing", what, p)
		} else if g != w {
			t.Errorf("%s: %s is\n%q\nwant\n%q", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s should not be there", what, p)
		}
	}
}

// TestChangesPatchPi: pi edits one file several times (an edits array, the
// older oldText/newText form, edits as a JSON string), makes a file with
// write and edits it, rewrites it, fails an edit, and edits files in
// subfolders by relative paths with dot segments and a file without a
// final line feed. changes.patch says it applies; git apply and patch -p1
// applied to a copy of the project as it was give the files exactly as pi
// left them, and so does each file's diff of changes/ alone.
func TestChangesPatchPi(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: ", err)
	}
	before := map[string]string{
		"main.go":         "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n\tfmt.Println(\"world\")\n}\n\nfunc helper() int {\n\treturn 1\n}\n",
		"sub/dir/util.go": "package dir\n\n// Util does a thing.\nfunc Util() string {\n\treturn \"u\"\n}\n",
		"notes.txt":       "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
		"noeol.txt":       "x\ny",
		"untouched.txt":   "stays\n",
	}
	proj := copyProject(t, before)
	file := runPi(t, proj,
		calls([2]string{"read", args(t, rep{"path": "main.go"})}),
		calls([2]string{"edit", args(t, map[string]any{"path": "main.go", "edits": []rep{
			{"oldText": "\tfmt.Println(\"hello\")\n", "newText": "\tfmt.Println(\"hi\")\n"},
			{"oldText": "return 1", "newText": "return 2"}}})}),
		calls([2]string{"edit", args(t, rep{"path": "main.go", "oldText": "\"hi\"", "newText": "\"hi there\""})}),
		calls([2]string{"edit", args(t, rep{"path": "main.go", "oldText": "not in the file", "newText": "x"})}),
		calls([2]string{"write", args(t, rep{"path": "docs/new.md", "content": "# New\n\nline one\nline two\n"})}),
		calls([2]string{"edit", args(t, map[string]any{"path": "docs/new.md", "edits": []rep{{"oldText": "line one", "newText": "line 1"}}})},
			[2]string{"edit", args(t, map[string]any{"path": "./sub/dir/util.go", "edits": []rep{{"oldText": "// Util does a thing.\n", "newText": "// Util does\n// two things.\n"}}})}),
		calls([2]string{"edit", args(t, rep{"path": "sub/dir/../dir/util.go", "oldText": "\"u\"", "newText": "\"v\""})},
			[2]string{"edit", args(t, rep{"path": "noeol.txt", "oldText": "y", "newText": "y2\nz"})}),
		calls([2]string{"write", args(t, rep{"path": "docs/new.md", "content": "# New\n\nline 1\nline 1.5\nline two\n"})},
			[2]string{"edit", args(t, rep{"path": proj + "/notes.txt",
				"edits": args(t, []rep{{"oldText": "two\n", "newText": "2\n"}, {"oldText": "nine", "newText": "9"}})})}),
	)
	after := readTree(t, proj)
	if after["main.go"] == before["main.go"] || after["docs/new.md"] == "" || after["noeol.txt"] != "x\ny2\nz" {
		t.Fatalf("pi did not make the changes: %q", after)
	}
	f := leafFiles(t, file)
	patch := ChangesPatch(f)
	t.Logf("changes.patch:\n%s", patch)
	if n := ChangesPatchSize(f); n != int64(len(patch)) {
		t.Errorf("ChangesPatchSize = %d, want %d", n, len(patch))
	}
	if !bytes.Contains(patch, []byte("# git apply (or patch -p1) there applies it")) || bytes.Contains(patch, []byte("does not apply")) {
		t.Errorf("the header does not say the patch applies")
	}
	if !bytes.Contains(patch, []byte("failed, left out: Could not find the exact text in main.go")) {
		t.Errorf("the failed edit is not said to be left out")
	}
	if !bytes.Contains(patch, []byte("# paths relative to "+proj+"\n")) {
		t.Errorf("the patch is not relative to the project")
	}

	dir := copyProject(t, before)
	if out, ok := applyIn(t, dir, patch, "git", "apply", "--check", "-"); !ok {
		t.Fatalf("git apply --check: %s", out)
	}
	if out, ok := applyIn(t, dir, patch, "git", "apply", "-"); !ok {
		t.Fatalf("git apply: %s", out)
	}
	sameTree(t, "after git apply", readTree(t, dir), after)

	dir = copyProject(t, before)
	if out, ok := applyIn(t, dir, patch, "patch", "-p1", "--batch", "--fuzz=0"); !ok {
		t.Fatalf("patch -p1: %s", out)
	}
	sameTree(t, "after patch -p1", readTree(t, dir), after)

	// Each file's diff alone.
	names := ChangeNames(f)
	want := []string{"docs%2Fnew.md.diff", "main.go.diff", "noeol.txt.diff", "notes.txt.diff", "sub%2Fdir%2Futil.go.diff"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("changes/ names %q, want %q", names, want)
	}
	for i, name := range names {
		d := ChangeDiff(f, i)
		if n := ChangeDiffSize(f, i); n != int64(len(d)) {
			t.Errorf("%s: ChangeDiffSize = %d, want %d", name, n, len(d))
		}
		dir := copyProject(t, before)
		if out, ok := applyIn(t, dir, d, "git", "apply", "-"); !ok {
			t.Fatalf("git apply %s: %s\n%s", name, out, d)
		}
		rel, _ := filepath.Rel(proj, f.Changed[i].Abs)
		if got := readTree(t, dir)[rel]; got != after[rel] {
			t.Errorf("%s applied alone gives\n%q\nwant\n%q", name, got, after[rel])
		}
	}
	// files.txt: what each file had done to it.
	txt := string(FilesText(f))
	for _, line := range []string{
		"modified\t1\t0\t3\t1\t", // main.go: read, three edits, one failed
		"modified\t0\t2\t1\t0\t", // docs/new.md
		"main.go\n", "docs/new.md\n", "./sub/dir/util.go\n", "sub/dir/../dir/util.go\n", proj + "/notes.txt\n",
	} {
		if !strings.Contains(txt, line) {
			t.Errorf("files.txt lacks %q:\n%s", line, txt)
		}
	}
}
