package tree

import (
	"math"
	"strings"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
)

// Summary holds the fields of pi's session list (buildSessionInfo).
type Summary struct {
	ID            string
	Cwd           string
	Name          string // "" when unnamed
	ParentSession []byte // raw header value, nil when absent
	Created       float64
	Modified      float64 // ms since the epoch: last activity, else header time, else file mtime
	MessageCount  int
	FirstMessage  string
}

// Summary computes pi's session-list fields. mtime is the file's
// modification time, used when nothing else dates the session.
func (t *Tree) Summary(mtime time.Time) Summary {
	h := t.Header
	s := Summary{ID: h.ID, Cwd: h.Cwd, ParentSession: h.ParentSession}
	if jsjson.KindOf(h.Timestamp) == jsjson.String {
		s.Created = jsjson.DateValue(h.Timestamp)
	} else {
		s.Created = math.NaN()
	}
	last := math.NaN()
	for _, e := range t.entries {
		if e.Type == "session_info" {
			name, _ := e.Str("name")
			s.Name = jsjson.Trim(name)
		}
		if e.Type != "message" {
			continue
		}
		s.MessageCount++
		if e.Role == "" || e.MsgContent == nil {
			continue
		}
		if e.Role != "user" && e.Role != "assistant" {
			continue
		}
		at := e.Time
		if ts := e.MsgTimestamp; jsjson.KindOf(ts) == jsjson.Number {
			at = jsjson.NumberValue(ts)
		}
		if !math.IsNaN(at) {
			if math.IsNaN(last) {
				last = math.Max(0, at)
			} else {
				last = math.Max(last, at)
			}
		}
		if s.FirstMessage == "" && e.Role == "user" {
			s.FirstMessage = TextContent(e.MsgContent)
		}
	}
	switch {
	case !math.IsNaN(last) && last > 0:
		s.Modified = last
	case !math.IsNaN(s.Created):
		s.Modified = s.Created
	default:
		s.Modified = float64(mtime.UnixMilli())
	}
	if s.FirstMessage == "" {
		s.FirstMessage = "(no messages)"
	}
	return s
}

// TextContent is pi's extractTextContent: a string as it is, or the text
// blocks of an array joined by spaces.
func TextContent(content []byte) string {
	switch jsjson.KindOf(content) {
	case jsjson.String:
		s, _ := jsjson.Unquote(content)
		return s
	case jsjson.Array:
		var parts []string
		jsjson.Elements(content, func(b []byte) bool {
			if typ, _ := jsjson.Str(b, "type"); typ == "text" {
				text := jsjson.Get(b, "text")
				switch jsjson.KindOf(text) {
				case jsjson.String:
					s, _ := jsjson.Unquote(text)
					parts = append(parts, s)
				case jsjson.Invalid, jsjson.Null:
					parts = append(parts, "")
				default:
					parts = append(parts, string(text))
				}
			}
			return true
		})
		return strings.Join(parts, " ")
	}
	return ""
}

// Usage is the token and cost totals pi's /session shows: over every entry
// of the file, assistant and tool-result messages, usage entries, and the
// usage of compactions and branch summaries.
type Usage struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
	Cost       float64 `json:"cost"`
}

// Usage sums the session's usage.
func (t *Tree) Usage() Usage {
	var u Usage
	add := func(v []byte) {
		if jsjson.KindOf(v) != jsjson.Object {
			return
		}
		u.Input += num(jsjson.Get(v, "input"))
		u.Output += num(jsjson.Get(v, "output"))
		u.CacheRead += num(jsjson.Get(v, "cacheRead"))
		u.CacheWrite += num(jsjson.Get(v, "cacheWrite"))
		u.Cost += num(jsjson.Get(jsjson.Get(v, "cost"), "total"))
	}
	for _, e := range t.entries {
		switch e.Type {
		case "usage":
			add(e.Get("usage"))
		case "branch_summary", "compaction":
			if v := e.Get("usage"); jsjson.Truthy(v) {
				add(v)
			}
		case "message":
			switch e.Role {
			case "toolResult", "assistant":
				add(e.MsgUsage)
			}
		}
	}
	u.Total = u.Input + u.Output + u.CacheRead + u.CacheWrite
	return u
}

func num(v []byte) float64 {
	if jsjson.KindOf(v) != jsjson.Number {
		return 0
	}
	return jsjson.NumberValue(v)
}
