package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/internal/oracle"
)

// Writes through the mount (docs/reference.md, "Controls"), driven by the shell as a
// user would, and checked by letting the real pi read the file back.

// sh runs a shell script in dir (through the cd-after-exec helper) and
// returns its output; it fails the test when the script fails.
func sh(t *testing.T, dir, script string) string {
	t.Helper()
	return run(t, dir, "sh", "-c", script)
}

// shFails runs a script that must fail and returns its output.
func shFails(t *testing.T, dir, script string) string {
	t.Helper()
	out, code := runStatus(t, dir, "sh", "-c", script)
	if code == 0 {
		t.Fatalf("script succeeded, want a failure:\n%s\n%s", script, out)
	}
	return out
}

// writeControl writes data to a control in one write(2) and closes it;
// it returns the first error, of the write or of the close (Flush).
func writeControl(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(data))
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// piView is what pi sees in a session file.
func piView(t *testing.T, file string) *oracle.View {
	t.Helper()
	return piViewOf(t, file, true)
}

// piOpen is what pi resumes a large session with: its entry count, leaf and
// context (oracle.Dump lists every path, which is quadratic in the
// length of a session).
func piOpen(t *testing.T, file string) (entries int, context []byte) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "pi_open.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Entries int
		Context json.RawMessage
	}
	if out := oracle.Node(t, script, file); json.Unmarshal(out, &v) != nil {
		t.Fatalf("pi_open.mjs: %.500s", out)
	}
	return v.Entries, v.Context
}

// piViewOf is piView, with the context of every entry or only of the tips
// and the leaf.
func piViewOf(t *testing.T, file string, allContexts bool) *oracle.View {
	t.Helper()
	v := oracle.Dump(t, file, allContexts)
	if !v.Valid {
		t.Fatalf("pi cannot open %s: %v", file, v.Error)
	}
	return v
}

func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v: %s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v: %s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %.2000s\nwant %.2000s", what, got, want)
	}
}

// contextTexts returns the text of each message of a context.
func contextTexts(t *testing.T, ctx []byte) []string {
	t.Helper()
	var c struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(ctx, &c); err != nil {
		t.Fatalf("context: %v", err)
	}
	var out []string
	for _, m := range c.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			var blocks []struct{ Type, Text string }
			_ = json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "text" {
					s += b.Text
				}
			}
		}
		out = append(out, m.Role+":"+s)
	}
	return out
}

