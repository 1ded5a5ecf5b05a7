package fakemodel_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/fakemodel"
	"github.com/pifs/pifs/internal/oracle"
)

// TestPiAgainstFakeModel: the real pi CLI talks to the server, writes the
// reply into its session with the server's usage, cost and stop reason, and
// sends the session's messages back on --continue.
func TestPiAgainstFakeModel(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Queue(
		fakemodel.Reply{Text: "first answer", Usage: fakemodel.Usage{Prompt: 100, Cached: 10, Completion: 20}},
		fakemodel.Reply{Text: "second answer"},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a := oracle.NewAgent(t, srv.ModelsJSON(fakemodel.DefaultCosts()), fakemodel.Provider, fakemodel.Model)
	cwd := t.TempDir()
	if out := a.Print(t, cwd, "hello model"); out != "first answer\n" {
		t.Errorf("pi printed %q", out)
	}
	if out := a.Print(t, cwd, "again", "--continue"); out != "second answer\n" {
		t.Errorf("pi printed %q", out)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs, err := reqs[1].Messages()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+": "+m.Text)
	}
	if len(got) != 4 || !strings.HasPrefix(got[0], "system: ") ||
		strings.Join(got[1:], "|") != "user: hello model|assistant: first answer|user: again" {
		t.Errorf("second request's messages: %q", got)
	}

	files, _ := filepath.Glob(filepath.Join(a.Sessions, "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v, want one", files)
	}
	var assistants []map[string]any
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e struct {
			Type    string
			Message map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "message" && e.Message["role"] == "assistant" {
			assistants = append(assistants, e.Message)
		}
	}
	if len(assistants) != 2 {
		t.Fatalf("%d assistant messages, want 2", len(assistants))
	}
	first := assistants[0]
	usage := first["usage"].(map[string]any)
	cost := usage["cost"].(map[string]any)
	// 90 fresh input tokens at 1000/M, 10 cached at 100/M, 20 output at 2000/M.
	if first["stopReason"] != "stop" || first["provider"] != "fake" || first["model"] != "m" ||
		usage["input"] != 90.0 || usage["cacheRead"] != 10.0 || usage["output"] != 20.0 ||
		fmt.Sprintf("%.6f", cost["total"]) != "0.131000" {
		t.Errorf("first assistant message %v", first)
	}
}

// TestToolCallAndError: a reply with a tool call makes pi run the tool and
// ask again with its result; an HTTP error becomes pi's error stop.
func TestToolCallAndError(t *testing.T) {
	srv, err := fakemodel.Start(fakemodel.Queue(
		fakemodel.Reply{Text: "let me look", ToolCalls: []fakemodel.ToolCall{{Name: "read", Arguments: `{"path":"f.txt"}`}}},
		fakemodel.Reply{Text: "it says hi"},
		fakemodel.Reply{Status: 400, Text: "bad request on purpose"},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a := oracle.NewAgent(t, srv.ModelsJSON(fakemodel.DefaultCosts()), fakemodel.Provider, fakemodel.Model)
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("hi from the file\n"), 0o644)
	if out := a.Print(t, cwd, "read f.txt"); out != "it says hi\n" {
		t.Errorf("pi printed %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs, _ := reqs[1].Messages()
	last := msgs[len(msgs)-1]
	if prev := msgs[len(msgs)-2]; prev.Role != "assistant" || strings.Join(prev.ToolCalls, ",") != "read" {
		t.Errorf("the call: %+v", prev)
	}
	if last.Role != "tool" || !strings.Contains(last.Text, "hi from the file") || last.ToolCallID != "call_0" {
		t.Errorf("the tool's result: %+v", last)
	}
	if _, err := a.Run(cwd, "fail now", "--continue"); err == nil {
		t.Error("pi succeeded against an HTTP 400")
	} else if !strings.Contains(err.Error(), "bad request on purpose") {
		t.Errorf("pi's error does not carry the server's message: %v", err)
	}
}
