package tree_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// caretSession: a root user message r, a1 under it, u2 (labelled "v1")
// under a1, b2 under u2; an entry whose id ends in "^" (x^, under b2); an
// entry o whose parent is not in the file; a label "k^" on a1.
const caretSession = `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-000000000001","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"r","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"first","timestamp":1}}
{"type":"message","id":"a1","parentId":"r","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}}
{"type":"message","id":"u2","parentId":"a1","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"second","timestamp":3}}
{"type":"message","id":"b2","parentId":"u2","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"timestamp":4}}
{"type":"custom","customType":"x","data":{},"id":"x^","parentId":"b2","timestamp":"2025-01-01T00:00:05.000Z"}
{"type":"message","id":"o","parentId":"missing","timestamp":"2025-01-01T00:00:06.000Z","message":{"role":"user","content":"orphan","timestamp":6}}
{"type":"label","id":"l1","parentId":"x^","timestamp":"2025-01-01T00:00:07.000Z","targetId":"u2","label":"v1"}
{"type":"label","id":"l2","parentId":"l1","timestamp":"2025-01-01T00:00:08.000Z","targetId":"a1","label":"k^"}
`

func caretTree(t *testing.T) *tree.Tree {
	t.Helper()
	l, err := sessions.Parse([]byte(caretSession))
	if err != nil {
		t.Fatal(err)
	}
	return tree.New(l)
}

func TestResolveCarets(t *testing.T) {
	tr := caretTree(t)
	for _, c := range []struct {
		ref, want string
		ok        bool
	}{
		{"u2", "u2", true},
		{"u2^", "a1", true},
		{"u2^^", "r", true},
		{"u2^^^", "", true}, // before the first entry
		{"u2^^^^", "", false},
		{"r^", "", true},
		{"r^^", "", false},
		{"v1", "u2", true},
		{"v1^", "a1", true},
		{"x^", "x^", true},  // an id ending in ^ is itself
		{"x^^", "b2", true}, // and its parent
		{"k^", "a1", true},  // a label ending in ^ is itself
		{"o^", "", true},    // a parent not in the file: o is a root
		{"nope^", "", false},
		{"^", "", false},
		{"^^", "", false},
		{"", "", false},
	} {
		got, ok := tr.Resolve(c.ref)
		if got != c.want || ok != c.ok {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", c.ref, got, ok, c.want, c.ok)
		}
	}
}

func TestLeafLineCarets(t *testing.T) {
	tr := caretTree(t)
	// A resolver that knows ids only, as the mount's knows names: the
	// carets are LeafLine's.
	exact := func(ref string) (string, bool) { return ref, tr.Node(ref) != nil }
	for line, want := range map[string]string{"u2^": "a1", "a1^": "r", "r^": "", " u2^^ ": "r", "x^^": "b2"} {
		b := tr.NewBuilder()
		if err := b.LeafLine([]byte(line), exact); err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		if len(b.Lines) != 1 || !strings.Contains(string(b.Lines[0]), leafData(want)) {
			t.Errorf("%q: built %s; want a record of %q", line, b.Lines, want)
		}
	}
	b := tr.NewBuilder()
	refusal(t, b.LeafLine([]byte("r^^"), exact), tree.ErrNotFound,
		`no entry or label "r^^"; write an entry id (ls entries/ or branches/), a label (ls labels/), or an empty line to move before the first entry`)

	// An entry made earlier in the same batch: its parent is known too.
	b = tr.NewBuilder()
	rec, err := b.MoveLeaf("b2")
	if err != nil {
		t.Fatal(err)
	}
	inBatch := func(ref string) (string, bool) { return ref, b.Has(ref) }
	if err := b.LeafLine([]byte(rec+"^"), inBatch); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b.Lines[1]), leafData("b2")) {
		t.Errorf("the parent of a record built in the batch: %s", b.Lines[1])
	}
}

func leafData(id string) string {
	if id == "" {
		return `"data":{"leaf":null}`
	}
	return `"data":{"leaf":"` + id + `"}`
}

