package usage

import (
	"bytes"
	"unsafe"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// Tool use, as pi's /session counts it (getSessionStats): every toolCall
// block of an assistant message is a call, every toolResult message a
// result, over all the entries of a file. A result is an error when its
// isError is truthy; it is put down to the model and day of the call it
// answers when the session holds it (the latest call with its
// toolCallId not yet answered, as ids are reused from turn to turn), and
// to Unknown otherwise. Calls scripts made (nestedCalls), which /session
// does not count, are not counted.

// Kinds of ToolRecord.
const (
	ToolCall   uint8 = iota // a toolCall block
	ToolResult              // a tool result that is not an error
	ToolError               // a tool result whose isError is true
)

// ToolRecord is one tool call or one tool result of a session.
type ToolRecord struct {
	// ID is the entry's id; Time its timestamp in ms (else the message's),
	// NaN when neither is a valid date.
	ID   string
	Time float64
	// Tool is the call's name or the result's toolName (Unknown when it
	// is not a string); Model names the model that made the call as
	// Record.Label does: for a result, the one of the call it answers.
	Tool, Model string
	// Call is a hash of the toolCallId, which pairs results with calls.
	Call uint32
	// N is the call's place among its message's tool calls (0 for a result).
	N uint16
	// Kind is ToolCall, ToolResult or ToolError.
	Kind uint8
}

// ToolBytes is about what records hold in memory.
func ToolBytes(records []ToolRecord) int64 {
	n := int64(cap(records)) * int64(unsafe.Sizeof(ToolRecord{}))
	for i := range records {
		n += int64(len(records[i].ID))
	}
	return n
}

// ToolRecords returns the tool records of entries, in order.
func ToolRecords(entries []*sessions.Entry) []ToolRecord {
	var c ToolCollector
	c.Add(entries...)
	return c.Records()
}

// ToolCollector gathers a session's tool records as its file grows, as
// Collector gathers its usage. The zero value is ready to use. It is not
// safe for concurrent use.
type ToolCollector struct {
	records []ToolRecord
	// pending are the calls without a result yet, by Call.
	pending map[uint32][]int
	names   interner
}

// resume makes a collector that goes on after records.
func resume(records []ToolRecord) *ToolCollector {
	c := &ToolCollector{}
	for i := range records {
		c.push(records[i])
	}
	return c
}

// Add takes the tool use of entries appended to the session.
func (c *ToolCollector) Add(entries ...*sessions.Entry) {
	for _, e := range entries {
		if e.Type != schema.TypeMessage {
			continue
		}
		switch e.Role {
		case schema.RoleAssistant:
			if jsjson.KindOf(e.MsgContent) != jsjson.Array {
				continue
			}
			model := ""
			n := 0
			jsjson.Elements(e.MsgContent, func(b []byte) bool {
				if !jsjson.StringIs(jsjson.Get(b, "type"), schema.BlockToolCall) {
					return true
				}
				if model == "" {
					model = c.model(e)
				}
				c.push(ToolRecord{ID: e.ID, Time: entryTime(e), Tool: c.name(jsjson.Get(b, "name")), Model: model,
					Call: callID(jsjson.Get(b, "id")), N: uint16(min(n, 1<<16-1)), Kind: ToolCall})
				n++
				return true
			})
		case schema.RoleToolResult:
			r := ToolRecord{ID: e.ID, Time: entryTime(e), Tool: c.name(jsjson.Get(e.Msg, "toolName")), Model: Unknown,
				Call: callID(jsjson.Get(e.Msg, "toolCallId")), Kind: ToolResult}
			if jsjson.Truthy(jsjson.Get(e.Msg, "isError")) {
				r.Kind = ToolError
			}
			c.push(r)
		}
	}
}

// push adds a record; a result takes the model of the call it answers.
func (c *ToolCollector) push(r ToolRecord) {
	if r.Kind == ToolCall {
		if c.pending == nil {
			c.pending = map[uint32][]int{}
		}
		c.pending[r.Call] = append(c.pending[r.Call], len(c.records))
	} else if p := c.pending[r.Call]; len(p) > 0 {
		r.Model = c.records[p[len(p)-1]].Model
		if len(p) == 1 {
			delete(c.pending, r.Call)
		} else {
			c.pending[r.Call] = p[:len(p)-1]
		}
	}
	c.records = append(c.records, r)
}

// Records returns the records so far, in file order, shared as
// Collector.Records shares them.
func (c *ToolCollector) Records() []ToolRecord {
	return c.records[:len(c.records):len(c.records)]
}

// kept is the records at their size, for keeping.
func (c *ToolCollector) kept() []ToolRecord { return append([]ToolRecord(nil), c.records...) }

func (c *ToolCollector) model(e *sessions.Entry) string {
	model := e.MsgModel
	if rm := e.MsgResponseModel; jsjson.KindOf(rm) == jsjson.String {
		model = rm
	}
	return label(c.name(e.MsgProvider), c.name(model))
}

// name interns a string value, Unknown for anything else.
func (c *ToolCollector) name(v []byte) string { return c.names.name(v, 256) }

// entryTime is the entry's time, else its message's, as Record.Time.
func entryTime(e *sessions.Entry) float64 {
	t := jsjson.DateValue(e.Timestamp)
	if t != t && e.MsgTimestamp != nil {
		t = jsjson.DateValue(e.MsgTimestamp)
	}
	return t
}

// callID hashes a toolCallId (FNV-1a of its canonical JSON, which is the
// value as written unless it has an escape).
func callID(v []byte) uint32 {
	if bytes.IndexByte(v, '\\') >= 0 {
		v = jsjson.AppendCanonical(nil, v)
	}
	h := uint32(2166136261)
	for _, c := range v {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// mayUseTool lets through every line that can hold a tool call or a tool
// result: "toolCall" (a call's block, a result's toolCallId) or
// "toolResult" as written; `\u` escapes are left to mayCount.
func mayUseTool(line []byte) bool {
	for {
		i := bytes.Index(line, []byte("tool"))
		if i < 0 {
			return false
		}
		line = line[i+4:]
		if bytes.HasPrefix(line, []byte("Call")) || bytes.HasPrefix(line, []byte("Result")) {
			return true
		}
	}
}
