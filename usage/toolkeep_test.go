package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
)

// sameFacts compares facts with a parse of the file.
func sameFacts(t *testing.T, f *sessions.File, x Facts) {
	t.Helper()
	l, err := sessions.Open(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	want := ToolRecords(l.Entries)
	if len(want) == 0 {
		want = nil
	}
	got := x.Tools
	if len(got) == 0 {
		got = nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: kept tool records\n%+v\nparse\n%+v", f.Name, got, want)
	}
	sameScan(t, f, x.Records, x.Name)
}

// TestScanFactsKept: the tool records ScanFacts reads in the same pass as
// the usage records are those of a parse, for every fixture; a new mount
// has them without reading; a grown file is read from where the last scan
// stopped, its results still put down to the model of calls read before;
// what KeepFacts keeps is what KeptFacts gives.
func TestScanFactsKept(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.jsonl")
	more, _ := filepath.Glob("../testdata/*/*/*.jsonl")
	files = append(files, more...)
	dir, cacheDir := t.TempDir(), t.TempDir()
	for i, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, "--p--"), 0o755)
		os.WriteFile(filepath.Join(dir, "--p--", fmt.Sprintf("f%02d.jsonl", i)), data, 0o644)
	}
	call := func(id, parent, model, callID string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"assistant","provider":"p","model":%q,"content":[{"type":"toolCall","id":%q,"name":"edit","arguments":{}}],"usage":{"input":1}}}`, id, parent, model, callID)
	}
	result := func(id, parent, callID string) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2025-01-01T00:00:02Z","message":{"role":"toolResult","toolCallId":%q,"toolName":"edit","content":[],"isError":true}}`, id, parent, callID)
	}
	grow := filepath.Join(dir, "--p--", "grow.jsonl")
	os.WriteFile(grow, []byte(`{"type":"session","version":3,"id":"g","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}`+"\n"+
		call("a", "", "m1", "c1")+"\n"+call("b", "a", "m1", "c2")+"\n"+result("c", "b", "c2")), 0o644)
	time.Sleep(2100 * time.Millisecond) // out of the racy window: kept

	x, c := mountIndex(t, dir, cacheDir)
	all := x.All()
	tools := 0
	for _, f := range all {
		fx, err := ScanFacts(f)
		if err != nil {
			t.Fatal(err)
		}
		sameFacts(t, f, fx)
		tools += len(fx.Tools)
	}
	if len(all) < 10 || tools < 20 {
		t.Fatalf("%d sessions, %d tool records: the fixtures are missing", len(all), tools)
	}
	c.Close()

	x, c = mountIndex(t, dir, cacheDir)
	for _, f := range x.All() {
		fx, ok := KeptFacts(f)
		if !ok {
			t.Errorf("%s: nothing kept across mounts", f.Name)
			continue
		}
		sameFacts(t, f, fx)
	}
	c.Close()

	// The file grows: the result of c1 comes, after a change of the
	// model name of its call, before where the last scan stopped.
	data, _ := os.ReadFile(grow)
	data = []byte(strings.Replace(string(data), `"m1"`, `"m2"`, 1))
	data = append(data, "\n"+result("d", "c", "c1")+"\n"...)
	fi, _ := os.Stat(grow)
	os.WriteFile(grow, data, 0o644)
	os.Chtimes(grow, fi.ModTime().Add(time.Second), fi.ModTime().Add(time.Second))
	time.Sleep(2100 * time.Millisecond)

	x, _ = mountIndex(t, dir, cacheDir)
	f, err := x.Lookup("--p--", "grow")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := KeptFacts(f); ok {
		t.Fatal("facts of an earlier version kept for the grown file")
	}
	fx, err := ScanFacts(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range fx.Tools {
		got = append(got, fmt.Sprint(r.ID, " ", r.Model, " ", r.Kind))
	}
	if want := []string{"a p/m1 0", "b p/m1 0", "c p/m1 2", "d p/m1 2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("grown file's tool records %q, want %q (m2: read again from the start)", got, want)
	}

	KeepFacts(f, fx)
	if kx, ok := KeptFacts(f); !ok || !reflect.DeepEqual(kx, fx) {
		t.Errorf("KeepFacts kept %+v, %v", kx, ok)
	}
}

// TestMayUseTool: the filter lets a line through when it holds "toolCall"
// or "toolResult", wherever "tool" first appears.
func TestMayUseTool(t *testing.T) {
	for line, want := range map[string]bool{
		`{"type":"toolCall"}`:               true,
		`"toolCallId":"x"`:                  true,
		`"role":"toolResult"`:               true,
		`tool tools toolResult`:             true,
		`"tool":"read","toolCal":1`:         false,
		`toolCal`:                           false,
		`"role":"assistant","text":"tools"`: false,
		``:                                  false,
	} {
		if got := mayUseTool([]byte(line)); got != want {
			t.Errorf("mayUseTool(%q) = %v, want %v", line, got, want)
		}
	}
}

// benchSession writes a generated session of n entries (a third of them
// tool calls, a third their results) for the scan benchmarks.
func benchSession(b *testing.B, n int) string {
	p := filepath.Join(b.TempDir(), "s.jsonl")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.Session(f, n, 2000); err != nil {
		b.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	return p
}

// BenchmarkScanUsage reads a session's usage records alone (scanRecords), as
// the scan for the reports did before it read tool records too.
func BenchmarkScanUsage(b *testing.B) {
	p := benchSession(b, 20000)
	for b.Loop() {
		if _, _, err := scanRecords(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanFacts reads its usage and tool records in one pass, as
// ScanFacts does.
func BenchmarkScanFacts(b *testing.B) {
	p := benchSession(b, 20000)
	for b.Loop() {
		if _, err := scanFacts(p, scanned{}); err != nil {
			b.Fatal(err)
		}
	}
}
