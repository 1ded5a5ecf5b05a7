package render

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// genSession writes a session that exercises what the /tree views and the
// fork prompts show: many branches and a second root, labels set and
// cleared, assistant turns with and without text, errors and aborts, tool
// calls of every tool pi summarizes (paths in and out of /home/user, read
// ranges, long commands, other tools' JSON), tool results whose call is on
// another branch or nowhere, compactions, branch summaries, custom
// messages, settings entries, usage entries, and texts with line breaks,
// tabs, carriage returns, leading blanks and surrogate pairs at pi's cuts.
// The file is a function of seed.
func genSession(t *testing.T, dir string, seed int64, n int) string {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	var lines []string
	add := func(v map[string]any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	start := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	add(map[string]any{"type": "session", "version": 3, "id": fmt.Sprintf("gen-%d", seed), "timestamp": start.Format(time.RFC3339Nano), "cwd": "/home/user/proj"})

	var ids []string
	taken := map[string]bool{}
	leaf := ""
	clock := start
	var calls []string // toolCall ids made so far
	newID := func() string {
		for {
			id := fmt.Sprintf("%08x", r.Uint32())
			if !taken[id] {
				taken[id] = true
				return id
			}
		}
	}
	texts := []string{
		"Fix the parser.",
		"  leading blanks and a trailing tab\t",
		"two\nlines\r\nwith CRLF\tand a tab",
		"",
		"   \n\t ",
		strings.Repeat("long text ", 30),
		strings.Repeat("x", 199) + "😀 after the pair",
		strings.Repeat("y", 198) + "😀😀 more",
		"emoji 😀 in a short one",
		"ends with a line feed\n",
	}
	text := func() string { return texts[r.Intn(len(texts))] }
	content := func() any {
		switch r.Intn(4) {
		case 0:
			return text()
		case 1:
			return []any{map[string]any{"type": "text", "text": text()}, map[string]any{"type": "text", "text": text()}}
		case 2:
			return []any{map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}, map[string]any{"type": "text", "text": text()}}
		}
		return []any{map[string]any{"type": "text", "text": text()}}
	}
	toolArgs := []struct {
		name string
		args any
	}{
		{"read", map[string]any{"path": "/home/user/proj/src/a.go"}},
		{"read", map[string]any{"path": "/home/user/proj/b.go", "offset": 10, "limit": 20}},
		{"read", map[string]any{"file_path": "/etc/hosts", "offset": 5}},
		{"read", map[string]any{"path": "rel/c.go", "limit": 1}},
		{"read", map[string]any{"path": "/home/user", "offset": "7", "limit": "3"}},
		{"read", map[string]any{"path": "/home/user/../user/x", "offset": 1, "limit": 0}},
		{"read", map[string]any{"path": "/home/username/x", "offset": "abc"}},
		{"write", map[string]any{"path": "/home/user/proj/new.go", "content": "package x"}},
		{"edit", map[string]any{"path": "/tmp/e.txt", "oldText": "a", "newText": "b"}},
		{"edit", map[string]any{"file_path": "/home/user/proj/f.go"}},
		{"bash", map[string]any{"command": "go test ./..."}},
		{"bash", map[string]any{"command": "for f in *.go; do\n\techo $f\ndone && " + strings.Repeat("echo more; ", 8)}},
		{"bash", map[string]any{"command": "  " + strings.Repeat("z", 49) + "😀"}},
		{"grep", map[string]any{"pattern": "func main", "path": "/home/user/proj"}},
		{"grep", map[string]any{"pattern": "TODO"}},
		{"find", map[string]any{"pattern": "*.go"}},
		{"ls", map[string]any{"path": "/home/user/proj/src"}},
		{"ls", map[string]any{}},
		{"web_search", map[string]any{"query": "pi coding agent session format", "limit": 5}},
		{"todo", map[string]any{"b": 1, "2": "two", "a": []any{1, "x"}}},
		{"short", map[string]any{"q": "é"}},
	}
	// parentFor picks where the next entry goes: mostly the leaf, sometimes
	// an earlier entry (a branch), rarely a new root.
	parentFor := func() any {
		switch x := r.Intn(100); {
		case x < 2:
			return nil
		case x < 14 && len(ids) > 0:
			return ids[r.Intn(len(ids))]
		}
		if leaf == "" {
			return nil
		}
		return leaf
	}
	entry := func(typ string, fields map[string]any) string {
		id := newID()
		e := map[string]any{"type": typ, "id": id, "parentId": parentFor()}
		if r.Intn(10) > 0 {
			clock = clock.Add(time.Second)
		}
		e["timestamp"] = clock.Format("2006-01-02T15:04:05.000Z")
		for k, v := range fields {
			e[k] = v
		}
		add(e)
		ids = append(ids, id)
		leaf = id
		return id
	}
	msg := func(m map[string]any) string {
		m["timestamp"] = clock.UnixMilli()
		return entry("message", map[string]any{"message": m})
	}
	for len(ids) < n {
		switch k := r.Intn(22); {
		case k < 5:
			msg(map[string]any{"role": "user", "content": content()})
		case k < 10:
			var blocks []any
			if r.Intn(3) > 0 {
				blocks = append(blocks, map[string]any{"type": "text", "text": text()})
			}
			if r.Intn(2) == 0 {
				blocks = append(blocks, map[string]any{"type": "thinking", "thinking": "hmm"})
			}
			for i := r.Intn(3); i > 0; i-- {
				ta := toolArgs[r.Intn(len(toolArgs))]
				id := fmt.Sprintf("call_%d_%d", seed, len(calls))
				if len(calls) > 0 && r.Intn(8) == 0 {
					id = calls[r.Intn(len(calls))] // a call id used twice
				}
				calls = append(calls, id)
				blocks = append(blocks, map[string]any{"type": "toolCall", "id": id, "name": ta.name, "arguments": ta.args})
			}
			m := map[string]any{"role": "assistant", "content": blocks, "provider": "anthropic", "model": "claude-x",
				"usage": map[string]any{"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}}
			switch r.Intn(8) {
			case 0:
				m["stopReason"] = "error"
				m["errorMessage"] = "overloaded:\n" + strings.Repeat("retry later ", 10)
			case 1:
				m["stopReason"] = "aborted"
			case 2:
				m["stopReason"] = "toolUse"
			case 3:
				m["stopReason"] = "length"
			default:
				m["stopReason"] = "stop"
			}
			msg(m)
		case k < 13:
			id := fmt.Sprintf("call_unknown_%d", r.Intn(1000))
			if len(calls) > 0 && r.Intn(4) > 0 {
				id = calls[r.Intn(len(calls))]
			}
			m := map[string]any{"role": "toolResult", "toolCallId": id, "toolName": toolArgs[r.Intn(len(toolArgs))].name,
				"content": []any{map[string]any{"type": "text", "text": "result"}}, "isError": false}
			if r.Intn(6) == 0 {
				delete(m, "toolName")
			}
			msg(m)
		case k == 13:
			msg(map[string]any{"role": "bashExecution", "command": "make\ttest\nagain", "output": "ok", "exitCode": 0})
		case k == 14:
			entry("custom_message", map[string]any{"customType": "git-status", "content": content(), "display": true})
		case k == 15:
			entry("compaction", map[string]any{"summary": "summary", "firstKeptEntryId": ids[r.Intn(len(ids))],
				"tokensBefore": []float64{1499, 1500, 2500, 123456, 0, -1500}[r.Intn(6)]})
		case k == 16:
			entry("branch_summary", map[string]any{"fromId": leaf, "summary": "Tried it:\n" + text()})
		case k == 17:
			if len(ids) > 0 {
				target := ids[r.Intn(len(ids))]
				var label any = []string{"start", "good one", "tab\there", "v2"}[r.Intn(4)]
				if r.Intn(4) == 0 {
					label = nil
				}
				entry("label", map[string]any{"targetId": target, "label": label})
			}
		case k == 18:
			entry("model_change", map[string]any{"provider": "openai", "modelId": "gpt-5"})
		case k == 19:
			entry("thinking_level_change", map[string]any{"thinkingLevel": "high"})
		case k == 20:
			switch r.Intn(4) {
			case 0:
				entry("session_info", map[string]any{"name": "Named\nsession"})
			case 1:
				entry("session_info", map[string]any{"name": ""})
			case 2:
				entry("custom", map[string]any{"customType": "todo-state", "data": map[string]any{}})
			default:
				var rep any
				if r.Intn(2) == 0 {
					rep = map[string]any{"content": "edited"}
				}
				entry("context_edit", map[string]any{"targetId": ids[r.Intn(len(ids))], "replacement": rep})
			}
		default:
			entry("usage", map[string]any{"kind": "title", "provider": "anthropic", "model": "claude-haiku",
				"usage": map[string]any{"input": 3, "output": 1}})
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("gen-%d.jsonl", seed))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
