package render

import (
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// appendLast writes info.json's "last": the message entry that tells the
// session's status (see tree.EntryStatus), its id, role, stopReason and
// timestamp; null when there is none.
func appendLast(b []byte, e *sessions.Entry) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	b = append(b, "{\n    \"id\": "...)
	b = jsjson.Quote(b, e.ID)
	b = append(b, ",\n    \"role\": "...)
	b = jsjson.Quote(b, e.Role)
	if sr := tree.StopReason(e); sr != "" {
		b = append(b, ",\n    \"stopReason\": "...)
		b = jsjson.Quote(b, sr)
	}
	if e.Timestamp != nil {
		b = append(b, ",\n    \"timestamp\": "...)
		b = appendRaw(b, e.Timestamp)
	}
	return append(b, "\n  }"...)
}
