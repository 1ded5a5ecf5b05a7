package parts_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/render/parts"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// refOf reads an entry as Of and Next do, the plain way: each field by
// jsjson.Get, each block by jsjson.Elements.
func refOf(e *sessions.Entry) (parts.Head, []parts.Part) {
	h := parts.Head{Entry: e}
	var steps []parts.Kind
	var content []byte
	vals := map[parts.Kind][]byte{}
	get := func(name string) []byte { return jsjson.Get(e.Raw, name) }
	switch e.Type {
	case schema.TypeMessage:
		m := e.Msg
		content = jsjson.Get(m, "content")
		vals[parts.Error] = jsjson.Get(m, "errorMessage")
		vals[parts.Command] = jsjson.Get(m, "command")
		vals[parts.Output] = jsjson.Get(m, "output")
		vals[parts.Summary] = jsjson.Get(m, "summary")
		h.ToolCallID, h.Details = jsjson.Get(m, "toolCallId"), jsjson.Get(m, "details")
		h.Hidden = string(jsjson.Get(m, "display")) == "false"
		h.Sections, h.ToolsAdded, h.ToolsRemoved = jsjson.Get(m, "sections"), jsjson.Get(m, "toolsAdded"), jsjson.Get(m, "toolsRemoved")
		switch e.Role {
		case "user", "assistant", "custom", "system":
			h.Shape, h.Who, steps = parts.Message, e.Role, []parts.Kind{parts.Text, parts.Error}
			if e.Role == "assistant" {
				h.Model, h.Usage = jsjson.Get(m, "model"), jsjson.Get(m, "usage")
			}
		case "toolResult":
			h.Shape, h.Who, steps = parts.ToolResult, "tool result", []parts.Kind{parts.Text}
			h.ToolName, h.IsError = jsjson.Get(m, "toolName"), jsjson.Truthy(jsjson.Get(m, "isError"))
		case "bashExecution":
			h.Shape, h.Who, steps = parts.Bash, "bash", []parts.Kind{parts.Command, parts.Output}
			if x := jsjson.Get(m, "exitCode"); jsjson.KindOf(x) != jsjson.Null {
				h.ExitCode = x
			}
		case "branchSummary", "compactionSummary":
			h.Shape, h.Who, steps = parts.SummaryMessage, e.Role, []parts.Kind{parts.Summary, parts.Text}
		default:
			h.Shape, h.Who, steps = parts.OtherMessage, e.Kind(), []parts.Kind{parts.Text}
		}
	case "custom_message":
		h.Shape, h.Who, steps = parts.CustomMessage, "custom message", []parts.Kind{parts.Text}
		h.CustomType, content = get("customType"), get("content")
		h.Hidden = string(get("display")) == "false"
	case "branch_summary", "compaction":
		h.Shape, h.Who, steps = parts.BranchSummary, "branch summary", []parts.Kind{parts.Summary}
		if e.Type == "compaction" {
			h.Shape, h.Who = parts.Compaction, "compaction"
		}
		vals[parts.Summary] = get("summary")
		jsjson.Members(e.Raw, func(k, v []byte) bool {
			if jsjson.KeyIs(k, "fromId") || jsjson.KeyIs(k, "firstKeptEntryId") {
				h.Ref = v
			}
			return true
		})
	default:
		h.Shape, h.Who = parts.Meta, strings.ReplaceAll(e.Kind(), "_", " ")
		h.Provider, h.ModelID, h.Model, h.Usage = get("provider"), get("modelId"), get("model"), get("usage")
		h.ThinkingLevel, h.Label, h.Ref, h.Name, h.CustomType = get("thinkingLevel"), get("label"), get("targetId"), get("name"), get("customType")
	}
	var ps []parts.Part
	for _, k := range steps {
		if k != parts.Text {
			ps = append(ps, parts.Part{Kind: k, Value: vals[k]})
			continue
		}
		if jsjson.KindOf(content) != jsjson.Array {
			ps = append(ps, parts.Part{Kind: parts.Text, Value: content})
			continue
		}
		jsjson.Elements(content, func(b []byte) bool {
			p := parts.Part{Kind: parts.Block, Block: b}
			if jsjson.KindOf(b) == jsjson.Object {
				p.Name, p.ID, p.Args = jsjson.Get(b, "name"), jsjson.Get(b, "id"), jsjson.Get(b, "arguments")
				p.Mime, p.Data = jsjson.Get(b, "mimeType"), jsjson.Get(b, "data")
				switch typ, _ := jsjson.Str(b, "type"); typ {
				case "text":
					p.Kind, p.Value = parts.Text, jsjson.Get(b, "text")
				case "thinking":
					p.Kind, p.Value = parts.Thinking, jsjson.Get(b, "thinking")
				case "toolCall":
					p.Kind = parts.ToolCall
					if p.Args == nil {
						p.Args = []byte("{}")
					}
				case "image":
					p.Kind = parts.Image
				}
			}
			ps = append(ps, p)
			return true
		})
	}
	return h, ps
}

