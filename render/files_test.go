package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// changesSession is a session whose assistant messages write, edit and
// read a small pool of files, on several branches: writes of whole
// contents, edits in every argument form pi takes (an edits array, a JSON
// string of one, a single object, oldText and newText), their results
// with pi's patch, without one, with a broken one, or an error, calls ids
// reused from turn to turn, calls without a result, scripts' calls
// (nestedCalls, ok, failed or unfinished, some without arguments), context
// edits, branch summaries with details, and paths that need quoting. The
// file is a function of seed.
func changesSession(t testing.TB, dir string, seed int64, n int) []byte {
	r := rand.New(rand.NewSource(seed))
	pool := []string{"a.txt", "src/b.go", "./src/b.go", "/elsewhere/c.txt", "tab\tname.txt", "~/home.txt", "@src/at.go", "é.txt"}
	file := func() string { return pool[r.Intn(len(pool))] }
	words := []string{"alpha\n", "beta\n", "gamma\n", "delta", "", "x\r\n", "one\ntwo\n"}
	text := func() string {
		var b strings.Builder
		for k := r.Intn(5); k >= 0; k-- {
			b.WriteString(words[r.Intn(len(words))])
		}
		return b.String()
	}
	var lines []string
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	clock := time.Date(2025, 8, 1, 9, 0, 0, 0, time.UTC)
	add(map[string]any{"type": "session", "version": 3, "id": fmt.Sprint("changes-", seed), "timestamp": clock.Format(time.RFC3339), "cwd": "/home/user/proj"})
	var ids, assistants []string
	leaf := ""
	entry := func(typ string, fields map[string]any) {
		id := fmt.Sprintf("%02x%06x", len(ids)%256, r.Intn(1<<24))
		var parent any
		switch {
		case leaf != "" && r.Intn(8) == 0:
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
	editArgs := func() map[string]any {
		a := map[string]any{"path": file()}
		edits := []any{}
		for k := r.Intn(3); k >= 0; k-- {
			edits = append(edits, map[string]any{"oldText": text(), "newText": text()})
		}
		switch r.Intn(5) {
		case 0:
			a["edits"] = edits
		case 1:
			b, _ := json.Marshal(edits)
			a["edits"] = string(b)
		case 2:
			a["edits"] = edits[0]
		case 3:
			a["oldText"], a["newText"] = text(), text()
		default:
			a["edits"] = edits
			a["oldText"], a["newText"] = text(), text()
		}
		return a
	}
	patch := func() string {
		switch r.Intn(4) {
		case 0:
			return "--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n"
		case 1:
			return "@@ -1 +1,2 @@\n-x\n\\ No newline at end of file\n+y\n+z\n"
		case 2:
			return "@@ -3,1 +3,1 @@\n garbage"
		}
		return "not a patch"
	}
	for len(ids) < n {
		switch k := r.Intn(14); {
		case k < 2:
			entry("message", map[string]any{"message": map[string]any{"role": "user", "content": "change it", "timestamp": 1}})
		case k < 7:
			var blocks []any
			var calls [][2]string
			for c := r.Intn(3); c >= 0; c-- {
				id := fmt.Sprint("call_", r.Intn(3))
				var name string
				var a any
				switch r.Intn(4) {
				case 0:
					name, a = "write", map[string]any{"path": file(), "content": text()}
				case 1:
					name, a = "read", map[string]any{"path": file()}
				default:
					name, a = "edit", editArgs()
				}
				blocks = append(blocks, map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": a})
				calls = append(calls, [2]string{id, name})
			}
			entry("message", map[string]any{"message": map[string]any{"role": "assistant", "content": blocks, "stopReason": "toolUse", "timestamp": 1}})
			assistants = append(assistants, leaf)
			for _, c := range calls {
				if r.Intn(6) == 0 {
					continue // no result
				}
				m := map[string]any{"role": "toolResult", "toolCallId": c[0], "toolName": c[1], "isError": r.Intn(5) == 0,
					"content": []any{map[string]any{"type": "text", "text": "Could not\tdo it\nsecond line"}}, "timestamp": 1}
				if c[1] == "edit" && r.Intn(3) > 0 {
					m["details"] = map[string]any{"patch": patch()}
				}
				if r.Intn(5) == 0 {
					var nested []any
					for j := r.Intn(3); j >= 0; j-- {
						call := map[string]any{"id": "n", "name": []string{"write", "edit", "read"}[r.Intn(3)], "status": []string{"ok", "error", "unfinished"}[r.Intn(3)]}
						if r.Intn(4) > 0 {
							call["arguments"] = editArgs()
							call["arguments"].(map[string]any)["content"] = text()
						}
						nested = append(nested, call)
					}
					m["nestedCalls"] = map[string]any{"calls": nested, "complete": true}
				}
				entry("message", map[string]any{"message": m})
			}
		case k == 7 && len(assistants) > 0:
			var rep any
			if r.Intn(2) == 0 {
				rep = map[string]any{"content": []any{map[string]any{"type": "toolCall", "id": "z", "name": "edit", "arguments": map[string]any{"path": "replaced.txt"}}}}
			}
			entry("context_edit", map[string]any{"targetId": assistants[r.Intn(len(assistants))], "replacement": rep})
		case k == 8:
			entry("branch_summary", map[string]any{"fromId": leaf, "summary": "s", "details": map[string]any{"readFiles": []any{file(), map[string]any{"odd": 1}}, "modifiedFiles": []any{"summarized.txt"}}})
		default:
			entry("message", map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "ok"}}, "timestamp": 1}})
		}
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// checkFilesSizes checks every size function against its rendering at
// every entry of a session; it returns how many changed files it saw.
func checkFilesSizes(t testing.TB, tr *tree.Tree) int {
	changed := 0
	for _, e := range append([]*sessions.Entry{{}}, tr.Entries()...) {
		if e.ID == "" && e.Seq != 0 {
			continue
		}
		f := tr.FilesAt(e.ID)
		if n, b := FilesTextSize(f), FilesText(f); n != int64(len(b)) {
			t.Fatalf("at %q: FilesTextSize = %d, len(FilesText) = %d", e.ID, n, len(b))
		}
		b := FilesJSON(f)
		if n := FilesJSONSize(f); n != int64(len(b)) {
			t.Fatalf("at %q: FilesJSONSize = %d, len(FilesJSON) = %d", e.ID, n, len(b))
		}
		if !json.Valid(b) {
			t.Fatalf("at %q: files.json is not JSON:\n%s", e.ID, b)
		}
		if n, b := ChangesPatchSize(f), ChangesPatch(f); n != int64(len(b)) {
			t.Fatalf("at %q: ChangesPatchSize = %d, len(ChangesPatch) = %d", e.ID, n, len(b))
		}
		names := map[string]bool{}
		for i := range f.Changed {
			changed++
			if n, b := ChangeDiffSize(f, i), ChangeDiff(f, i); n != int64(len(b)) {
				t.Fatalf("at %q: ChangeDiffSize(%d) = %d, len(ChangeDiff) = %d", e.ID, i, n, len(b))
			}
			name := ChangeName(f, i)
			if names[name] || strings.Contains(name, "/") || len(name) > 255 {
				t.Fatalf("at %q: bad or repeated name %q", e.ID, name)
			}
			names[name] = true
		}
	}
	return changed
}

// TestFilesSizes: files.txt, files.json, changes.patch and every diff of
// changes/ have the sizes their size functions count, at every entry of
// sessions with every kind of call.
func TestFilesSizes(t *testing.T) {
	changed := 0
	for seed := int64(1); seed <= 4; seed++ {
		l, err := sessions.Parse(changesSession(t, "", seed, 120))
		if err != nil {
			t.Fatal(err)
		}
		changed += checkFilesSizes(t, tree.New(l))
	}
	if changed < 500 {
		t.Errorf("only %d changed files seen", changed)
	}
}

// FuzzChanges: any session renders files.txt, files.json, changes.patch
// and changes/ without a panic, at the sizes counted.
func FuzzChanges(f *testing.F) {
	for seed := int64(1); seed <= 4; seed++ {
		f.Add(changesSession(f, "", seed, 30))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := sessions.Parse(data)
		if err != nil || l.Header == nil {
			return
		}
		checkFilesSizes(t, tree.New(l))
	})
}

