// Package gen writes large, realistic pi sessions for benchmarks: user
// prompts, assistant turns with thinking, text and tool calls, tool
// results, an occasional branch, label, model change and compaction.
package gen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"strings"
)

// Session writes a session of n entries whose lines average about
// avgBytes bytes. The output is the same for the same arguments.
func Session(w io.Writer, n, avgBytes int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	r := rand.New(rand.NewSource(42))
	fmt.Fprintf(bw, `{"type":"session","version":3,"id":"0196c3ef-e100-70f4-96f8-000000000000","timestamp":"2025-05-12T10:00:00.000Z","cwd":"/home/user/big"}`+"\n")
	words := strings.Fields("the quick brown fox jumps over lazy dog while compiling go code with tests and benchmarks for the filesystem mount in a session tree")
	text := func(size int) string {
		var sb strings.Builder
		for sb.Len() < size {
			sb.WriteString(words[r.Intn(len(words))])
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	ms := int64(1747044000000)
	ts := func() string {
		ms += 1000
		return fmt.Sprintf("2025-05-%02dT%02d:%02d:%02d.%03dZ", 12+int(ms/86400000-20219), (ms/3600000)%24, (ms/60000)%60, (ms/1000)%60, ms%1000)
	}
	parent := "null"
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08x", uint32(i)*2654435761)
		t := ts()
		var line string
		switch {
		case i > 100 && i%5000 == 0:
			line = fmt.Sprintf(`{"type":"compaction","id":"%s","parentId":%s,"timestamp":"%s","summary":%q,"firstKeptEntryId":"%s","tokensBefore":150000}`, id, parent, t, text(avgBytes), ids[i-20])
		case i%997 == 0 && i > 0:
			line = fmt.Sprintf(`{"type":"label","id":"%s","parentId":%s,"timestamp":"%s","targetId":"%s","label":"milestone-%d"}`, id, parent, t, ids[i-1], i)
		case i%4 == 0:
			line = fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"user","content":[{"type":"text","text":%q}],"timestamp":%d}}`, id, parent, t, text(avgBytes/2), ms)
		case i%4 == 1 || i%4 == 3:
			line = fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"assistant","content":[{"type":"thinking","thinking":%q},{"type":"text","text":%q},{"type":"toolCall","id":"toolu_%d","name":"bash","arguments":{"command":"go test ./..."}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4","usage":{"input":1200,"output":300,"cacheRead":50000,"cacheWrite":0,"totalTokens":51500,"cost":{"input":0.0036,"output":0.0045,"cacheRead":0.015,"cacheWrite":0,"total":0.0231}},"stopReason":"toolUse","timestamp":%d}}`, id, parent, t, text(avgBytes/4), text(avgBytes/3), i, ms)
		default:
			line = fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":{"role":"toolResult","toolCallId":"toolu_%d","toolName":"bash","content":[{"type":"text","text":%q}],"isError":false,"timestamp":%d}}`, id, parent, t, i-1, text(avgBytes*3/2), ms)
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
	return bw.Flush()
}
