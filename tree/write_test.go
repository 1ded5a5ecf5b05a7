package tree_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// corpusSession has pi write its corpus and returns the store and the
// session with the most tips.
func corpusSession(t *testing.T) (store, path string) {
	store = t.TempDir()
	oracle.Corpus(t, store)
	best := -1
	for _, f := range sessionFiles(t, store) {
		l, err := sessions.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tree.New(l).Tips()); n > best {
			best, path = n, f
		}
	}
	if best < 3 {
		t.Fatalf("corpus has no session with several branches (best %d)", best)
	}
	return store, path
}

// session re-reads a file.
func session(t *testing.T, path string) *tree.Tree {
	t.Helper()
	l, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return tree.New(l)
}

// apply runs ops on a builder for the file and appends their lines.
func apply(t *testing.T, path string, ops func(b *tree.Builder)) []string {
	t.Helper()
	tr := session(t, path)
	b := tr.NewBuilder()
	ops(b)
	if err := sessions.Append(path, b.Lines...); err != nil {
		t.Fatal(err)
	}
	// pifs writes what JSON.stringify writes: every line is canonical.
	for _, l := range b.Lines {
		if c, err := jsjson.Canonical(l); err != nil || string(c) != string(l) {
			t.Fatalf("line is not canonical:\n%s\n%s", l, c)
		}
	}
	return b.IDs
}

func ctxEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !reflect.DeepEqual(decode(got), decode(want)) {
		t.Errorf("%s: contexts differ\n got %.1500s\nwant %.1500s", what, got, want)
	}
}

// interior returns an entry that has children and is not a root.
func interior(tr *tree.Tree) string {
	var id string
	tr.Walk(func(n *tree.Node) bool {
		if n.Parent != nil && len(n.Children) > 1 {
			id = n.ID
			return false
		}
		return true
	})
	return id
}

