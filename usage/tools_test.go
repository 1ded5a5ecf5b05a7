package usage_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

// loadTools is load with each session's tool records.
func loadTools(t testing.TB, dir string) []usage.Session {
	t.Helper()
	list := load(t, dir)
	for i := range list {
		l, err := sessions.Open(list[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		list[i].Tools = usage.ToolRecords(l.Entries)
	}
	return list
}

// TestToolsMatchPi: in every session of pi's corpus and of the demo store,
// the calls and results the tool records count are pi's /session
// toolCalls and toolResults, and the errors the tool results pi reads
// with isError true; the store's tools report counts each once.
func TestToolsMatchPi(t *testing.T) {
	corpus := t.TempDir()
	oracle.Corpus(t, corpus)
	for name, store := range map[string]string{"corpus": corpus, "demo": filepath.Join("..", "testdata", "demo")} {
		t.Run(name, func(t *testing.T) {
			list := loadTools(t, store)
			compared, calls := 0, 0
			for _, s := range list {
				var got usage.ToolCounts
				for _, r := range s.Tools {
					switch r.Kind {
					case usage.ToolCall:
						got.Calls++
					case usage.ToolResult:
						got.Results++
					case usage.ToolError:
						got.Results++
						got.Errors++
					}
				}
				pi := oracle.Dump(t, s.Path, false)
				if pi.Stats == nil {
					t.Logf("%s: pi has no stats", s.File)
					continue
				}
				want := usage.ToolCounts{Calls: pi.Stats.ToolCalls, Results: pi.Stats.ToolResults}
				for _, raw := range pi.Entries {
					var e struct {
						Type    string
						Message struct {
							Role    string
							IsError any
						}
					}
					if json.Unmarshal(raw, &e) == nil && e.Type == "message" && e.Message.Role == "toolResult" && e.Message.IsError == true {
						want.Errors++
					}
				}
				if got != want {
					t.Errorf("%s: tool records count %+v, pi %+v", s.File, got, want)
				}
				compared++
				calls += got.Calls
			}
			t.Logf("%d sessions, %d tool calls", compared, calls)
			if compared < 10 || calls < 20 {
				t.Errorf("compared %d sessions, %d calls", compared, calls)
			}
			reps := usage.Build(list, time.UTC)
			var sum usage.ToolCounts
			for _, p := range reps.Projects {
				sum.Calls += p.ToolTotals.Calls
				sum.Results += p.ToolTotals.Results
				sum.Errors += p.ToolTotals.Errors
			}
			if sum != reps.Root.ToolTotals || sum.Calls == 0 {
				t.Errorf("root %+v, projects %+v", reps.Root.ToolTotals, sum)
			}
		})
	}
}

// toolCall is an assistant message with tool calls (name:id each).
func toolCall(id, parent, ts, model string, calls ...string) line {
	var blocks []string
	for _, c := range calls {
		name, cid, _ := strings.Cut(c, ":")
		blocks = append(blocks, fmt.Sprintf(`{"type":"toolCall","id":%q,"name":%q,"arguments":{}}`, cid, name))
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"assistant","content":[%s],"provider":"p","model":%q,"usage":%s,"timestamp":0}}`,
		id, parentJSON(parent), ts, strings.Join(blocks, ","), model, usageJSON(1, 1, 0, 0, 0.01))
}

func toolResult(id, parent, ts, name, callID string, isError bool) line {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":{"role":"toolResult","toolCallId":%q,"toolName":%q,"content":[],"isError":%v,"timestamp":0}}`,
		id, parentJSON(parent), ts, callID, name, isError)
}

// TestToolsReport pins tools.csv and tools.json: rows by day, project,
// tool and model; a result put down to its call's model, by the latest
// unanswered call with its id; a result without a call; a clone's copies
// counted once; a project's report holding its own rows.
func TestToolsReport(t *testing.T) {
	dir := t.TempDir()
	writeSession(t, dir, "--a--", "s1",
		header("s1", "2025-03-01T10:00:00.000Z", "/a", ""),
		toolCall("m1", "", "2025-03-01T10:00:01.000Z", "m-big", "read:call_0", "edit:call_1"),
		toolResult("r1", "m1", "2025-03-01T10:00:02.000Z", "read", "call_0", false),
		toolResult("r2", "r1", "2025-03-01T10:00:03.000Z", "edit", "call_1", true),
		toolCall("m2", "r2", "2025-03-02T10:00:00.000Z", "m-small", "bash:call_0"),
		toolResult("r3", "m2", "2025-03-02T10:00:01.000Z", "bash", "call_0", true),
		toolResult("r4", "r3", "2025-03-02T10:00:02.000Z", "ghost", "nope", false),
	)
	// A clone of s1's first turn in another project, with one call of its own.
	writeSession(t, dir, "--b--", "s2",
		header("s2", "2025-03-05T10:00:00.000Z", "/b", "/a/s1.jsonl"),
		toolCall("m1", "", "2025-03-01T10:00:01.000Z", "m-big", "read:call_0", "edit:call_1"),
		toolResult("r1", "m1", "2025-03-01T10:00:02.000Z", "read", "call_0", false),
		toolCall("m9", "r1", "2025-03-05T10:00:01.000Z", "m-big", "read:call_0"),
	)
	reps := usage.Build(loadTools(t, dir), time.UTC)
	csv, _ := reps.Root.File("tools.csv", time.Now())
	want := `date,timeZone,project,tool,model,calls,results,errors
2025-03-01,UTC,--a--,edit,p/m-big,1,1,1
2025-03-01,UTC,--a--,read,p/m-big,1,1,0
2025-03-02,UTC,--a--,bash,p/m-small,1,1,1
2025-03-02,UTC,--a--,ghost,unknown,0,1,0
2025-03-05,UTC,--b--,read,p/m-big,1,0,0
`
	if string(csv) != want {
		t.Errorf("tools.csv\n%s\nwant\n%s", csv, want)
	}
	js, _ := reps.Projects["--b--"].File("tools.json", time.Now())
	wantJSON := `{
  "timeZone": "UTC",
  "totals": {"calls": 1, "results": 0, "errors": 0},
  "rows": [
    {"date": "2025-03-05", "timeZone": "UTC", "project": "--b--", "tool": "read", "model": "p/m-big", "calls": 1, "results": 0, "errors": 0}
  ]
}
`
	if string(js) != wantJSON {
		t.Errorf("--b--/usage/tools.json\n%s\nwant\n%s", js, wantJSON)
	}
	if got := reps.Root.ToolTotals; got != (usage.ToolCounts{Calls: 4, Results: 4, Errors: 2}) {
		t.Errorf("root totals %+v", got)
	}
	empty, _ := usage.Build(nil, time.UTC).Root.File("tools.json", time.Now())
	if !strings.Contains(string(empty), `"rows": []`) {
		t.Errorf("empty tools.json:\n%s", empty)
	}
}
