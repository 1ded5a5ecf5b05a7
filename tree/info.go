package tree

import (
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
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
	// FirstContent is the content of the first user message that has
	// text (pi's firstMessage is its text, see TextContent); nil when no
	// message has any.
	FirstContent []byte
}

// FirstMessage is pi's firstMessage: the text of the first user message
// that has any, "(no messages)" when none has.
func (s Summary) FirstMessage() string {
	if s.FirstContent == nil {
		return noMessages
	}
	return TextContent(s.FirstContent)
}

// AppendFirstMessage appends FirstMessage as JSON.stringify writes it,
// straight from the message's raw content: the text is never held
// decoded, so that a huge first message is copied once, into dst.
func (s Summary) AppendFirstMessage(dst []byte) []byte {
	if s.FirstContent == nil {
		return jsjson.Quote(dst, noMessages)
	}
	return AppendTextContentJSON(dst, s.FirstContent)
}

const noMessages = "(no messages)"

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
		if e.Type == schema.TypeSessionInfo {
			name, _ := e.Str("name")
			s.Name = jsjson.Trim(name)
		}
		if e.Type != schema.TypeMessage {
			continue
		}
		s.MessageCount++
		if e.Role == "" || e.MsgContent == nil {
			continue
		}
		if e.Role != schema.RoleUser && e.Role != schema.RoleAssistant {
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
		if s.FirstContent == nil && e.Role == schema.RoleUser && textNotEmpty(e.MsgContent) {
			s.FirstContent = e.MsgContent
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
	return s
}

// TextContent is pi's extractTextContent: a string as it is, or the text
// blocks of an array joined by spaces.
func TextContent(content []byte) string {
	if jsjson.KindOf(content) == jsjson.String {
		s, _ := jsjson.Unquote(content)
		return s
	}
	var parts []string
	textParts(content, func(v []byte) {
		switch jsjson.KindOf(v) {
		case jsjson.String:
			s, _ := jsjson.Unquote(v)
			parts = append(parts, s)
		case jsjson.Invalid, jsjson.Null:
			parts = append(parts, "")
		default:
			parts = append(parts, string(v))
		}
	})
	return strings.Join(parts, " ")
}

// textParts calls fn with the raw value of each part TextContent joins: the
// string itself, or the text of each text block.
func textParts(content []byte, fn func(text []byte)) {
	switch jsjson.KindOf(content) {
	case jsjson.String:
		fn(content)
	case jsjson.Array:
		jsjson.Elements(content, func(b []byte) bool {
			if typ, _ := jsjson.Str(b, "type"); typ == schema.BlockText {
				fn(jsjson.Get(b, "text"))
			}
			return true
		})
	}
}

// textNotEmpty tells whether TextContent(content) is not empty, without
// building it.
func textNotEmpty(content []byte) bool {
	parts, text := 0, false
	textParts(content, func(v []byte) {
		parts++
		switch jsjson.KindOf(v) {
		case jsjson.String:
			text = text || len(v) > 2
		case jsjson.Invalid, jsjson.Null:
		default:
			text = true
		}
	})
	return text || parts > 1
}

// AppendTextContentJSON appends TextContent(content) as JSON.stringify
// writes it, without holding the text decoded: each part is re-spelled
// from its raw bytes straight into dst.
func AppendTextContentJSON(dst, content []byte) []byte {
	if jsjson.KindOf(content) == jsjson.String {
		return jsjson.AppendCanonical(dst, content)
	}
	dst = append(dst, '"')
	first := true
	textParts(content, func(v []byte) {
		if !first {
			dst = append(dst, ' ')
		}
		first = false
		var q []byte
		switch jsjson.KindOf(v) {
		case jsjson.String:
			start := len(dst)
			dst = jsjson.AppendCanonical(dst, v)
			// Drop the quotes of the part: it is inside the joined string.
			copy(dst[start:], dst[start+1:len(dst)-1])
			dst = dst[:len(dst)-2]
			return
		case jsjson.Invalid, jsjson.Null:
			return
		default:
			q = jsjson.Quote(nil, string(v))
		}
		dst = append(dst, q[1:len(q)-1]...)
	})
	return append(dst, '"')
}

// Usage sums the session's usage.
func (t *Tree) Usage() schema.Usage {
	var u schema.Usage
	for _, e := range t.entries {
		if v, ok := EntryUsage(e); ok {
			u.Add(v)
		}
	}
	return u.Finish()
}

// EntryUsage is the usage an entry adds to pi's /session totals: that of
// assistant and tool-result messages, of usage entries, and of compactions
// and branch summaries that have a truthy one. ok is false for an entry
// that adds none.
func EntryUsage(e *sessions.Entry) (u schema.Usage, ok bool) {
	v, ok := e.Usage()
	if !ok {
		return u, false
	}
	u, _ = DecodeUsage(v)
	return u, true
}

// DecodeUsage reads a usage object in one pass: the last member of each
// name, numbers only (anything else counts 0, as does a value that is not
// an object). Total is the sum of the four counts; hasCost tells that
// cost.total is a number.
func DecodeUsage(v []byte) (u schema.Usage, hasCost bool) {
	var in, out, cr, cw, cost, total []byte
	for it := jsjson.IterMembers(v); it.Next(); {
		switch v := it.Value(); string(it.Name()) {
		case "input":
			in = v
		case "output":
			out = v
		case "cacheRead":
			cr = v
		case "cacheWrite":
			cw = v
		case "cost":
			cost = v
		}
	}
	for it := jsjson.IterMembers(cost); it.Next(); {
		if string(it.Name()) == "total" {
			total = it.Value()
		}
	}
	u = schema.Usage{Input: num(in), Output: num(out), CacheRead: num(cr), CacheWrite: num(cw), Cost: num(total)}
	return u.Finish(), jsjson.KindOf(total) == jsjson.Number
}

// num is the value of a JSON number, 0 for any other value. Token counts
// are integers of a few digits: those convert exactly without ParseFloat.
func num(v []byte) float64 {
	if len(v) > 0 && len(v) <= 15 {
		x := int64(0)
		for _, c := range v {
			if c < '0' || c > '9' {
				x = -1
				break
			}
			x = x*10 + int64(c-'0')
		}
		if x >= 0 {
			return float64(x)
		}
	}
	if jsjson.KindOf(v) != jsjson.Number {
		return 0
	}
	return jsjson.NumberValue(v)
}

// Counts are the message counts pi's /session shows (getSessionStats),
// over every entry of the file: user, assistant and tool-result messages,
// the toolCall blocks of the assistant messages, and every message
// entry.
type Counts struct {
	UserMessages      int
	AssistantMessages int
	ToolCalls         int
	ToolResults       int
	TotalMessages     int
}

// Counts counts the session's messages as pi's /session does. They are
// counted once per entry: info.json and the session's page both ask, and
// a session that grew is counted from where it was; a large one is
// counted on every core.
func (t *Tree) Counts() Counts {
	c := &t.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > len(t.entries) {
		c.n, c.c = 0, Counts{}
	}
	rest := t.entries[c.n:]
	parts := 1
	if len(rest) >= 2048 {
		parts = runtime.GOMAXPROCS(0) * 2
	}
	b := par.Ranges(len(rest), parts, func(int) int { return 1 })
	runs := make([]Counts, len(b)-1)
	par.Each(len(runs), func(k int) {
		for _, e := range rest[b[k]:b[k+1]] {
			runs[k].Count(e)
		}
	})
	for _, r := range runs {
		c.c.Add(r)
	}
	c.n = len(t.entries)
	return c.c
}

// countsCache is what Counts counted, and of how many entries.
type countsCache struct {
	mu sync.Mutex
	n  int
	c  Counts
}

// Count adds an entry to the counts. An assistant content that is not an
// array has no tool calls; elements that are not objects are skipped
// (pi throws on null ones).
func (c *Counts) Count(e *sessions.Entry) {
	if e.Type != schema.TypeMessage {
		return
	}
	c.TotalMessages++
	switch e.Role {
	case schema.RoleUser:
		c.UserMessages++
	case schema.RoleToolResult:
		c.ToolResults++
	case schema.RoleAssistant:
		c.AssistantMessages++
		if jsjson.KindOf(e.MsgContent) == jsjson.Array {
			jsjson.Elements(e.MsgContent, func(b []byte) bool {
				if jsjson.KindOf(b) == jsjson.Object {
					if typ, _ := typeAnd(b, "type"); isString(typ, schema.BlockToolCall) {
						c.ToolCalls++
					}
				}
				return true
			})
		}
	}
}

// Add adds the counts of another run of entries.
func (c *Counts) Add(o Counts) {
	c.UserMessages += o.UserMessages
	c.AssistantMessages += o.AssistantMessages
	c.ToolCalls += o.ToolCalls
	c.ToolResults += o.ToolResults
	c.TotalMessages += o.TotalMessages
}