// entry decodes one of pi's entries.
func entry(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tail returns the last n elements.
func tail[T any](s []T, n int) []T {
	if len(s) < n {
		return s
	}
	return s[len(s)-n:]
}

var errorLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S`)

// lastError returns the last line of a session's errors file, checking
// that it starts with an ISO time.
func lastError(t *testing.T, s string) string {
	t.Helper()
	l := lines(readText(t, filepath.Join(s, "errors")))
	if len(l) == 0 {
		t.Fatal("errors is empty")
	}
	last := l[len(l)-1]
	if !errorLine.MatchString(last) {
		t.Errorf("errors line without an ISO time: %q", last)
	}
	return last
}

func TestWriteLeaf(t *testing.T) {
	store, file := writeStore(t)
	before := piView(t, file)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	tips := sh(t, s, "ls branches")

	check := func(want string) {
		t.Helper()
		if got := readText(t, filepath.Join(s, "leaf")); got != want+"\n" {
			t.Errorf("leaf reads %q right after the write, want %q", got, want)
		}
		pi := piView(t, file)
		wantCtx := before.ContextNull
		if want != "" {
			wantCtx = before.Contexts[want]
		}
		sameJSON(t, "pi's context after moving the leaf to "+want, pi.ContextAtLeaf, wantCtx)
		if last := entry(t, pi.Entries[len(pi.Entries)-1]); last["customType"] != "pifs.leaf" {
			t.Errorf("the move is not recorded as a pifs.leaf entry: %v", last)
		}
		if got := sh(t, s, "ls branches"); got != tips {
			t.Errorf("branches/ changed to\n%s", got)
		}
	}
	sh(t, s, "echo a2 > leaf") // open, truncate, write
	check("a2")
	sh(t, s, "echo b1 >> leaf")
	check("b1")
	sh(t, s, "printf a3 > leaf") // no newline: taken at close
	check("a3")
	sh(t, s, "echo good%2Fone > leaf") // a label, as ls labels/ shows it
	check("a2")
	sh(t, s, "echo 'good/one' > leaf") // the label's text
	check("a2")
	sh(t, s, "echo entries/b1.json > leaf")
	check("b1")
	sh(t, s, "echo > leaf") // before the first entry
	check("")

	// An unknown entry: ENOENT, nothing written, the reason in errors.
	data := readText(t, file)
	if err := writeControl(filepath.Join(s, "leaf"), "nope\n"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("unknown entry: %v, want ENOENT", err)
	}
	if err := writeControl(filepath.Join(s, "leaf"), "nope"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("unknown entry at close: %v, want ENOENT", err)
	}
	if readText(t, file) != data {
		t.Error("a refused leaf write changed the file")
	}
	if last := lastError(t, s); !strings.Contains(last, `leaf: line 1: no entry or label "nope"; write an entry id`) {
		t.Errorf("errors: %q", last)
	}
}

func TestWriteName(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	for _, c := range []struct{ script, want string }{
		{"echo Renamed > name", "Renamed"},
		{"printf '  Spaced out  ' >> name", "Spaced out"},
		{"printf 'first\\nsecond\\n' > name", "second"},
		{"echo > name", ""},
	} {
		sh(t, s, c.script)
		if got := readText(t, filepath.Join(s, "name")); got != c.want+"\n" {
			t.Errorf("%s: name reads %q", c.script, got)
		}
		got := ""
		if pi := piView(t, file); pi.Name != nil {
			got = *pi.Name
		}
		if got != c.want {
			t.Errorf("%s: pi's name %q, want %q", c.script, got, c.want)
		}
	}
}

// TestWriteAppendDeliveries appends through every way a write arrives and
// checks that pi sees each line once, in order, chained at the leaf.
func TestWriteAppendDeliveries(t *testing.T) {
	store, file := writeStore(t)
	before := piView(t, file)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	sh(t, s, "echo first > append")
	sh(t, s, "echo second >> append")
	sh(t, s, "printf third > append")
	sh(t, s, "printf 'fourth line\\nfifth\\nsixth one\\n' | dd of=append bs=7 status=none")
	sh(t, s, `python3 -c 'import os; fd = os.open("append", os.O_WRONLY | os.O_APPEND); n = os.write(fd, b"seventh\neighth\nninth\n"); assert n == 21; os.close(fd)'`)
	// A message given as JSON, its timestamp filled in.
	sh(t, s, `echo '{"role":"user","content":"tenth"}' >> append`)

	pi := piView(t, file)
	want := []string{"user:first", "user:second", "user:third", "user:fourth line", "user:fifth", "user:sixth one",
		"user:seventh", "user:eighth", "user:ninth", "user:tenth"}
	texts := contextTexts(t, pi.ContextAtLeaf)
	if got := tail(texts, len(want)); !reflect.DeepEqual(got, want) {
		t.Errorf("pi's context ends with %q", got)
	}
	if len(texts) != len(contextTexts(t, before.ContextAtLeaf))+len(want) {
		t.Errorf("pi's context has %d messages", len(texts))
	}
	if len(pi.Entries) != len(before.Entries)+len(want) {
		t.Errorf("%d entries, want %d", len(pi.Entries), len(before.Entries)+len(want))
	}
	last := entry(t, pi.Entries[len(pi.Entries)-1])
	if ts, ok := last["message"].(map[string]any)["timestamp"].(float64); !ok || ts < 1.7e12 {
		t.Errorf("message timestamp not filled in: %v", last)
	}
	if got := readText(t, filepath.Join(s, "leaf")); got != last["id"].(string)+"\n" {
		t.Errorf("leaf %q, want the last entry %v", got, last["id"])
	}
}

// TestWriteAppendBig: cat of 2000 lines arrives in 128 KiB writes cut in
// the middle of lines.
func TestWriteAppendBig(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	var big bytes.Buffer
	pad := strings.Repeat("x", 200)
	for i := 0; i < 2000; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&big, "{\"role\":\"user\",\"content\":\"big %d %s\"}\n", i, pad)
		} else {
			fmt.Fprintf(&big, "big %d %s\n", i, pad)
		}
	}
	src := filepath.Join(t.TempDir(), "big.jsonl")
	os.WriteFile(src, big.Bytes(), 0o644)
	if big.Len() < 3*128<<10 {
		t.Fatalf("input too small: %d", big.Len())
	}
	sh(t, s, "cat "+src+" > append")
	entries, ctx := piOpen(t, file)
	texts := tail(contextTexts(t, ctx), 2000)
	for i, txt := range texts {
		if want := fmt.Sprintf("user:big %d %s", i, pad); txt != want {
			t.Fatalf("message %d is %.40q", i, txt)
		}
	}
	if entries != len(fixLines)-1+2000 {
		t.Errorf("%d entries", entries)
	}
}

// TestWriteAppendTypes appends every entry type in one write and lets pi
// read them.
func TestWriteAppendTypes(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	batch := strings.Join([]string{
		`{"type":"thinking_level_change","thinkingLevel":"high"}`,
		`{"type":"model_change","provider":"openai","modelId":"gpt-x"}`,
		`{"type":"custom","customType":"ext","data":{"k": [1, 2]}}`,
		`{"type":"custom_message","customType":"ext","content":"a note","display":false}`,
		`{"type":"label","targetId":"a1","label":"start"}`,
		`{"type":"usage","kind":"warm","provider":"openai","model":"gpt-x","usage":{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}}}`,
		`{"type":"session_info","name":"Typed"}`,
		`{"type":"context_edit","targetId":"a1","replacement":{"content":"hello, edited"}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"typed reply"}],"provider":"openai","model":"gpt-x","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}}`,
		`{"type":"compaction","summary":"all so far","tokensBefore":1234}`,
		`{"role":"user","content":"after the compaction"}`,
		`{"type":"branch_summary","parentId":"a2","summary":"tried the other way"}`,
	}, "\n") + "\n"
	if err := writeControl(filepath.Join(s, "append"), batch); err != nil {
		t.Fatal(err)
	}
	pi := piView(t, file)
	var types []string
	for _, e := range tail(pi.Entries, 12) {
		types = append(types, entry(t, e)["type"].(string))
	}
	want := []string{"thinking_level_change", "model_change", "custom", "custom_message", "label", "usage",
		"session_info", "context_edit", "message", "compaction", "message", "branch_summary"}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("types %v", types)
	}
	if pi.Name == nil || *pi.Name != "Typed" || string(pi.Labels["a1"]) != `"start"` {
		t.Errorf("name %v, labels %v", pi.Name, pi.Labels)
	}
	bs := entry(t, pi.Entries[len(pi.Entries)-1])
	prev := entry(t, pi.Entries[len(pi.Entries)-2])
	if bs["parentId"] != "a2" || bs["fromId"] != prev["id"] {
		t.Errorf("branch_summary: %v (previous leaf %v)", bs, prev["id"])
	}
	if got := tail(contextTexts(t, pi.ContextAtLeaf), 1); got[0] != "branchSummary:" {
		t.Errorf("context ends with %q", got)
	}
	// pifs shows what pi computes.
	sameJSON(t, "context.json after every type", []byte(readText(t, filepath.Join(s, "context.json"))), pi.ContextAtLeaf)
	compaction := entry(t, pi.Entries[len(pi.Entries)-3])["id"].(string)
	sameJSON(t, "context at the compaction", []byte(readText(t, filepath.Join(s, "branches", compaction, "context.json"))), pi.Contexts[compaction])
	if pi.Usage == nil || pi.Usage.Cost < 0.5 {
		t.Errorf("usage %+v", pi.Usage)
	}

	// Refusals: errno, nothing written, a reason that says what to do.
	data := readText(t, file)
	for _, c := range []struct {
		line  string
		errno syscall.Errno
		says  string
	}{
		{`{"type":"foo"}`, syscall.EINVAL, `unknown type "foo"; use one of: label, custom,`},
		{`{"type":"custom","customType":"x","id":"given"}`, syscall.EINVAL, `"id" is assigned by pifs, never given; leave it out`},
		{`{"type":"label","targetId":"zz","label":"x"}`, syscall.ENOENT, `label: targetId "zz": no such entry; give the id of an entry`},
		{`{"type":"custom","customType":"x","parentId":"zz"}`, syscall.ENOENT, `parentId "zz": no such entry`},
		{`{"role":"robot","content":"x"}`, syscall.EINVAL, `unknown role "robot"; use one of: user,`},
		{`{"type":"model_change","provider":"p"}`, syscall.EINVAL, `model_change: "modelId" must be a string; e.g. {"type":"model_change"`},
		{`{"type":"custom","customType":"x","extra":1}`, syscall.EINVAL, `custom: unknown field "extra"; the fields are:`},
		{`{"type":"context_edit","targetId":"a3","replacement":null}`, syscall.EINVAL, `not on the active branch; the target must be`},
		{`{"content":"x"}`, syscall.EINVAL, `a JSON object needs "role"`},
		{``, syscall.EINVAL, `empty line; write the text of a user message`},
	} {
		err := writeControl(filepath.Join(s, "append"), "fine\n"+c.line+"\n")
		if !errors.Is(err, c.errno) {
			t.Errorf("%s: %v, want %v", c.line, err, c.errno)
		}
		if last := lastError(t, s); !strings.Contains(last, "append: line 2: ") || !strings.Contains(last, c.says) {
			t.Errorf("%s: errors says %q", c.line, last)
		}
	}
	if readText(t, file) != data {
		t.Error("refused writes changed the file")
	}
}

