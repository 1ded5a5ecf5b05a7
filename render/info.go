package render

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/tree"
)

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
	Status        string          `json:"status"`
	Last          *lastJSON       `json:"last"`
}

// Info is info.json: pi's session-list fields, the tree's shape and
// /session's usage totals. file is the session file's path; mtime its
// modification time, which dates a session that nothing else dates.
func Info(file string, t *tree.Tree, mtime time.Time) []byte {
	sum := t.Summary(mtime)
	info := infoJSON{
		ID:            sum.ID,
		File:          file,
		Cwd:           sum.Cwd,
		ParentSession: rawOrNull(sum.ParentSession),
		Created:       isoOrNil(sum.Created),
		Modified:      isoOrNil(sum.Modified),
		MessageCount:  sum.MessageCount,
		FirstMessage:  sum.FirstMessage,
		EntryCount:    t.Len(),
		Tips:          []string{},
		Usage:         usageTotals(t.Entries()),
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
	info.Status, info.Last = status(t)
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		// Only a non-finite number can fail; usage sums of a damaged file.
		return []byte(fmt.Sprintf("{\"error\": %q}\n", err.Error()))
	}
	return append(b, '\n')
}

// isoOrNil formats ms as toISOString does; nil for an invalid date.
func isoOrNil(ms float64) any {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return nil
	}
	return jsjson.FormatISO(ms)
}

// rawOrNull passes a raw JSON value through, null when absent.
func rawOrNull(v []byte) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return json.RawMessage(v)
}
