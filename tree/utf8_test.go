package tree_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// validLines fails unless every line is valid UTF-8 and valid JSON, and
// returns them decoded.
func validLines(t *testing.T, what string, lines [][]byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range lines {
		var v map[string]any
		if !utf8.Valid(l) || json.Unmarshal(l, &v) != nil {
			t.Fatalf("%s: not a valid UTF-8 JSON line: %q", what, l)
		}
		out = append(out, v)
	}
	return out
}

// TestInvalidUTF8Written: whatever bytes a line written to a control holds,
// the entry written is valid JSON holding the text pi reads from those
// bytes (each invalid sequence a U+FFFD, jsjson.ValidText): a user message,
// a name, a label, JSON fields of every entry type, the header of a fork
// (new and fork's own lines: view's TestGrammarInvalidUTF8).
func TestInvalidUTF8Written(t *testing.T) {
	const bad = "a\xff\xfe|\xe2\x82|\xf0\x9f\x98|\xed\xa0\x80|\xc0\xafz"
	js := jsjson.ValidText(bad)
	if js == bad || !utf8.ValidString(js) || !strings.Contains(js, "\uFFFD") {
		t.Fatalf("ValidText(%q) = %q", bad, js)
	}
	lines := []struct {
		line  string
		field func(v map[string]any) any
	}{
		{bad, func(v map[string]any) any {
			return v["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
		}},
		{`{"role":"user","content":"` + bad + `"}`, func(v map[string]any) any { return v["message"].(map[string]any)["content"] }},
		{`{"role":"user","content":"x","` + bad + `":1}`, func(v map[string]any) any {
			_, ok := v["message"].(map[string]any)[js]
			return map[bool]string{true: js}[ok]
		}},
		{`{"type":"label","targetId":"u1","label":"` + bad + `"}`, func(v map[string]any) any { return v["label"] }},
		{`{"type":"session_info","name":"` + bad + `"}`, func(v map[string]any) any { return v["name"] }},
		{`{"type":"custom","customType":"` + bad + `","data":{"k":"` + bad + `"}}`, func(v map[string]any) any { return v["data"].(map[string]any)["k"] }},
		{`{"type":"model_change","provider":"` + bad + `","modelId":"m"}`, func(v map[string]any) any { return v["provider"] }},
		{`{"type":"usage","kind":"k","provider":"p","model":"` + bad + `","usage":{},"note":"n"}`, func(v map[string]any) any { return v["model"] }},
		{`{"type":"branch_summary","summary":"` + bad + `"}`, func(v map[string]any) any { return v["summary"] }},
		{`{"type":"compaction","summary":"` + bad + `","tokensBefore":1}`, func(v map[string]any) any { return v["summary"] }},
	}
	for _, c := range lines {
		b := schemaBuilder(t)
		if err := b.AppendLine([]byte(c.line), 5); err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		v := validLines(t, c.line, b.Lines)
		if got := c.field(v[len(v)-1]); got != js {
			t.Errorf("%q: wrote %q, want %q", c.line, got, js)
		}
	}

	b := schemaBuilder(t)
	if err := b.NameLine([]byte(bad)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Label("u1", bad); err != nil {
		t.Fatal(err)
	}
	v := validLines(t, "name and label", b.Lines)
	if v[0]["name"] != js || v[1]["label"] != js {
		t.Errorf("name %q, label %q; want %q", v[0]["name"], v[1]["label"], js)
	}
	// The label written is the one a leaf move names with the same bytes.
	l, err := sessions.Parse(append([]byte(schemaSession), append(b.Lines[1], '\n')...))
	if err != nil {
		t.Fatal(err)
	}
	b2 := tree.New(l).NewBuilder()
	if err := b2.LeafLine([]byte(bad), tree.New(l).Resolve); err != nil {
		t.Errorf("leaf %q: %v", bad, err)
	}

	// fork: the working directory and parent given, in the header.
	l, _ = sessions.Parse([]byte(schemaSession))
	fork := tree.New(l).ForkLines("id", "ts", "/w/"+bad, "/src/"+bad)
	named, err := tree.WithName(fork, bad)
	if err != nil {
		t.Fatal(err)
	}
	v = validLines(t, "fork", named)
	if v[0]["cwd"] != "/w/"+js || v[0]["parentSession"] != "/src/"+js || v[len(v)-1]["name"] != js {
		t.Errorf("fork header %v, name %v", v[0], v[len(v)-1]["name"])
	}
	branched, err := tree.New(l).BranchedLines("a1", "id", "ts", "/w/"+bad, "/src/"+bad)
	if err != nil {
		t.Fatal(err)
	}
	validLines(t, "branch", branched)
}