// TestSelectUserMessageReadByPi: `echo ID^ > leaf` is pi's /tree selection
// of the user message ID, and `echo ID^ > fork` its /fork from it. For
// every user message of a branchy session of pi's corpus and of a session
// whose first entry is a user message, pifs writes the leaf move (and the
// fork) and pi opens what pifs wrote; pi's own navigateTree and fork, run
// on the original, must give the same leaf, context, entries and labels.
func TestSelectUserMessageReadByPi(t *testing.T) {
	_, branchy := corpusSession(t)
	rooted := filepath.Join(t.TempDir(), "rooted.jsonl")
	if err := os.WriteFile(rooted, []byte(caretSession), 0o644); err != nil {
		t.Fatal(err)
	}
	type job struct {
		src, id, moved, forked string
	}
	var jobs []job
	var reqs []oracle.NavigateRequest
	for _, src := range []string{branchy, rooted} {
		tr := session(t, src)
		for _, e := range tr.Entries() {
			if e.Type != "message" || e.Role != "user" || e.ID == tr.FileLeafID() || e.ID == "o" {
				continue // pi's /tree does nothing when the leaf is chosen; o's parent is missing
			}
			j := job{src: src, id: e.ID}
			dir := t.TempDir()
			// The leaf move, on a copy.
			j.moved = filepath.Join(dir, filepath.Base(src))
			if err := os.WriteFile(j.moved, []byte(readFile(t, src)), 0o644); err != nil {
				t.Fatal(err)
			}
			b := tr.NewBuilder()
			if err := b.LeafLine([]byte(e.ID+"^"), tr.Resolve); err != nil {
				t.Fatal(err)
			}
			if err := sessions.Append(j.moved, b.Lines...); err != nil {
				t.Fatal(err)
			}
			// The fork, as the fork control makes it.
			at, ok := tr.Resolve(e.ID + "^")
			if !ok {
				t.Fatalf("%s^ does not resolve", e.ID)
			}
			id, ts := sessions.NewSessionID(), sessions.Now()
			lines, err := tr.BranchedLines(at, id, ts, tr.Header.Cwd, src)
			if err != nil {
				t.Fatal(err)
			}
			if j.forked, err = sessions.Create(filepath.Join(dir, "fork"), sessions.FileName(ts, id), lines...); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
			reqs = append(reqs,
				oracle.NavigateRequest{Op: "tree", File: src, EntryID: e.ID},
				oracle.NavigateRequest{Op: "open", File: j.moved},
				oracle.NavigateRequest{Op: "fork", File: src, EntryID: e.ID},
				oracle.NavigateRequest{Op: "open", File: j.forked})
		}
	}
	if len(jobs) < 8 {
		t.Fatalf("only %d user messages to select", len(jobs))
	}
	answers := oracle.Navigate(t, reqs)
	roots := 0
	for i, j := range jobs {
		piTree, pifsTree, piFork, pifsFork := answers[4*i], answers[4*i+1], answers[4*i+2], answers[4*i+3]
		for _, a := range []oracle.Navigated{piTree, pifsTree, piFork, pifsFork} {
			if a.Error != nil {
				t.Fatalf("%s^: pi threw: %s", j.id, *a.Error)
			}
		}
		what := filepath.Base(j.src) + " " + j.id + "^"
		ctxEqual(t, what+" > leaf", pifsTree.Context, piTree.Context)
		after := session(t, j.moved)
		if want, _ := piTree.LeafID.(string); after.LeafID() != want {
			t.Errorf("%s > leaf: pifs's leaf reads %q, pi's /tree leaves it at %q", what, after.LeafID(), want)
		}
		ctxEqual(t, what+" > fork", pifsFork.Context, piFork.Context)
		if got, want := entriesBut(t, pifsFork.Entries), entriesBut(t, piFork.Entries); !reflect.DeepEqual(got, want) {
			t.Errorf("%s > fork: entries\npifs %v\npi   %v", what, got, want)
		}
		if !reflect.DeepEqual(decode(mustJSON(t, pifsFork.Labels)), decode(mustJSON(t, piFork.Labels))) {
			t.Errorf("%s > fork: labels %v, pi %v", what, pifsFork.Labels, piFork.Labels)
		}
		var h struct{ ParentSession string }
		if json.Unmarshal(pifsFork.Header, &h); h.ParentSession != j.src {
			t.Errorf("%s > fork: parentSession %q", what, h.ParentSession)
		}
		if len(piFork.Entries) == 0 {
			roots++
		}
	}
	t.Logf("%d user messages selected, %d of them at a root", len(jobs), roots)
	if roots == 0 {
		t.Error("no user message at a root was selected")
	}
}

// entriesBut returns entries as decoded values, label entries without the
// id and timestamp that a fork gives them anew.
func entriesBut(t *testing.T, raw []json.RawMessage) []map[string]any {
	t.Helper()
	out := []map[string]any{}
	for _, r := range raw {
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatal(err)
		}
		if m["type"] == "label" {
			delete(m, "id")
			delete(m, "timestamp")
			delete(m, "parentId")
		}
		out = append(out, m)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