// TestWriteRefusedBatch: one bad line in a write refuses the whole write,
// and the whole transaction of its open file.
func TestWriteRefusedBatch(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	data := readText(t, file)
	out := shFails(t, s, `python3 -c 'import os; fd = os.open("append", os.O_WRONLY | os.O_APPEND); os.write(fd, b"one\n{\"role\": \"user\", \"content\": \"x\"\nthree\n")'`)
	if !strings.Contains(out, "Invalid argument") {
		t.Errorf("python: %s", out)
	}
	if readText(t, file) != data {
		t.Fatal("a refused write changed the file")
	}
	last := lastError(t, s)
	if !strings.Contains(last, `append: line 2: malformed JSON: a line starting with "{" must be one JSON object on one line; to send such text, write {"role":"user","content":"TEXT"}`) {
		t.Errorf("errors: %q", last)
	}
	// One open file is one transaction: a bad line discards the lines
	// before it and refuses the writes after it. (A shell's `>&3` closes
	// a duplicate of 3 after each command: that close commits.)
	sh(t, s, `{ echo good; echo '{bad' || true; echo after || true; } >>append || true`)
	if readText(t, file) != data {
		t.Fatal("a refused transaction changed the file")
	}
	// A duplicated descriptor takes a last line without newline once.
	sh(t, s, `exec 3>>append; echo bad '{' >&3; printf 'partial' >&3; exec 4>&3; exec 3>&-; exec 4>&-`)
	pi := piView(t, file)
	if got := tail(contextTexts(t, pi.ContextAtLeaf), 2); !reflect.DeepEqual(got, []string{"user:bad {", "user:partial"}) {
		t.Errorf("context ends with %q", got)
	}
	if len(pi.Entries) != len(fixLines)+1 {
		t.Errorf("%d entries, want %d", len(pi.Entries), len(fixLines)+1)
	}
}

