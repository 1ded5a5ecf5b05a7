package search

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session writes session files as pi writes them, for tests: a header,
// then entries linked by parentId, each one second after the last.
type session struct {
	t      testing.TB
	lines  []string
	ids    int
	last   string
	now    time.Time
	prefix string
}

func newSession(t testing.TB, id, cwd string, start time.Time, version int) *session {
	s := &session{t: t, now: start, prefix: id[:4]}
	h := map[string]any{"type": "session", "id": id, "timestamp": start.Format("2006-01-02T15:04:05.000Z"), "cwd": cwd}
	if version > 0 {
		h["version"] = version
	}
	s.add(h)
	return s
}

func (s *session) add(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	s.lines = append(s.lines, string(b))
}

// entry appends an entry under parent ("" for the last entry, "-" for a
// root) and returns its id.
func (s *session) entry(parent string, v map[string]any) string {
	s.ids++
	id := fmt.Sprintf("%s%04x", s.prefix, s.ids)
	s.now = s.now.Add(time.Second)
	v["id"] = id
	switch parent {
	case "":
		if s.last == "" {
			v["parentId"] = nil
		} else {
			v["parentId"] = s.last
		}
	case "-":
		v["parentId"] = nil
	default:
		v["parentId"] = parent
	}
	if _, ok := v["timestamp"]; !ok {
		v["timestamp"] = s.now.Format("2006-01-02T15:04:05.000Z")
	}
	s.add(v)
	s.last = id
	return id
}

func (s *session) msg(parent string, m map[string]any) string {
	if _, ok := m["timestamp"]; !ok {
		m["timestamp"] = s.now.Add(time.Second).UnixMilli()
	}
	return s.entry(parent, map[string]any{"type": "message", "message": m})
}

func (s *session) user(parent string, text string) string {
	return s.msg(parent, map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}})
}

