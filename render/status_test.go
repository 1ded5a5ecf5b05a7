package render

import (
	"encoding/json"
	"testing"
	"time"
)

// TestInfoStatus: info.json's status follows the last message entry of
// the file; entries that are not messages leave it as it was.
func TestInfoStatus(t *testing.T) {
	const head = `{"type":"session","version":3,"id":"e","cwd":"/"}` + "\n"
	msg := func(id, parent, message string) string {
		return `{"type":"message","id":"` + id + `","parentId":` + parent + `,"timestamp":"2026-01-01T00:00:00.000Z","message":` + message + "}\n"
	}
	user := msg("u", "null", `{"role":"user","content":"hi"}`)
	cases := []struct{ name, file, status, last, stop string }{
		{"empty", head, "waiting", "", ""},
		{"user", head + user, "working", "u", ""},
		{"tool use", head + user + msg("a", `"u"`, `{"role":"assistant","content":[],"stopReason":"toolUse"}`), "working", "a", "toolUse"},
		{"tool result", head + user + msg("r", `"u"`, `{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[]}`), "working", "r", ""},
		{"stop", head + user + msg("a", `"u"`, `{"role":"assistant","content":[],"stopReason":"stop"}`), "waiting", "a", "stop"},
		{"length", head + user + msg("a", `"u"`, `{"role":"assistant","content":[],"stopReason":"length"}`), "waiting", "a", "length"},
		{"error", head + user + msg("a", `"u"`, `{"role":"assistant","content":[],"stopReason":"error"}`), "error", "a", "error"},
		{"aborted then a label", head + user + msg("a", `"u"`, `{"role":"assistant","content":[],"stopReason":"aborted"}`) +
			`{"type":"label","id":"l","parentId":"a","targetId":"u","label":"x"}` + "\n", "aborted", "a", "aborted"},
		{"shell command", head + user + msg("b", `"u"`, `{"role":"bashExecution","command":"ls","output":"","exitCode":0}`), "waiting", "b", ""},
	}
	for _, c := range cases {
		var info struct {
			Status string
			Last   *struct{ ID, Role, StopReason string }
		}
		b := Info("f", parseTree(t, c.file), time.Unix(0, 0))
		if err := json.Unmarshal(b, &info); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, b)
		}
		last, stop := "", ""
		if info.Last != nil {
			last, stop = info.Last.ID, info.Last.StopReason
		}
		if info.Status != c.status || last != c.last || stop != c.stop {
			t.Errorf("%s: status %q, last %q (%q); want %q, %q (%q)", c.name, info.Status, last, stop, c.status, c.last, c.stop)
		}
	}
}