// TestWritesReadByPi does each write operation with pifs and lets pi open
// the result: pi must see the intended leaf, context, name and labels.
func TestWritesReadByPi(t *testing.T) {
	_, path := corpusSession(t)
	before := oracle.Dump(t, path, true)
	tr := session(t, path)
	x := interior(tr)
	if x == "" {
		t.Fatal("no interior entry")
	}

	// Leaf move: pi resumes with exactly the context of x.
	rec := apply(t, path, func(b *tree.Builder) {
		if _, err := b.MoveLeaf(x); err != nil {
			t.Fatal(err)
		}
	})[0]
	pi := oracle.Dump(t, path, false)
	ctxEqual(t, "after leaf move", pi.ContextAtLeaf, before.Contexts[x])
	if pi.LeafID != rec {
		t.Errorf("pi's leaf %v, want the record %s", pi.LeafID, rec)
	}
	after := session(t, path)
	if after.LeafID() != x {
		t.Errorf("pifs leaf reads %q, want %q", after.LeafID(), x)
	}
	for _, tip := range after.Tips() {
		if tip.ID == rec {
			t.Error("the leaf record is listed as a tip")
		}
	}
	if len(after.Tips()) != len(tr.Tips()) {
		t.Errorf("tips changed from %d to %d", len(tr.Tips()), len(after.Tips()))
	}

	// Append after the move chains under the record, as pi would.
	msg := apply(t, path, func(b *tree.Builder) { b.UserText("try B", 1747000000000) })[0]
	pi = oracle.Dump(t, path, false)
	var xctx struct{ Messages []json.RawMessage }
	_ = json.Unmarshal(before.Contexts[x], &xctx)
	var now struct{ Messages []json.RawMessage }
	_ = json.Unmarshal(pi.ContextAtLeaf, &now)
	if len(now.Messages) != len(xctx.Messages)+1 || !strings.Contains(string(now.Messages[len(now.Messages)-1]), `"try B"`) {
		t.Errorf("after append: %d messages (want %d + the new one)", len(now.Messages), len(xctx.Messages))
	}
	if p := pi.Paths[msg]; len(p) < 2 || p[len(p)-2] != rec {
		t.Errorf("the message must hang under the record: path %v", p)
	}
	ctxEqual(t, "pifs and pi after append", session(t, path).Context().JSON(), pi.ContextAtLeaf)

	// Name: newlines become spaces, trimmed; empty clears.
	apply(t, path, func(b *tree.Builder) { b.Name("  Auth\nrefactor\r\n ") })
	if pi = oracle.Dump(t, path, false); pi.Name == nil || *pi.Name != "Auth refactor" {
		t.Errorf("pi name %v", pi.Name)
	}
	apply(t, path, func(b *tree.Builder) { b.Name("") })
	if pi = oracle.Dump(t, path, false); pi.Name != nil {
		t.Errorf("pi name %v after clearing", *pi.Name)
	}

	// Labels: set, change, clear.
	apply(t, path, func(b *tree.Builder) {
		if _, err := b.Label(x, "mark"); err != nil {
			t.Fatal(err)
		}
	})
	pi = oracle.Dump(t, path, false)
	if string(pi.Labels[x]) != `"mark"` {
		t.Errorf("pi label of %s: %s", x, pi.Labels[x])
	}
	apply(t, path, func(b *tree.Builder) { _, _ = b.Label(x, "") })
	if pi = oracle.Dump(t, path, false); pi.Labels[x] != nil {
		t.Errorf("label not cleared: %s", pi.Labels[x])
	}
	if _, err := session(t, path).NewBuilder().Label("nope", "x"); err == nil {
		t.Error("a label on an unknown entry must be refused")
	}

	// Branch with summary: attaches at the given entry, fromId is the leaf left.
	leafBefore := session(t, path).LeafID()
	bs := apply(t, path, func(b *tree.Builder) {
		if _, err := b.BranchSummary(x, jsjson.Quote(nil, "tried A, it failed")); err != nil {
			t.Fatal(err)
		}
	})[0]
	pi = oracle.Dump(t, path, false)
	var bctx struct{ Messages []map[string]any }
	_ = json.Unmarshal(pi.ContextAtLeaf, &bctx)
	last := bctx.Messages[len(bctx.Messages)-1]
	if last["role"] != "branchSummary" || last["fromId"] != leafBefore || last["summary"] != "tried A, it failed" {
		t.Errorf("branch summary in pi's context: %v", last)
	}
	if p := pi.Paths[bs]; len(p) < 2 || p[len(p)-2] != x {
		t.Errorf("branch summary must hang under %s: %v", x, p)
	}

	// A raw message as given (JSON canonicalised, as pi would write it).
	apply(t, path, func(b *tree.Builder) {
		if _, err := b.Message([]byte(`{"role":"user", "content":"raw  one", "timestamp":1.747e12}`)); err != nil {
			t.Fatal(err)
		}
	})
	pi = oracle.Dump(t, path, false)
	lastEntry := pi.Entries[len(pi.Entries)-1]
	lines := strings.Split(strings.TrimSpace(readFile(t, path)), "\n")
	if canon, _ := jsjson.Canonical(lastEntry); string(canon) != lines[len(lines)-1] {
		t.Errorf("pi would write\n%s\npifs wrote\n%s", canon, lines[len(lines)-1])
	}

	// Reset before the first entry: the context is empty.
	apply(t, path, func(b *tree.Builder) { _, _ = b.MoveLeaf("") })
	pi = oracle.Dump(t, path, false)
	var empty struct{ Messages []any }
	_ = json.Unmarshal(pi.ContextAtLeaf, &empty)
	if len(empty.Messages) != 0 || session(t, path).LeafID() != "" {
		t.Errorf("after reset: %d messages, leaf %q", len(empty.Messages), session(t, path).LeafID())
	}
	if !pi.Valid {
		t.Fatal("pi cannot open the file pifs wrote")
	}
}