// describe spells a head or a part for comparison, raw values included.
func describe(v any) string { return fmt.Sprintf("%+q", v) }

func checkEntry(t *testing.T, name string, e *sessions.Entry) {
	t.Helper()
	wantHead, wantParts := refOf(e)
	w := parts.Of(e)
	if got, want := describe(w.Head), describe(wantHead); got != want {
		t.Fatalf("%s: entry %q (line %d): head\n%s\nwant\n%s", name, e.ID, e.Seq, got, want)
	}
	var got []parts.Part
	for w.Next() {
		p := w.Part
		got = append(got, p)
	}
	if describe(got) != describe(wantParts) {
		t.Fatalf("%s: entry %q (line %d): parts\n%s\nwant\n%s", name, e.ID, e.Seq, describe(got), describe(wantParts))
	}
	if w.Next() {
		t.Fatalf("%s: entry %q: Next after the last part", name, e.ID)
	}
	for _, p := range got {
		if p.Block != nil && !bytes.Contains(e.Raw, p.Block) {
			t.Fatalf("%s: entry %q: block %q is not from the entry", name, e.ID, p.Block)
		}
	}
}

func sessionFiles(t *testing.T) []string {
	var files []string
	for _, dir := range []string{"../../testdata", "../testdata"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 20 {
		t.Fatalf("only %d session files", len(files))
	}
	return files
}

// TestWalkMatchesReference: every entry of the stores, the fixtures and
// the shapes session reads as the reference reads it.
func TestWalkMatchesReference(t *testing.T) {
	shapes := map[parts.Shape]int{}
	kinds := map[parts.Kind]int{}
	for _, p := range sessionFiles(t) {
		l, err := sessions.Open(p)
		if err != nil {
			continue
		}
		for _, e := range l.Entries {
			checkEntry(t, p, e)
			w := parts.Of(e)
			shapes[w.Head.Shape]++
			for w.Next() {
				kinds[w.Part.Kind]++
			}
		}
	}
	// The sessions hold every shape and every kind of part.
	for s := parts.Message; s <= parts.Meta; s++ {
		if shapes[s] == 0 {
			t.Errorf("no entry of shape %d", s)
		}
	}
	for k := parts.Text; k <= parts.Summary; k++ {
		if kinds[k] == 0 {
			t.Errorf("no part of kind %d", k)
		}
	}
}

func FuzzWalk(f *testing.F) {
	b, err := os.ReadFile("../testdata/shapes.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n"))[1:] {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := sessions.Parse(append([]byte(`{"type":"session","version":3,"id":"f","cwd":"/"}`+"\n"), line...))
		if err != nil {
			return
		}
		for _, e := range l.Entries {
			checkEntry(t, "fuzz", e)
		}
	})
}
