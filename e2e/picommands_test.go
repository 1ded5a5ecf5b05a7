package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

// TestModelAndThinkingControls: model and thinking read as what pi would
// resume with, take pi's /model and /thinking through a write, and pi's
// own SessionManager, opening the file, resumes with what they read then;
// what pi would not take is refused with EINVAL, the reason in errors,
// and the file unchanged. reply.md is the path's last assistant text, as
// /copy copies it (render's tests hold it to pi's code).
func TestModelAndThinkingControls(t *testing.T) {
	store, file := writeStore(t)
	s := sessionPath(testMount(t, store))
	read := func(name string) string { return strings.TrimSuffix(readText(t, filepath.Join(s, name)), "\n") }
	if err := writeControl(filepath.Join(s, "model"), "anthropic/claude-x\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeControl(filepath.Join(s, "thinking"), "HIGH\n"); err != nil {
		t.Fatal(err)
	}
	if got := read("model"); got != "anthropic/claude-x" {
		t.Errorf("model reads %q after /model anthropic/claude-x", got)
	}
	if got := read("thinking"); got != "high" {
		t.Errorf("thinking reads %q after /thinking HIGH", got)
	}
	view := oracle.Dump(t, file, false)
	leaf, _ := view.LeafID.(string)
	var ctx struct {
		ThinkingLevel string `json:"thinkingLevel"`
		Model         *struct {
			Provider string `json:"provider"`
			ModelID  string `json:"modelId"`
		} `json:"model"`
	}
	if err := json.Unmarshal(view.Contexts[leaf], &ctx); err != nil {
		t.Fatalf("pi's context at %s: %v: %s", leaf, err, view.Contexts[leaf])
	}
	if ctx.Model == nil || ctx.Model.Provider+"/"+ctx.Model.ModelID != read("model") || ctx.ThinkingLevel != read("thinking") {
		t.Errorf("pi resumes with model %+v, level %q; the mount reads %q, %q", ctx.Model, ctx.ThinkingLevel, read("model"), read("thinking"))
	}

	before, _ := os.ReadFile(file)
	for name, line := range map[string]string{"model": "claude-x", "thinking": "extreme"} {
		if err := writeControl(filepath.Join(s, name), line+"\n"); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s %q: %v, want EINVAL", name, line, err)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("a refused write changed the session file")
	}
	if got := read("errors"); !strings.Contains(got, "has no provider") || !strings.Contains(got, "available levels") {
		t.Errorf("errors does not say why:\n%s", got)
	}
	if got := read("branches/a2/reply.md"); got != "hi there" {
		t.Errorf("branches/a2/reply.md = %q, want the text of a2, the path's last assistant message", got)
	}
}
