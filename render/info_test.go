package render

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/tree"
)

func TestInfo(t *testing.T) {
	files, _ := filepath.Glob("../testdata/demo/*/2025-05-12T10-00-01-000Z_*.jsonl")
	if len(files) != 1 {
		t.Fatal("demo session missing")
	}
	tr := openTree(t, files[0])
	b := Info("/store/x.jsonl", tr, time.Unix(0, 0))
	var info map[string]any
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatalf("info.json is not JSON: %v\n%s", err, b)
	}
	if b[len(b)-1] != '\n' || b[1] != '\n' {
		t.Error("info.json is not indented with a final newline")
	}
	u := tr.Usage()
	want := map[string]any{
		"id": tr.Header.ID, "file": "/store/x.jsonl", "cwd": "/home/user/proj", "name": nil,
		"entryCount": float64(tr.Len()), "leaf": tr.LeafID(), "parentSession": nil,
		"created": "2025-05-12T10:00:01.000Z",
	}
	for k, v := range want {
		if info[k] != v {
			t.Errorf("%s = %#v, want %#v", k, info[k], v)
		}
	}
	usage := info["usage"].(map[string]any)
	if usage["total"] != u.Total || usage["cost"] != u.Cost || u.Total == 0 {
		t.Errorf("usage %v, want %+v", usage, u)
	}
	if tips := info["tips"].([]any); len(tips) != len(tr.Tips()) {
		t.Errorf("tips %v", tips)
	}
}

func TestInfoEmptySession(t *testing.T) {
	tr := parseTree(t, `{"type":"session","version":3,"id":"e","cwd":"/"}`+"\n")
	var info map[string]any
	if err := json.Unmarshal(Info("f", tr, time.UnixMilli(1747044000000)), &info); err != nil {
		t.Fatal(err)
	}
	if info["leaf"] != nil || info["created"] != nil || info["modified"] != "2025-05-12T10:00:00.000Z" || info["firstMessage"] != "(no messages)" {
		t.Errorf("info %v", info)
	}
	if tips, ok := info["tips"].([]any); !ok || len(tips) != 0 {
		t.Errorf("tips %v, want []", info["tips"])
	}
}

// TestInfoHugeFirstMessage: info.json of a session whose first message is
// 16 MiB is written in one buffer: the text is held once, in the result,
// and reads back as pi's firstMessage, from string content and from text
// blocks.
func TestInfoHugeFirstMessage(t *testing.T) {
	text := strings.Repeat("word \\\"quoted\\\" é ", 1<<20)
	for _, content := range []string{`"` + text + `"`, `[{"type":"text","text":"` + text + `"},{"type":"image"},{"type":"text","text":"end"}]`} {
		tr := parseTree(t, `{"type":"session","version":3,"id":"e","cwd":"/"}`+"\n"+
			`{"type":"message","id":"u","parentId":null,"message":{"role":"user","content":`+content+`}}`+"\n")
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b := Info("f", tr, time.UnixMilli(0))
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(b))+64<<10 {
			t.Errorf("allocated %d bytes for an info.json of %d", got, len(b))
		}
		var info map[string]any
		if err := json.Unmarshal(b, &info); err != nil {
			t.Fatal(err)
		}
		if want := tree.TextContent([]byte(content)); info["firstMessage"] != want {
			t.Errorf("firstMessage of %d bytes, want %d", len(info["firstMessage"].(string)), len(want))
		}
	}
}