func TestWriteLabels(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	sh(t, s, "ln -s a3 labels/mine && ln -s ../entries/b1.json labels/other%2Fname")
	if got := sh(t, s, "readlink labels/mine labels/other%2Fname"); got != "../entries/a3.json\n../entries/b1.json\n" {
		t.Errorf("readlink: %q", got)
	}
	if got := sh(t, s, "jq -r .id labels/mine"); got != "a3\n" {
		t.Errorf("label target: %q", got)
	}
	sh(t, s, "rm labels/good%2Fone")
	if got := sh(t, s, "ls labels"); got != "mine\nother%2Fname\n" {
		t.Errorf("ls labels: %q", got)
	}
	pi := piView(t, file)
	if len(pi.Labels) != 2 || string(pi.Labels["a3"]) != `"mine"` || string(pi.Labels["b1"]) != `"other/name"` {
		t.Errorf("pi's labels: %v", pi.Labels)
	}
	out := shFails(t, s, "ln -s nope labels/x")
	if !strings.Contains(out, "No such file") {
		t.Errorf("ln -s to an unknown entry: %s", out)
	}
	if last := lastError(t, s); !strings.Contains(last, `labels: x: no entry "nope"; link to an entry id`) {
		t.Errorf("errors: %q", last)
	}
}