// TestKeyOrderMatchesPi checks that every entry type pifs builds has its keys
// in the order pi writes them, by comparing with entries pi wrote itself.
func TestKeyOrderMatchesPi(t *testing.T) {
	store, path := corpusSession(t)
	piKeys := map[string][]string{}
	for _, f := range sessionFiles(t, store) {
		for _, line := range strings.Split(readFile(t, f), "\n") {
			if line == "" {
				continue
			}
			keys, _ := jsjson.ObjectMembers([]byte(line))
			var e struct{ Type string }
			_ = json.Unmarshal([]byte(line), &e)
			piKeys[e.Type+":"+strings.Join(sortedCopy(keys), ",")] = keys
		}
	}
	tr := session(t, path)
	b := tr.NewBuilder()
	x := interior(tr)
	b.UserText("hi", 1)
	b.Name("n")
	_, _ = b.Label(x, "l")
	_, _ = b.BranchSummary(x, jsjson.Quote(nil, "s"))
	b.ThinkingLevel("low")
	b.ModelChange("p", "m")
	b.Usage("k", "p", "m", []byte(`{"input":1}`), "")
	b.Custom("c", []byte(`{}`))
	b.CustomMessage("c", []byte(`"x"`), []byte("true"), []byte(`{}`))
	_, _ = b.ContextEdit(b.IDs[0], []byte(`{"content":"y"}`))
	_, _ = b.Compaction(jsjson.Quote(nil, "s"), "", []byte("1"), nil, nil, nil)
	compared := 0
	for _, l := range b.Lines {
		keys, _ := jsjson.ObjectMembers(l)
		var e struct{ Type string }
		_ = json.Unmarshal(l, &e)
		want, ok := piKeys[e.Type+":"+strings.Join(sortedCopy(keys), ",")]
		if !ok {
			continue
		}
		compared++
		if !reflect.DeepEqual(keys, want) {
			t.Errorf("%s: keys %v, pi writes %v", e.Type, keys, want)
		}
	}
	if compared < 9 {
		t.Errorf("only %d entry types could be compared with pi's", compared)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestForkAndCloneReadByPi: a whole-file fork (pi's --fork) and a branched
// copy (pi's /clone) written by pifs, opened by pi.
func TestForkAndCloneReadByPi(t *testing.T) {
	store, path := corpusSession(t)
	src := oracle.Dump(t, path, true)
	tr := session(t, path)

	// Fork into another project.
	other := filepath.Join(store, "--home-user-elsewhere--")
	id := sessions.NewSessionID()
	ts := sessions.Now()
	fork, err := sessions.Create(other, sessions.FileName(ts, id), tr.ForkLines(id, ts, "/home/user/elsewhere", path)...)
	if err != nil {
		t.Fatal(err)
	}
	pi := oracle.Dump(t, fork, false)
	if !pi.Valid || len(pi.Entries) != len(src.Entries) {
		t.Fatalf("fork: valid=%v, %d entries, source %d", pi.Valid, len(pi.Entries), len(src.Entries))
	}
	ctxEqual(t, "fork context", pi.ContextAtLeaf, src.ContextAtLeaf)
	if pi.Info == nil || pi.Info.ParentSessionPath != path || pi.Info.Cwd != "/home/user/elsewhere" {
		t.Errorf("fork in pi's session list: %+v", pi.Info)
	}

	// Branched copy at an interior entry with a label on its path.
	x := interior(tr)
	b := tr.NewBuilder()
	first := tr.PathTo(x)[0].ID
	_, _ = b.Label(first, "start")
	if err := sessions.Append(path, b.Lines...); err != nil {
		t.Fatal(err)
	}
	tr = session(t, path)
	id = sessions.NewSessionID()
	lines, err := tr.BranchedLines(x, id, ts, tr.Header.Cwd, path)
	if err != nil {
		t.Fatal(err)
	}
	clone, err := sessions.Create(filepath.Dir(path), sessions.FileName(ts, id), lines...)
	if err != nil {
		t.Fatal(err)
	}
	pi = oracle.Dump(t, clone, false)
	ctxEqual(t, "clone context", pi.ContextAtLeaf, src.Contexts[x])
	if string(pi.Labels[first]) != `"start"` {
		t.Errorf("clone labels %v", pi.Labels)
	}
	if len(pi.Tips) != 1 {
		t.Errorf("a clone is one path, pi sees tips %v", pi.Tips)
	}
	if _, err := tr.BranchedLines("nope", id, ts, "/", path); err == nil {
		t.Error("a clone at an unknown entry must fail")
	}
}

// TestNewSessionReadByPi: an empty session created by pifs.
func TestNewSessionReadByPi(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "--work--")
	id := sessions.NewSessionID()
	ts := sessions.Now()
	p, err := sessions.Create(dir, sessions.FileName(ts, id), sessions.HeaderLine(id, ts, "/work", ""))
	if err != nil {
		t.Fatal(err)
	}
	pi := oracle.Dump(t, p, false)
	if !pi.Valid || len(pi.Entries) != 0 || pi.Info == nil {
		t.Fatalf("pi: valid=%v entries=%d info=%v", pi.Valid, len(pi.Entries), pi.Info)
	}
	var h map[string]any
	_ = json.Unmarshal(pi.Header, &h)
	if h["id"] != id || h["version"] != float64(3) || h["cwd"] != "/work" {
		t.Errorf("header %v", h)
	}
	if !strings.HasSuffix(p, "_"+id+".jsonl") || strings.ContainsAny(filepath.Base(p)[:24], ":.") {
		t.Errorf("file name %s", filepath.Base(p))
	}
}

// TestMigrateReadByPi: a v1 file migrated by pifs keeps the ids pifs showed,
// and pi reads them (it no longer migrates the file).
func TestMigrateReadByPi(t *testing.T) {
	src := filepath.Join("..", "testdata", "fixtures", "v1.jsonl")
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	if err := os.WriteFile(path, []byte(readFile(t, src)), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	shown := tree.New(l)
	if err := sessions.MigrateFile(l); err != nil {
		t.Fatal(err)
	}
	pi := oracle.Dump(t, path, true)
	if pi.LeafID != shown.LeafID() {
		t.Errorf("pi leaf %v, pifs showed %s", pi.LeafID, shown.LeafID())
	}
	ctxEqual(t, "migrated context", pi.ContextAtLeaf, shown.Context().JSON())
	for i, e := range shown.Entries() {
		var piE map[string]any
		_ = json.Unmarshal(pi.Entries[i], &piE)
		if piE["id"] != e.ID {
			t.Errorf("entry %d: pi id %v, pifs showed %s", i, piE["id"], e.ID)
		}
	}
	// Migration needs the file unchanged since it was read.
	l2, _ := sessions.Open(filepath.Join("..", "testdata", "fixtures", "v2.jsonl"))
	l2.Path = path
	if err := sessions.MigrateFile(l2); err == nil {
		t.Error("migrating a file that changed since it was read must fail")
	}
}

// TestEveryEntryTypeReadByPi builds each entry type pifs can write on a
// session whose context holds a system message, and lets pi read the file:
// contexts, model, thinking level and usage must be what pifs computes, and
// every line must have pi's key order.
func TestEveryEntryTypeReadByPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	var path string
	for _, f := range sessionFiles(t, store) {
		if strings.Contains(string(session(t, f).Context().JSON()), `"role":"system"`) {
			path = f
			break
		}
	}
	if path == "" {
		t.Fatal("no corpus session has a system message in its context")
	}
	tr := session(t, path)
	var target string // an assistant message on the active branch
	for _, e := range tr.PathTo(tr.LeafID()) {
		if e.Type == "message" && e.Role == "assistant" {
			target = e.ID
		}
	}
	ids := apply(t, path, func(b *tree.Builder) {
		b.ThinkingLevel("high")
		b.ModelChange("openai", "gpt-x")
		b.Usage("summary", "openai", "gpt-x", []byte(`{"input":7,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":10,"cost":{"input":0.5,"output":0.25,"cacheRead":0,"cacheWrite":0,"total":0.75}}`), "n")
		b.Custom("ext.state", []byte(`{"k":[1,2]}`))
		b.CustomMessage("ext.note", []byte(`"a note for the model"`), []byte("true"), []byte(`{"d":1}`))
		if _, err := b.ContextEdit(target, []byte(`{"content":"shortened"}`)); err != nil {
			t.Fatal(err)
		}
		b.UserText("before compaction", 1747000000000)
		if _, err := b.Compaction(jsjson.Quote(nil, "all of it, summarised"), "", []byte("4242"), nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		b.UserText("after compaction", 1747000001000)
	})
	pi := oracle.Dump(t, path, true)
	got := session(t, path)
	ctxEqual(t, "context after every type", got.Context().JSON(), pi.ContextAtLeaf)
	for _, id := range ids {
		ctxEqual(t, "context at "+id, got.ContextAt(id).JSON(), pi.Contexts[id])
	}
	var ctx struct {
		Messages      []map[string]any
		ThinkingLevel string
		Model         map[string]string
	}
	_ = json.Unmarshal(pi.ContextAtLeaf, &ctx)
	if ctx.ThinkingLevel != "high" || ctx.Model["modelId"] != "gpt-x" {
		t.Errorf("pi sees thinking %q model %v", ctx.ThinkingLevel, ctx.Model)
	}
	if len(ctx.Messages) != 3 || ctx.Messages[0]["role"] != "system" || ctx.Messages[1]["role"] != "compactionSummary" {
		t.Errorf("after a compaction pifs wrote, pi's context is %d messages: %v", len(ctx.Messages), show(ctx.Messages))
	}
	u := got.Usage()
	if pi.Usage == nil || u.Cost != pi.Usage.Cost || u.Total != pi.Usage.Total {
		t.Errorf("usage pifs %+v, pi %+v", u, pi.Usage)
	}
	// The edit was applied on the path before the compaction.
	var atEdit struct{ Messages []map[string]any }
	_ = json.Unmarshal(pi.Contexts[ids[5]], &atEdit)
	edited := false
	for _, m := range atEdit.Messages {
		if b, _ := json.Marshal(m["content"]); string(b) == `[{"text":"shortened","type":"text"}]` {
			edited = true
		}
	}
	if !edited {
		t.Errorf("pi does not see the edit as one text block in %d messages", len(atEdit.Messages))
	}
}

// TestContextEditRefusals: the checks pi makes, with reasons.
func TestContextEditRefusals(t *testing.T) {
	_, path := corpusSession(t)
	tr := session(t, path)
	var off, nonEditable string
	on := map[string]bool{}
	for _, e := range tr.PathTo(tr.LeafID()) {
		on[e.ID] = true
		if e.Type != "message" && e.Type != "custom_message" {
			nonEditable = e.ID
		}
	}
	tr.Walk(func(n *tree.Node) bool {
		if !on[n.ID] && n.Type == "message" {
			off = n.ID
		}
		return true
	})
	b := tr.NewBuilder()
	for name, c := range map[string]struct {
		target, rep, want string
	}{
		"bad replacement": {tr.LeafID(), `{"text":1}`, "replacement must be null"},
		"unknown":         {"nope", `null`, "no such entry"},
		"off branch":      {off, `null`, "not on the active branch"},
		"not editable":    {nonEditable, `null`, "editable"},
	} {
		if c.target == "" {
			continue
		}
		if _, err := b.ContextEdit(c.target, []byte(c.rep)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
	if len(b.Lines) != 0 {
		t.Error("refused edits must build nothing")
	}
}