func (s *session) assistant(parent, model string, blocks ...any) string {
	return s.msg(parent, map[string]any{"role": "assistant", "content": blocks, "provider": strings.Split(model, "/")[0],
		"model": strings.Split(model, "/")[1], "api": "x", "stopReason": "stop",
		"usage": map[string]any{"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
			"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}})
}

func (s *session) result(parent, tool, text string) string {
	return s.msg(parent, map[string]any{"role": "toolResult", "toolCallId": "call", "toolName": tool,
		"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false})
}

func text(s string) map[string]any     { return map[string]any{"type": "text", "text": s} }
func thinking(s string) map[string]any { return map[string]any{"type": "thinking", "thinking": s} }
func call(name string, args map[string]any) map[string]any {
	return map[string]any{"type": "toolCall", "id": "call_" + name, "name": name, "arguments": args}
}

func (s *session) write(path string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(s.lines, "\n")+"\n"), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// long is a tool output over MaxPart with a word at its head, its middle
// (which is cut) and its tail.
func long(head, middle, tail string) string {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 2000)
	return head + " " + filler[:12000] + " " + middle + " " + filler[:12000] + " " + tail
}

// longer is a tool output whose line is longer than a scan's buffer
// (which the index reads in pieces), with escapes and characters of two
// and three bytes throughout.
func longer(head, middle, tail string) string {
	filler := strings.Repeat("lorem \"ipsum\"\n dolor é sit 中文 amet\t", 8000)
	return head + " " + filler + " " + middle + " " + filler + " " + tail
}

// plant writes the planted sessions into store: words in prose, in code,
// inside identifiers, in CJK text, in tool output (some cut out of a long
// one), on abandoned branches, in hidden messages, summaries, names and
// labels, across three days; in three projects, one session flat at the
// top of the store and one of format version 2.
func plant(t testing.TB, store string) {
	t.Helper()
	day := time.Date(2025, 4, 30, 22, 0, 0, 0, time.UTC)

	a := newSession(t, "aaaa1111-0000-4000-8000-000000000001", "/home/user/alpha", day, 3)
	u1 := a.user("", "Please refactor the SessionManager in cmd/main.go; it is slow. Ça va, Crème brûlée?")
	a1 := a.assistant("", "anthropic/claude-opus-4",
		thinking("I should look at the hash map first, then the snake_case_name helpers."),
		text("Let me read cmd/main.go and grep for xylophone."),
		call("read", map[string]any{"path": "cmd/main.go", "offset": 12}),
		call("bash", map[string]any{"command": "grep -rn \"xylophone\" ./... && echo done", "timeout": 30, "2": "index-key-first"}))
	r1 := a.result("", "read", "package main\n\nfunc newSessionManager() *SessionManager {\n\treturn &SessionManager{hashMap: map[string]int{}}\n}\n// 这是一个中文测试句子，没有空格\n")
	a.result("", "bash", long("headword xylophone", "middleword", "tailword"))
	a.result("", "bash", longer("farhead", "farmiddle", "fartail"))
	a.msg("", map[string]any{"role": "bashExecution", "command": "make zebra-build", "output": "zebra done\nexit ok", "exitCode": 0, "cancelled": false, "truncated": false})
	a.entry("", map[string]any{"type": "custom_message", "customType": "ext.note", "content": "hidden quokka note", "display": false})
	a.entry("", map[string]any{"type": "custom_message", "customType": "ext.note", "content": []any{text("shown koala note")}, "display": true})
	a.entry("", map[string]any{"type": "custom", "customType": "ext.state", "data": map[string]any{"note": "custom wombat", "n": 42, "ok": true}})
	a.entry("", map[string]any{"type": "custom", "customType": "pifs.leaf", "data": map[string]any{"leaf": u1}})
	a.entry("", map[string]any{"type": "label", "targetId": u1, "label": "milestone-one"})
	a.entry("", map[string]any{"type": "label", "targetId": r1, "label": "old-label"})
	a.entry("", map[string]any{"type": "label", "targetId": r1, "label": "new-label"})
	a.entry("", map[string]any{"type": "session_info", "name": "  Auth refactor ünïcode  "})
	a.entry("", map[string]any{"type": "model_change", "provider": "openai", "modelId": "gpt-5"})
	a.entry("", map[string]any{"type": "thinking_level_change", "thinkingLevel": "high"})
	// An abandoned branch off the first assistant message.
	b1 := a.user(a1, "abandoned platypus idea with a HashMap")
	a.assistant(b1, "anthropic/claude-opus-4", text("platypus answer on the abandoned branch"))
	a.entry(a1, map[string]any{"type": "branch_summary", "fromId": b1, "summary": "summary of the narwhal branch"})
	a.entry("", map[string]any{"type": "compaction", "summary": "compacted: the axolotl work", "firstKeptEntryId": a1, "tokensBefore": 1000})
	a.msg("", map[string]any{"role": "user", "content": "plain string content ocelot, go to the hash-map"})
	a.msg("", map[string]any{"role": "assistant", "content": []any{}, "provider": "anthropic", "model": "claude-opus-4",
		"stopReason": "error", "errorMessage": "rate limit exceeded for capybara"})
	a.user("", "日本語のテキストを検索する。Émile and Zoë wrote x²y.")
	a.write(filepath.Join(store, "--home-user-alpha--", "2025-04-30T22-00-00-000Z_aaaa1111-0000-4000-8000-000000000001.jsonl"))

	b := newSession(t, "bbbb2222-0000-4000-8000-000000000002", "/home/user/beta", day.Add(26*time.Hour), 3)
	b.user("", "The session manager keeps a hash map of entries; see SessionManager.open().")
	b.assistant("", "openai/gpt-5",
		text("Editing src/session_manager.go now."),
		call("edit", map[string]any{"path": "src/session_manager.go", "oldText": "HashMap", "newText": "hash_map"}),
		call("write", map[string]any{"path": "/home/user/beta/notes/todo.md", "content": "xylophone list\n"}))
	b.result("", "edit", "Successfully replaced text in src/session_manager.go.")
	b.result("", "write", "Wrote notes/todo.md")
	b.user("", "a b c go Go GO x y z")
	b.entry("", map[string]any{"type": "label", "targetId": "bbbb0001", "label": "milestone-two"})
	b.entry("", map[string]any{"type": "session_info", "name": "Beta work"})
	b.entry("", map[string]any{"type": "session_info", "name": "Beta renamed"})
	b.write(filepath.Join(store, "--home-user-beta--", "2025-05-02T00-00-00-000Z_bbbb2222-0000-4000-8000-000000000002.jsonl"))

	// Flat at the top of the store: listed in its cwd's project.
	c := newSession(t, "cccc3333-0000-4000-8000-000000000003", "/home/user/alpha", day.Add(50*time.Hour), 3)
	c.user("", "flat file mentions the Crème and the zebra again")
	c.assistant("", "anthropic/claude-sonnet-4", text("Answer about SessionManager from a flat session."), call("read", map[string]any{"path": "/etc/hosts"}))
	c.write(filepath.Join(store, "2025-05-03T00-00-00-000Z_cccc3333-0000-4000-8000-000000000003.jsonl"))

	// Format version 2 (no ids migrated needed, hookMessage renamed).
	d := newSession(t, "dddd4444-0000-4000-8000-000000000004", "/home/user/gamma", day.Add(3*time.Hour), 2)
	d.user("", "legacy session about the quokka and SessionManager")
	d.msg("", map[string]any{"role": "hookMessage", "customType": "old", "content": "legacy hook message wombat", "display": true})
	d.write(filepath.Join(store, "--home-user-gamma--", "2025-05-01T01-00-00-000Z_dddd4444-0000-4000-8000-000000000004.jsonl"))
}

func fileSize(t testing.TB, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
