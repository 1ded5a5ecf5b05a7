package tree_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// TestParseModelAndLevel: what the model and thinking controls take, and
// what they refuse, with the reason.
func TestParseModelAndLevel(t *testing.T) {
	for in, want := range map[string][2]string{
		"anthropic/claude-sonnet-4-5": {"anthropic", "claude-sonnet-4-5"},
		"  openai/gpt-5 \n":           {"openai", "gpt-5"},
		"openrouter/anthropic/claude": {"openrouter", "anthropic/claude"},
		"fake / m2":                   {"fake", "m2"},
	} {
		p, id, err := tree.ParseModel(in)
		if err != nil || p != want[0] || id != want[1] {
			t.Errorf("ParseModel(%q) = %q %q %v, want %q", in, p, id, err, want)
		}
	}
	for in, why := range map[string]string{
		"": "empty", "gpt-5": "no provider", "/gpt-5": "empty provider", "openai/": "empty id", "open ai/gpt": "white space",
		"openai/gpt\x01": "control",
	} {
		if _, _, err := tree.ParseModel(in); !errors.Is(err, tree.ErrInvalid) || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseModel(%q): %v, want ErrInvalid saying %q", in, err, why)
		}
	}
	for in, want := range map[string]string{"high": "high", " HIGH\n": "high", "Off": "off", "xhigh": "xhigh", "max": "max", "minimal": "minimal"} {
		if got, err := tree.ParseThinkingLevel(in); err != nil || got != want {
			t.Errorf("ParseThinkingLevel(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "hi", "very high", "none", "1"} {
		_, err := tree.ParseThinkingLevel(in)
		if !errors.Is(err, tree.ErrInvalid) || !strings.Contains(err.Error(), "available levels: off, minimal, low, medium, high, xhigh, max") {
			t.Errorf("ParseThinkingLevel(%q): %v", in, err)
		}
	}
}

// TestSetThinkingLevelOnlyChanges: like pi's setThinkingLevel, the
// thinking control appends an entry only when the level changes, this
// batch's entries included.
func TestSetThinkingLevelOnlyChanges(t *testing.T) {
	l, err := sessions.Parse([]byte(`{"type":"session","version":3,"id":"s","cwd":"/"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tr := tree.New(l)
	b := tr.NewBuilder()
	for i, c := range []struct {
		level  string
		append bool
	}{{"high", true}, {"HIGH", false}, {"low", true}, {"low", false}, {"high", true}} {
		id, err := b.SetThinkingLevel(c.level)
		if err != nil || (id != "") != c.append {
			t.Errorf("step %d: SetThinkingLevel(%q) = %q, %v; want an entry %v", i, c.level, id, err, c.append)
		}
	}
	if len(b.Lines) != 3 {
		t.Errorf("%d lines, want 3", len(b.Lines))
	}
	if _, err := b.SetModel("nope"); !errors.Is(err, tree.ErrInvalid) || len(b.Lines) != 3 {
		t.Errorf("a bad model: %v, %d lines", err, len(b.Lines))
	}
}

// TestResumeMatchesPi: for every session of pi's corpus and the fixtures,
// the model and thinking level pifs reads at the leaf are what pi's
// createAgentSession finds in the branch (getBranchSelection, the branch's
// thinking_level_change); and after pifs appends /model's and /thinking's
// entries (SetModel, SetThinkingLevel), pi resumes the file with that
// model and level, appending nothing, and pifs reads them back.
func TestResumeMatchesPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	files := append(sessionFiles(t, store), sessionFiles(t, filepath.Join("..", "testdata", "fixtures"))...)
	// A failed routing leaves a virtual model on its message: the
	// selection passes over it to the model_change before.
	virtual := filepath.Join(t.TempDir(), "virtual.jsonl")
	if err := os.WriteFile(virtual, []byte(`{"type":"session","version":3,"id":"v","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}
{"type":"model_change","id":"m0","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","provider":"fake","modelId":"m1"}
{"type":"message","id":"u1","parentId":"m0","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"api":"pi-virtual","provider":"router","model":"auto","stopReason":"error","errorMessage":"no route","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":2}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, virtual)
	agent := t.TempDir()
	models := `{"providers":{"fake":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions","apiKey":"fake-key","models":[` +
		`{"id":"m1","reasoning":true,"contextWindow":128000,"maxTokens":4096},{"id":"m2","reasoning":true,"contextWindow":128000,"maxTokens":4096}]}}}`
	if err := os.WriteFile(filepath.Join(agent, "models.json"), []byte(models), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each session with a message, changed twice: to fake/m2 and a new
	// level, and to fake/m1 with the level it has (no thinking entry).
	changed := t.TempDir()
	type want struct{ model, level string }
	wants := map[string]want{}
	var all []string
	for _, f := range files {
		l, err := sessions.Open(f)
		if err != nil {
			continue
		}
		all = append(all, f)
		tr := tree.New(l)
		// A file pi migrates (versions 1 and 2) it rewrites on open.
		if len(tr.Context().Messages) == 0 || len(l.Entries) == 0 || tr.Leaf().ID == "" || l.Header.Version != 3 {
			continue
		}
		cur := tr.LeafSelection()
		level := "high"
		if cur.Thinking() == "high" {
			level = "low"
		}
		for k, step := range []struct{ model, level string }{{"fake/m2", level}, {" fake/m1 ", cur.Thinking()}} {
			if step.level == "" {
				continue
			}
			dst := filepath.Join(changed, strings.TrimSuffix(filepath.Base(f), ".jsonl")+"-"+string(rune('a'+k))+".jsonl")
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
			b := tree.New(l).NewBuilder()
			if _, err := b.SetModel(step.model); err != nil {
				t.Fatal(err)
			}
			id, err := b.SetThinkingLevel(step.level)
			if err != nil || (id == "") != (k == 1) {
				t.Fatalf("%s: SetThinkingLevel(%q) = %q, %v", dst, step.level, id, err)
			}
			if err := sessions.Append(dst, b.Lines...); err != nil {
				t.Fatal(err)
			}
			wants[dst] = want{strings.TrimSpace(step.model), step.level}
			all = append(all, dst)
		}
	}
	pi := oracle.Resume(t, agent, all...)
	checked, resumed := 0, 0
	for _, f := range all {
		name := filepath.Base(f)
		r := pi[f]
		if r == nil {
			t.Fatalf("%s: no answer from pi", name)
		}
		if r.Error != nil {
			t.Logf("%s: pi could not resume it: %s", name, *r.Error)
			continue
		}
		sel := session(t, f).LeafSelection()
		if divergences[name]["paths"] != "" || divergences[name]["tips"] != "" {
			// pi's branch differs where its tree does (a parent cycle,
			// entries without ids): see TestConformanceFixtures.
			continue
		}
		if got, w := sel.Model(), deref(r.Selection); got != w {
			t.Errorf("%s: model %q, pi's branch selection %q", name, got, w)
		}
		if got, w := sel.Thinking(), deref(r.RecordedLevel); got != w {
			t.Errorf("%s: thinking %q, pi's recorded level %q", name, got, w)
		}
		checked++
		w, ok := wants[f]
		if !ok {
			continue
		}
		resumed++
		if deref(r.Model) != w.model || r.ThinkingLevel != w.level || r.Fallback != nil || len(r.Appended) != 0 {
			t.Errorf("%s: pi resumes with %q at %q (fallback %v, appended %q), want %q at %q",
				name, deref(r.Model), r.ThinkingLevel, deref(r.Fallback), r.Appended, w.model, w.level)
		}
		if sel.Model() != w.model || sel.Thinking() != w.level {
			t.Errorf("%s: pifs reads %q at %q, wrote %q at %q", name, sel.Model(), sel.Thinking(), w.model, w.level)
		}
	}
	t.Logf("%d sessions read as pi reads them, %d resumed by pi after pifs's /model and /thinking", checked, resumed)
	if checked < 30 || resumed < 16 {
		t.Errorf("only %d sessions checked, %d resumed", checked, resumed)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
