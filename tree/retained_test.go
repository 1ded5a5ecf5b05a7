package tree_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// TestAppendRetainedTail: a compaction carrying retainedTail is taken,
// kept as given after pi's fields, and makes the context a self-contained
// checkpoint; pi opens the file.
func TestAppendRetainedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(schemaSession), 0o644); err != nil {
		t.Fatal(err)
	}
	b := session(t, path).NewBuilder()
	b.Now = func() string { return "2025-01-01T00:00:09.000Z" }
	for _, line := range []string{
		`{"type":"compaction","summary":"all so far","tokensBefore":5000,"retainedTail":[{"role":"user","content":"kept question","timestamp":7},{"role":"assistant","content":[{"type":"text","text":"kept answer"}]}]}`,
		`after it`,
	} {
		if err := b.AppendLine([]byte(line), 1735689609000); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasSuffix(string(b.Lines[0]), `,"summary":"all so far","firstKeptEntryId":"`+b.IDs[0]+`","tokensBefore":5000,"retainedTail":[{"role":"user","content":"kept question","timestamp":7},{"role":"assistant","content":[{"type":"text","text":"kept answer"}]}]}`) {
		t.Errorf("line %s", b.Lines[0])
	}
	if err := sessions.Append(path, b.Lines...); err != nil {
		t.Fatal(err)
	}
	tr := session(t, path)
	want := []string{"compactionSummary:all so far", "user:kept question", "assistant:kept answer", "user:after it"}
	if got := texts(t, tr.Context()); !reflect.DeepEqual(got, want) {
		t.Errorf("context %q, want %q", got, want)
	}
	if pi := oracle.Dump(t, path, false); !pi.Valid || len(pi.Entries) != 5 {
		t.Errorf("pi: valid %v, %d entries", pi.Valid, len(pi.Entries))
	}
}

func TestRetainedTailRefusals(t *testing.T) {
	const c = `{"type":"compaction","summary":"s","tokensBefore":1,"retainedTail":`
	for _, bad := range []struct{ tail, msg string }{
		{`null}`, `compaction: "retainedTail" must be an array of messages such as [{"role":"user","content":"TEXT"}]; e.g. {"type":"compaction","summary":"TEXT","tokensBefore":1234}`},
		{`{"role":"user"}}`, `compaction: "retainedTail" must be an array of messages such as [{"role":"user","content":"TEXT"}]; e.g. {"type":"compaction","summary":"TEXT","tokensBefore":1234}`},
		{`["hi"]}`, `compaction: retainedTail[0] must be a message, a JSON object with "role"`},
		{`[{"role":"user","content":"a"},{"content":"b"}]}`, `compaction: retainedTail[1]: role none; use one of: user, assistant, toolResult, custom, bashExecution, branchSummary, compactionSummary, system`},
		{`[{"role":"robot"}]}`, `compaction: retainedTail[0]: role "robot"; use one of: user, assistant, toolResult, custom, bashExecution, branchSummary, compactionSummary, system`},
	} {
		_, err := tree.PrepareAppend([]byte(c+bad.tail), 1)
		refusal(t, err, tree.ErrInvalid, bad.msg)
	}
	if _, err := tree.PrepareAppend([]byte(c+`[]}`), 1); err != nil {
		t.Errorf("an empty retainedTail: %v", err)
	}
}
