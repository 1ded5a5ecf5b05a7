package usage_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
	"github.com/pifs/pifs/usage"
)

// load reads a store the way the mount does: every project's sessions,
// parsed, with a Collector each.
func load(t testing.TB, dir string) []usage.Session {
	t.Helper()
	st := sessions.NewIndex(dir)
	var out []usage.Session
	for _, p := range st.Projects() {
		files, err := st.Sessions(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			l, err := sessions.Open(f.Path)
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			var c usage.Collector
			c.Add(l.Entries...)
			name := tree.New(l).Summary(time.Unix(0, f.Sig.Mtime)).Name
			out = append(out, usage.NewSession(p, f.Path, l.Header, name, c.Records()))
		}
	}
	return out
}

// line is one JSONL line of a hand-made session.
type line = string

func header(id, ts, cwd, parent string) line {
	h := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q`, id, ts, cwd)
	if parent != "" {
		h += fmt.Sprintf(`,"parentSession":%q`, parent)
	}
	return h + "}"
}

func usageJSON(in, out, cr, cw int, cost float64) string {
	return fmt.Sprintf(`{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d,"totalTokens":%d,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":%v}}`,
		in, out, cr, cw, in+out+cr+cw, cost)
}

func assistant(id, parent, ts, provider, model string, u string) line {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"x","provider":%q,"model":%q,"usage":%s,"stopReason":"stop","timestamp":0}}`,
		id, parentJSON(parent), ts, provider, model, u)
}

func user(id, parent, ts, text string) line {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"user","content":%q,"timestamp":0}}`,
		id, parentJSON(parent), ts, text)
}

func parentJSON(p string) string {
	if p == "" {
		return "null"
	}
	return fmt.Sprintf("%q", p)
}

// writeSession writes lines as dir/project/file.jsonl and returns its path.
func writeSession(t testing.TB, dir, project, file string, lines ...line) string {
	t.Helper()
	p := filepath.Join(dir, project, file+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