// forkPath writes a line to a control and reads the new session's path back
// from the same open file, as a shell user would.
func forkPath(t *testing.T, dir, ctl, line string) string {
	t.Helper()
	out := sh(t, dir, fmt.Sprintf(`exec 3<>%s; printf '%%s\n' '%s' >&3; read -r path <&3; exec 3>&-; printf %%s "$path"`, ctl, line))
	if out == "" || strings.HasPrefix(out, "/") {
		t.Fatalf("%s: read back %q", ctl, out)
	}
	return out
}

func TestWriteFork(t *testing.T) {
	store, file := writeStore(t)
	before := piView(t, file)
	mnt := testMount(t, store)
	s := sessionPath(mnt)

	// At an entry: pi's /clone.
	p := forkPath(t, s, "fork", "a2")
	if !strings.HasPrefix(p, fixProject+"/") {
		t.Errorf("clone in %s", p)
	}
	clone := piView(t, filepath.Join(store, p+".jsonl"))
	sameJSON(t, "clone context", clone.ContextAtLeaf, before.Contexts["a2"])
	if clone.Info == nil || clone.Info.ParentSessionPath != file {
		t.Errorf("clone's parent: %+v", clone.Info)
	}
	if string(clone.Labels["a2"]) != `"good/one"` || len(clone.Tips) != 1 {
		t.Errorf("clone labels %v tips %v", clone.Labels, clone.Tips)
	}
	if got := sh(t, mnt, "cat ./"+p+"/leaf"); got == "" {
		t.Error("the clone is not in the mount")
	}

	// The whole session: pi's --fork.
	p = forkPath(t, s, "fork", "")
	whole := piView(t, filepath.Join(store, p+".jsonl"))
	sameJSON(t, "fork context", whole.ContextAtLeaf, before.ContextAtLeaf)
	if len(whole.Entries) != len(before.Entries) {
		t.Errorf("fork has %d entries", len(whole.Entries))
	}

	// Into another project, with an id and a name.
	p = forkPath(t, s, "fork", `{"from":"good/one","cwd":"/other/place","id":"my-fork-1","name":"Forked"}`)
	if !strings.HasPrefix(p, "--other-place--/") || !strings.HasSuffix(p, "_my-fork-1") {
		t.Errorf("fork into /other/place: %s", p)
	}
	other := piView(t, filepath.Join(store, p+".jsonl"))
	sameJSON(t, "fork context", other.ContextAtLeaf, before.Contexts["a2"])
	if other.Name == nil || *other.Name != "Forked" || other.Info == nil || other.Info.Cwd != "/other/place" || other.Info.ID != "my-fork-1" {
		t.Errorf("fork: name %v info %+v", other.Name, other.Info)
	}
	if got := sh(t, mnt, "readlink by-id/my-fork-1"); got != "../"+p+"\n" {
		t.Errorf("by-id: %q", got)
	}

	// Refusals.
	for _, c := range []struct {
		line  string
		errno syscall.Errno
		says  string
	}{
		{"nope", syscall.ENOENT, `fork: line 1: no entry or label "nope"; write an entry id`},
		{`{"id":"bad id!"}`, syscall.EINVAL, `fork: line 1: session id "bad id!" must be`},
		{`{"id":"my-fork-1"}`, syscall.EEXIST, `session id "my-fork-1" is taken`},
		{`{"cwd":"relative/dir"}`, syscall.EINVAL, `is not an absolute path`},
		{`{"to":"x"}`, syscall.EINVAL, `unknown field "to"`},
	} {
		if err := writeControl(filepath.Join(s, "fork"), c.line+"\n"); !errors.Is(err, c.errno) {
			t.Errorf("%s: %v, want %v", c.line, err, c.errno)
		}
		if last := lastError(t, s); !strings.Contains(last, c.says) {
			t.Errorf("%s: errors says %q", c.line, last)
		}
	}
	if n := len(lines(sh(t, mnt, "ls ./"+fixProject))); n != 11 { // active, by-file, by-name, cwd, errors, latest, new, usage, the session, the clone, the fork
		t.Errorf("%d names in the project after refused forks", n)
	}
}