// piLists is files.mjs's answer for one session: pi's branch-summary
// lists of the path to each entry.
type piLists struct {
	Lists map[string]struct {
		ReadFiles     []json.RawMessage `json:"readFiles"`
		ModifiedFiles []json.RawMessage `json:"modifiedFiles"`
		Error         *string           `json:"error"`
	} `json:"lists"`
	Error *string `json:"error"`
}

// TestFilesTextMatchPi: at every entry of every session of pi's
// conformance corpus and of sessions with every kind of call, the two
// lists of files.txt (its "read" and "modified" lines, paths unquoted) and
// of files.json (readFiles, modifiedFiles) are what pi's branch-summary
// code (computeFileLists over extractFileOpsFromMessage of the path, by
// prepareBranchEntries) finds in the same path.
func TestFilesTextMatchPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	var files []string
	filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	})
	dir := t.TempDir()
	for seed := int64(1); seed <= 2; seed++ {
		p := filepath.Join(dir, fmt.Sprint("changes-", seed, ".jsonl"))
		if err := os.WriteFile(p, changesSession(t, dir, seed, 100), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, genSession(t, dir, seed, 100), p)
	}
	in, _ := json.Marshal(files)
	home, _ := os.UserHomeDir()
	out := oracle.NodeWith(t, oracle.NodeOptions{Stdin: in, Env: []string{"HOME=" + home}}, "files.mjs")
	var answers []piLists
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(files) {
		t.Fatalf("files.mjs: %v (%d answers for %d files)", err, len(answers), len(files))
	}
	compared, withFiles := 0, 0
	for i, file := range files {
		if answers[i].Error != nil {
			t.Fatalf("%s: pi threw %s", file, *answers[i].Error)
		}
		l, err := sessions.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		tr := tree.New(l)
		for _, e := range tr.Entries() {
			want, ok := answers[i].Lists[e.ID]
			if e.ID == "" || !ok || want.Error != nil {
				continue
			}
			compared++
			f := tr.FilesAt(e.ID)
			var gotRead, gotMod []string
			for _, line := range strings.Split(strings.TrimSuffix(string(FilesText(f)), "\n"), "\n") {
				if line == "" {
					continue
				}
				fields := strings.SplitN(line, "\t", 7)
				p, err := unquotePath(fields[6])
				if err != nil {
					t.Fatalf("%s: path %q: %v", line, fields[6], err)
				}
				switch fields[0] {
				case "read":
					gotRead = append(gotRead, p)
				case "modified":
					gotMod = append(gotMod, p)
				}
			}
			wantRead, wantMod := texts(t, want.ReadFiles), texts(t, want.ModifiedFiles)
			if len(wantRead)+len(wantMod) > 0 {
				withFiles++
			}
			if strings.Join(gotRead, "\n") != strings.Join(wantRead, "\n") || strings.Join(gotMod, "\n") != strings.Join(wantMod, "\n") {
				t.Errorf("%s at %s: files.txt lists\nread     %q\nmodified %q\npi: read %q\nmodified %q", filepath.Base(file), e.ID, gotRead, gotMod, wantRead, wantMod)
			}
			var js struct{ ReadFiles, ModifiedFiles []json.RawMessage }
			if err := json.Unmarshal(FilesJSON(f), &js); err != nil {
				t.Fatal(err)
			}
			if canon(t, js.ReadFiles) != canon(t, want.ReadFiles) || canon(t, js.ModifiedFiles) != canon(t, want.ModifiedFiles) {
				t.Errorf("%s at %s: files.json lists %s %s, pi %s %s", filepath.Base(file), e.ID,
					canon(t, js.ReadFiles), canon(t, js.ModifiedFiles), canon(t, want.ReadFiles), canon(t, want.ModifiedFiles))
			}
		}
	}
	t.Logf("%d sessions, %d paths compared, %d with files", len(files), compared, withFiles)
	if withFiles < 150 {
		t.Errorf("only %d paths with files", withFiles)
	}
}

// texts is String() of each value, as files.txt writes a list value.
func texts(t *testing.T, vals []json.RawMessage) []string {
	var out []string
	for _, v := range vals {
		var s string
		if json.Unmarshal(v, &s) != nil {
			if bytes.HasPrefix(v, []byte("{")) {
				s = "[object Object]"
			} else {
				s = string(v)
			}
		}
		out = append(out, s)
	}
	return out
}

func canon(t *testing.T, vals []json.RawMessage) string {
	b, err := json.Marshal(vals)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(b, &v)
	b, _ = json.Marshal(v)
	return string(b)
}

// unquotePath reads a path as files.txt writes it: as it is, or quoted
// with C escapes (as Go's strconv reads them, but for octal escapes,
// which both share).
func unquotePath(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	return strconv.Unquote(s)
}
