package nodes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// indentJSON indents a JSON value with two spaces and ends it with a
// newline. Only whitespace changes: strings and numbers keep their bytes.
func indentJSON(raw []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// entryTime is when an entry was written; zero when its timestamp is not a
// valid date.
func entryMtime(e *sessions.Entry) time.Time {
	return msTime(jsjson.DateValue(e.Timestamp))
}

// isoOrNil formats ms as toISOString does; nil for an invalid date.
func isoOrNil(ms float64) any {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return nil
	}
	return jsjson.FormatISO(ms)
}

// rawOrNil passes a raw JSON value through, null when absent.
func rawOrNil(v []byte) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return json.RawMessage(v)
}

type infoJSON struct {
	ID            string          `json:"id"`
	File          string          `json:"file"`
	Cwd           string          `json:"cwd"`
	Name          *string         `json:"name"`
	ParentSession json.RawMessage `json:"parentSession"`
	Created       any             `json:"created"`
	Modified      any             `json:"modified"`
	MessageCount  int             `json:"messageCount"`
	FirstMessage  string          `json:"firstMessage"`
	EntryCount    int             `json:"entryCount"`
	Leaf          *string         `json:"leaf"`
	Tips          []string        `json:"tips"`
	Usage         tree.Usage      `json:"usage"`
}

// renderInfo is info.json: pi's session-list fields, the tree's shape and
// /session's usage totals.
func renderInfo(s *session, mtime time.Time) []byte {
	t := s.tree
	sum := t.Summary(mtime)
	u := t.Usage()
	info := infoJSON{
		ID:            sum.ID,
		File:          s.path,
		Cwd:           sum.Cwd,
		ParentSession: rawOrNil(sum.ParentSession),
		Created:       isoOrNil(sum.Created),
		Modified:      isoOrNil(sum.Modified),
		MessageCount:  sum.MessageCount,
		FirstMessage:  sum.FirstMessage,
		EntryCount:    t.Len(),
		Tips:          []string{},
		Usage:         u,
	}
	if sum.Name != "" {
		info.Name = &sum.Name
	}
	if leaf := t.LeafID(); leaf != "" {
		info.Leaf = &leaf
	}
	for _, n := range t.Tips() {
		info.Tips = append(info.Tips, n.ID)
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		// Only a non-finite number can fail; usage sums of a damaged file.
		return []byte(fmt.Sprintf("{\"error\": %q}\n", err.Error()))
	}
	return append(b, '\n')
}

// renderTranscript writes a path as Markdown: for each message, summary and
// compaction, a heading with who, the entry id and the time, then the full
// text. Code blocks use a fence longer than any backtick run they hold.
func renderTranscript(path []*sessions.Entry) []byte {
	var b strings.Builder
	for _, e := range path {
		writeEntry(&b, e)
	}
	return []byte(b.String())
}

func heading(b *strings.Builder, who string, e *sessions.Entry) {
	ts := ""
	if ms := jsjson.DateValue(e.Timestamp); !math.IsNaN(ms) {
		ts = " · " + jsjson.FormatISO(ms)
	}
	fmt.Fprintf(b, "## %s · %s%s\n\n", who, e.ID, ts)
}

func str(v []byte) string {
	if jsjson.KindOf(v) == jsjson.String {
		s, _ := jsjson.Unquote(v)
		return s
	}
	if v == nil || jsjson.KindOf(v) == jsjson.Null {
		return ""
	}
	return string(v)
}

func para(b *strings.Builder, text string) {
	if text == "" {
		return
	}
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func fence(b *strings.Builder, lang, text string) {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	b.WriteString(f + lang + "\n" + text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(f + "\n\n")
}

// content writes a message's content: a string, or blocks of text,
// thinking, tool calls and images.
func content(b *strings.Builder, c []byte) {
	if jsjson.KindOf(c) != jsjson.Array {
		para(b, str(c))
		return
	}
	jsjson.Elements(c, func(block []byte) bool {
		typ, _ := jsjson.Str(block, "type")
		switch typ {
		case "text":
			para(b, str(jsjson.Get(block, "text")))
		case "thinking":
			b.WriteString("*Thinking:*\n\n")
			para(b, str(jsjson.Get(block, "thinking")))
		case "toolCall":
			name := str(jsjson.Get(block, "name"))
			id := str(jsjson.Get(block, "id"))
			fmt.Fprintf(b, "**Tool call** `%s` (%s)\n\n", name, id)
			args := jsjson.Get(block, "arguments")
			if args == nil {
				args = []byte("{}")
			}
			fence(b, "json", string(indentJSON(args)))
		case "image":
			fmt.Fprintf(b, "*[image %s]*\n\n", str(jsjson.Get(block, "mimeType")))
		default:
			fence(b, "json", string(indentJSON(block)))
		}
		return true
	})
}

func writeEntry(b *strings.Builder, e *sessions.Entry) {
	switch e.Type {
	case "message":
		m := e.Message()
		switch e.Role {
		case "user", "assistant", "custom", "system":
			heading(b, e.Role, e)
			content(b, jsjson.Get(m, "content"))
			if msg := str(jsjson.Get(m, "errorMessage")); msg != "" {
				fmt.Fprintf(b, "*Error:* %s\n\n", msg)
			}
		case "toolResult":
			who := "tool result"
			if name := str(jsjson.Get(m, "toolName")); name != "" {
				who += " `" + name + "`"
			}
			if jsjson.Truthy(jsjson.Get(m, "isError")) {
				who += " (error)"
			}
			heading(b, who, e)
			var out strings.Builder
			content(&out, jsjson.Get(m, "content"))
			fence(b, "", strings.TrimRight(out.String(), "\n"))
		case "bashExecution":
			heading(b, "bash", e)
			fence(b, "sh", "$ "+str(jsjson.Get(m, "command")))
			output := str(jsjson.Get(m, "output"))
			if code := jsjson.Get(m, "exitCode"); code != nil && jsjson.KindOf(code) != jsjson.Null {
				output = strings.TrimRight(output, "\n") + "\n[exit " + string(code) + "]"
			}
			fence(b, "", output)
		default:
			heading(b, e.Kind(), e)
			content(b, jsjson.Get(m, "content"))
		}
	case "custom_message":
		heading(b, "custom message "+str(e.Get("customType")), e)
		content(b, e.Get("content"))
	case "branch_summary":
		heading(b, "branch summary", e)
		para(b, str(e.Get("summary")))
	case "compaction":
		heading(b, "compaction", e)
		para(b, str(e.Get("summary")))
	}
}