func TestWriteNew(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	proj := filepath.Join(mnt, fixProject)

	p := forkPath(t, proj, "new", "")
	pi := piView(t, filepath.Join(store, p+".jsonl"))
	if len(pi.Entries) != 0 || pi.Info == nil || pi.Info.Cwd != "/work/proj" || !strings.HasPrefix(p, fixProject+"/") {
		t.Errorf("new in a project: %s: %d entries, info %+v", p, len(pi.Entries), pi.Info)
	}
	p = forkPath(t, proj, "new", `{"id":"fresh-1","name":"Fresh"}`)
	pi = piView(t, filepath.Join(store, p+".jsonl"))
	if pi.Name == nil || *pi.Name != "Fresh" || pi.Info.ID != "fresh-1" {
		t.Errorf("new with id and name: %v %+v", pi.Name, pi.Info)
	}

	p = forkPath(t, mnt, "new", "/some/where")
	if !strings.HasPrefix(p, "--some-where--/") {
		t.Errorf("new at the root: %s", p)
	}
	if got := sh(t, mnt, "jq -r .cwd ./"+p+"/header.json; cat ./--some-where--/cwd"); got != "/some/where\n/some/where\n" {
		t.Errorf("new session's cwd: %q", got)
	}
	p = forkPath(t, mnt, "new", `{"cwd":"/x/y/","id":"root-new","name":"R"}`)
	pi = piView(t, filepath.Join(store, p+".jsonl"))
	if !strings.HasPrefix(p, "--x-y--/") || pi.Info.Cwd != "/x/y" || *pi.Name != "R" {
		t.Errorf("new at the root with JSON: %s %+v", p, pi.Info)
	}

	for _, c := range []struct {
		dir, line string
		errno     syscall.Errno
	}{
		{mnt, "", syscall.EINVAL},
		{mnt, "relative", syscall.EINVAL},
		{mnt, `{"id":"x"}`, syscall.EINVAL},
		{mnt, `{"cwd":"/a","id":"root-new"}`, syscall.EEXIST},
		{proj, `{"cwd":"/a"}`, syscall.EINVAL},
		{proj, "text", syscall.EINVAL},
	} {
		if err := writeControl(filepath.Join(c.dir, "new"), c.line+"\n"); !errors.Is(err, c.errno) {
			t.Errorf("%s/new %q: %v, want %v", filepath.Base(c.dir), c.line, err, c.errno)
		}
	}
}

// TestWriteScript is the README's script: pick a labelled entry, move the
// leaf there, try something else, compare the branches, and fork the new
// branch into another project. pi then opens both sessions.
func TestWriteScript(t *testing.T) {
	store, file := writeStore(t)
	before := piView(t, file)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	out := sh(t, s, `
		label=$(ls labels/ | head -n 1)
		old=$(cat leaf)
		echo "$label" > leaf
		echo "try B" > append
		new=$(cat leaf)
		exec 3<>fork
		printf '{"from":"%s","cwd":"/other"}\n' "$new" >&3
		read -r path <&3
		exec 3>&-
		echo "$old $new $path"
	`)
	f := strings.Fields(out)
	if len(f) != 3 {
		t.Fatalf("script printed %q", out)
	}
	old, newTip, forked := f[0], f[1], f[2]
	if old != "s1" || !strings.HasPrefix(forked, "--other--/") {
		t.Errorf("old %s, fork %s", old, forked)
	}
	diff := run(t, s, "sh", "-c", `diff -r "branches/$0" "branches/$1" || true`, old, newTip)
	for _, want := range []string{"Only in branches/s1: 0003-user-b1.json", "Only in branches/" + newTip + ": 0003-assistant-a2.json", "Only in branches/" + newTip + ": 0005-user-" + newTip + ".json"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff -r lacks %q:\n%s", want, diff)
		}
	}
	want := append(contextTexts(t, before.Contexts["a2"]), "user:try B")
	src := piView(t, file)
	if got := contextTexts(t, src.ContextAtLeaf); !reflect.DeepEqual(got, want) {
		t.Errorf("pi resumes the session with %q, want %q", got, want)
	}
	fork := piView(t, filepath.Join(store, forked+".jsonl"))
	sameJSON(t, "the fork's context", fork.ContextAtLeaf, src.ContextAtLeaf)
	if fork.Info == nil || fork.Info.Cwd != "/other" {
		t.Errorf("fork info %+v", fork.Info)
	}

	// The leaf stays where it was put, across a remount, and the record
	// of the move is never a tip.
	sh(t, s, "echo a3 > leaf")
	tips := sh(t, s, "ls branches")
	mnt2 := testMount(t, store)
	s2 := sessionPath(mnt2)
	if got := sh(t, s2, "cat leaf; readlink current"); got != "a3\nbranches/a3\n" {
		t.Errorf("after a remount: %q", got)
	}
	if got := sh(t, s2, "ls branches"); got != tips || strings.Count(got, "\n") != 3 {
		t.Errorf("branches after a remount:\n%s\nbefore:\n%s", got, tips)
	}
}

