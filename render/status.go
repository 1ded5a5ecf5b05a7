package render

import (
	"encoding/json"

	"github.com/pifs/pifs/tree"
)

// lastJSON is info.json's "last": the message entry that tells the
// session's status (see tree.EntryStatus).
type lastJSON struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	StopReason string          `json:"stopReason,omitempty"`
	Timestamp  json.RawMessage `json:"timestamp,omitempty"`
}

// status is info.json's "status" and "last".
func status(t *tree.Tree) (string, *lastJSON) {
	s, e := t.Status()
	if e == nil {
		return s, nil
	}
	return s, &lastJSON{ID: e.ID, Role: e.Role, StopReason: tree.StopReason(e), Timestamp: json.RawMessage(e.Timestamp)}
}
