// Package gen writes large, realistic pi sessions for benchmarks: user
// prompts, assistant turns with thinking, text and tool calls, tool
// results, an occasional branch, label, model change and compaction; and
// whole stores of them (Store).
package gen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"time"

	"github.com/pifs/pifs/sessions/schema"
)

// Spec describes one generated session. The output is a pure function of
// the Spec.
type Spec struct {
	ID       string    // header id (a UUID)
	Cwd      string    // header cwd
	Start    time.Time // header timestamp; entries follow one second apart
	Seed     int64     // seeds the text
	Entries  int       // number of entries after the header
	AvgBytes int       // rough line size in bytes
	// Needle, when set, is the text of one more user message at the
	// end, the leaf, so that it is in the context at the leaf.
	Needle string
}

// Session writes a session of n entries whose lines average about
// avgBytes bytes. The output is the same for the same arguments.
func Session(w io.Writer, n, avgBytes int) error {
	return Write(w, Spec{
		ID:       "0196c3ef-e100-70f4-96f8-000000000000",
		Cwd:      "/home/user/big",
		Start:    time.Date(2025, 5, 12, 10, 0, 0, 0, time.UTC),
		Seed:     42,
		Entries:  n,
		AvgBytes: avgBytes,
	})
}

const tsLayout = "2006-01-02T15:04:05.000Z"

// Write writes the session that s describes.
func Write(w io.Writer, s Spec) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	r := rand.New(rand.NewSource(s.Seed))
	avgBytes := s.AvgBytes
	fmt.Fprintf(bw, `{"type":"`+schema.TypeSession+`","version":3,"id":%q,"timestamp":%q,"cwd":%q}`+"\n", s.ID, s.Start.UTC().Format(tsLayout), s.Cwd)
	words := strings.Fields("the quick brown fox jumps over lazy dog while compiling go code with tests and benchmarks for the filesystem mount in a session tree")
	text := func(size int) string {
		var sb strings.Builder
		for sb.Len() < size {
			sb.WriteString(words[r.Intn(len(words))])
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	ms := s.Start.UnixMilli()
	ts := func() string {
		ms += 1000
		return time.UnixMilli(ms).UTC().Format(tsLayout)
	}
	parent := "null"
	var ids []string
	for i := 0; i < s.Entries; i++ {
		id := fmt.Sprintf("%08x", uint32(i)*2654435761)
		t := ts()
		var line string
		switch {
		case i > 100 && i%5000 == 0:
			line = fmt.Sprintf(`{"type":"`+schema.TypeCompaction+`","id":"%s","parentId":%s,"timestamp":"%s","summary":%q,"firstKeptEntryId":"%s","tokensBefore":150000}`, id, parent, t, text(avgBytes), ids[i-20])
		case i%997 == 0 && i > 0:
			line = fmt.Sprintf(`{"type":"`+schema.TypeLabel+`","id":"%s","parentId":%s,"timestamp":"%s","targetId":"%s","label":"milestone-%d"}`, id, parent, t, ids[i-1], i)
		case i%4 == 0:
			line = userLine(id, parent, t, text(avgBytes/2), ms)
		case i%4 == 1 || i%4 == 3:
			line = fmt.Sprintf(`{"type":"`+schema.TypeMessage+`","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"`+schema.RoleAssistant+`","content":[{"type":"`+schema.BlockThinking+`","thinking":%q},{"type":"`+schema.BlockText+`","text":%q},{"type":"`+schema.BlockToolCall+`","id":"toolu_%d","name":"bash","arguments":{"command":"go test ./..."}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4","usage":{"input":1200,"output":300,"cacheRead":50000,"cacheWrite":0,"totalTokens":51500,"cost":{"input":0.0036,"output":0.0045,"cacheRead":0.015,"cacheWrite":0,"total":0.0231}},"stopReason":"toolUse","timestamp":%d}}`, id, parent, t, text(avgBytes/4), text(avgBytes/3), i, ms)
		default:
			line = fmt.Sprintf(`{"type":"`+schema.TypeMessage+`","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"`+schema.RoleToolResult+`","toolCallId":"toolu_%d","toolName":"bash","content":[{"type":"`+schema.BlockText+`","text":%q}],"isError":false,"timestamp":%d}}`, id, parent, t, i-1, text(avgBytes*3/2), ms)
		}
		if _, err := bw.WriteString(line + "\n"); err != nil {
			return err
		}
		ids = append(ids, id)
		// Mostly linear; now and then a branch from a few entries back.
		if i > 10 && i%1500 == 0 {
			parent = `"` + ids[i-6] + `"`
		} else {
			parent = `"` + id + `"`
		}
	}
	if s.Needle != "" {
		line := userLine("ffffffff", parent, ts(), "please look for "+s.Needle+" in the logs", ms)
		if _, err := bw.WriteString(line + "\n"); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func userLine(id, parent, ts, text string, ms int64) string {
	return fmt.Sprintf(`{"type":"`+schema.TypeMessage+`","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"`+schema.RoleUser+`","content":[{"type":"`+schema.BlockText+`","text":%q}],"timestamp":%d}}`, id, parent, ts, text, ms)
}

// FileName is the name pi gives a session file: its start time and id.
func FileName(s Spec) string {
	return strings.NewReplacer(":", "-", ".", "-").Replace(s.Start.UTC().Format(tsLayout)) + "_" + s.ID + ".jsonl"
}

// ProjectDir is the folder pi gives a working directory:
// /home/user/p1 → --home-user-p1--.
func ProjectDir(cwd string) string {
	return "--" + strings.ReplaceAll(strings.Trim(cwd, "/"), "/", "-") + "--"
}