// TestWriteMigratesV1: the first write to a version 1 session migrates it,
// keeping the ids pifs showed; a refused write and reads leave it alone.
func TestWriteMigratesV1(t *testing.T) {
	store := t.TempDir()
	dir := filepath.Join(store, "--home-u-old--")
	os.MkdirAll(dir, 0o755)
	orig, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "v1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "2026-01-01T00-00-00-000Z_v1-session.jsonl")
	os.WriteFile(file, orig, 0o644)
	mnt := testMount(t, store)
	s := filepath.Join(mnt, "--home-u-old--", "2026-01-01T00-00-00-000Z_v1-session")
	shown := lines(sh(t, s, "ls entries"))
	oldLeaf := strings.TrimSpace(readText(t, filepath.Join(s, "leaf")))
	ctx := readText(t, filepath.Join(s, "context.json"))
	if err := writeControl(filepath.Join(s, "append"), "{\n"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bad line: %v", err)
	}
	if readText(t, file) != string(orig) {
		t.Fatal("reading or a refused write changed a v1 file")
	}
	sh(t, s, "echo after migration >> append")
	pi := piView(t, file)
	var h struct{ Version int }
	json.Unmarshal(pi.Header, &h)
	if h.Version != 3 {
		t.Errorf("not migrated: version %d", h.Version)
	}
	var ids []string
	for _, e := range pi.Entries[:len(pi.Entries)-1] {
		ids = append(ids, entry(t, e)["id"].(string)+".json")
	}
	if !reflect.DeepEqual(sortedCopy(ids), shown) {
		t.Errorf("pi's ids %v, pifs showed %v", ids, shown)
	}
	last := entry(t, pi.Entries[len(pi.Entries)-1])
	if last["parentId"] != oldLeaf {
		t.Errorf("new entry under %v, want the leaf pifs showed %s", last["parentId"], oldLeaf)
	}
	want := append(contextTexts(t, []byte(ctx)), "user:after migration")
	if got := contextTexts(t, pi.ContextAtLeaf); !reflect.DeepEqual(got, want) {
		t.Errorf("context %q, want %q", got, want)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

// TestWriteReadOnly: --read-only refuses every control with EROFS and
// leaves the store untouched.
func TestWriteReadOnly(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store, func(o *fs.Options) { o.ReadOnly = true })
	s := sessionPath(mnt)
	hash := hashTree(t, store)
	for _, p := range []string{"leaf", "name", "append", "fork", "../new", "../../new"} {
		if err := writeControl(filepath.Join(s, p), "a1\n"); !errors.Is(err, syscall.EROFS) {
			t.Errorf("write %s: %v, want EROFS", p, err)
		}
	}
	out := shFails(t, s, "echo a1 > leaf")
	if !strings.Contains(out, "Read-only file system") {
		t.Errorf("echo > leaf: %s", out)
	}
	if err := os.Symlink("a1", filepath.Join(s, "labels", "x")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("ln -s: %v", err)
	}
	if err := os.Remove(filepath.Join(s, "labels", "good%2Fone")); !errors.Is(err, syscall.EROFS) {
		t.Errorf("rm label: %v", err)
	}
	if hashTree(t, store) != hash {
		t.Error("the store changed")
	}
}

// TestWriteDeliveries writes to every control in every way a write
// arrives: echo > (open, truncate, write), echo >>, printf without newline
// (taken at close), dd bs=7 (lines cut across writes) and Python writing
// two lines in one write(2).
func TestWriteDeliveries(t *testing.T) {
	store, file := writeStore(t)
	before := piView(t, file)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	deliveries := []struct {
		name, script string
		lines        int // commands each delivery makes
	}{
		{"echo >", `echo "$1" > "$0"`, 1},
		{"echo >>", `echo "$1" >> "$0"`, 1},
		{"printf", `printf %s "$1" > "$0"`, 1},
		{"dd bs=7", `printf '%s\n' "$1" | dd of="$0" bs=7 status=none`, 1},
		{"python", `python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.write(fd, ((sys.argv[2] + "\n") * 2).encode()); os.close(fd)' "$0" "$1"`, 2},
	}
	count := func(dir string) int { return len(lines(sh(t, dir, "ls"))) }
	for _, c := range []struct {
		dir, ctl string
		arg      func(i int) string
		check    func(i int, d string, n int)
	}{
		{s, "leaf", func(i int) string { return []string{"a2", "b1", "a3", "good/one", "a1"}[i] },
			func(i int, d string, n int) {
				if got, want := readText(t, filepath.Join(s, "leaf")), []string{"a2", "b1", "a3", "a2", "a1"}[i]+"\n"; got != want {
					t.Errorf("%s > leaf: reads %q, want %q", d, got, want)
				}
			}},
		{s, "name", func(i int) string { return fmt.Sprintf("Name %d", i) },
			func(i int, d string, n int) {
				if got := readText(t, filepath.Join(s, "name")); got != fmt.Sprintf("Name %d\n", i) {
					t.Errorf("%s > name: reads %q", d, got)
				}
			}},
		{s, "append", func(i int) string { return fmt.Sprintf("message %d", i) },
			func(i int, d string, n int) {
				texts := contextTexts(t, []byte(readText(t, filepath.Join(s, "context.json"))))
				for _, got := range tail(texts, n) {
					if got != fmt.Sprintf("user:message %d", i) {
						t.Errorf("%s > append: context ends with %q", d, tail(texts, n))
					}
				}
			}},
		{s, "fork", func(i int) string { return "b1" },
			func(i int, d string, n int) {}},
		{filepath.Join(mnt, fixProject), "new", func(i int) string { return fmt.Sprintf(`{"name":"New %d"}`, i) },
			func(i int, d string, n int) {}},
		{mnt, "new", func(i int) string { return fmt.Sprintf("/deliveries/d%d", i) },
			func(i int, d string, n int) {
				if _, err := os.Stat(filepath.Join(mnt, fmt.Sprintf("--deliveries-d%d--", i))); err != nil {
					t.Errorf("%s > new: %v", d, err)
				}
			}},
	} {
		projectBefore := count(filepath.Join(mnt, fixProject))
		made := 0
		for i, d := range deliveries {
			run(t, c.dir, "sh", "-c", d.script, c.ctl, c.arg(i))
			made += d.lines
			c.check(i, d.name, d.lines)
		}
		switch {
		case c.ctl == "fork" || (c.ctl == "new" && c.dir != mnt):
			if got := count(filepath.Join(mnt, fixProject)) - projectBefore; got != made {
				t.Errorf("%s/%s: %d new sessions, want %d", filepath.Base(c.dir), c.ctl, got, made)
			}
		case c.ctl == "leaf":
			sameJSON(t, "pi's context after the leaf writes", piView(t, file).ContextAtLeaf, before.Contexts["a1"])
		case c.ctl == "name":
			if pi := piView(t, file); pi.Name == nil || *pi.Name != "Name 4" {
				t.Errorf("pi's name %v", pi.Name)
			}
		case c.ctl == "append":
			entries, ctx := piOpen(t, file)
			want := []string{"user:message 0", "user:message 1", "user:message 2", "user:message 3", "user:message 4", "user:message 4"}
			if got := tail(contextTexts(t, ctx), 6); !reflect.DeepEqual(got, want) || entries != len(before.Entries)+3*6 { // six commands to each of leaf, name and append
				t.Errorf("pi: %d entries, context ends with %q", entries, got)
			}
		}
	}
}

// TestWriteControlAttrs: a control takes truncation and touch, nothing else.
func TestWriteControlAttrs(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	sh(t, s, ": > leaf; truncate -s 0 append; touch name fork ../new ../../new")
	if err := os.Truncate(filepath.Join(s, "leaf"), 3); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("truncate to 3: %v", err)
	}
	if err := os.Chmod(filepath.Join(s, "leaf"), 0o600); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chmod: %v", err)
	}
	if err := os.Truncate(filepath.Join(s, "info.json"), 0); !errors.Is(err, syscall.EROFS) {
		t.Errorf("truncate info.json: %v", err)
	}
	if got := readText(t, filepath.Join(s, "leaf")); got != "s1\n" {
		t.Errorf("leaf %q after truncations", got)
	}
}
