package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/persist"
	"github.com/pifs/pifs/sessions"
)

// mountIndex is the index a new mount of dir makes, with its persistent
// cache in cacheDir.
func mountIndex(t *testing.T, dir, cacheDir string) (*sessions.Index, *persist.Cache) {
	t.Helper()
	c := persist.Open(persist.Options{Dir: cacheDir, Store: dir, Build: "test", Log: func(msg string) { t.Errorf("cache: %s", msg) }})
	t.Cleanup(func() { c.Close() })
	x := sessions.NewIndex(dir)
	x.Keep(c)
	return x, c
}

func sameScan(t *testing.T, f *sessions.File, records []Record, name string) {
	t.Helper()
	want, wantName, err := scanRecords(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		want = nil
	}
	if len(records) == 0 {
		records = nil
	}
	if !reflect.DeepEqual(records, want) || name != wantName {
		t.Errorf("%s: kept %d records, name %q; the file has %d, name %q", f.Name, len(records), name, len(want), wantName)
	}
}

// TestScanFileKept: the records and names ScanFacts keeps are those Scan
// reads, for every fixture; a new mount of the unchanged store has them
// all without reading; a file that grew is read from where the last scan
// stopped (its final line without a newline read again).
func TestScanFileKept(t *testing.T) {
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
	grow := filepath.Join(dir, "--p--", "grow.jsonl")
	os.WriteFile(grow, []byte(`{"type":"session","version":3,"id":"g","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}`+"\n"+
		`{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"assistant","provider":"p","model":"m1","usage":{"input":1,"output":2,"cost":{"total":0.5}}}}`+"\n"+
		`{"type":"usage","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","usage":{"input":3}}`), 0o644)
	time.Sleep(2100 * time.Millisecond) // out of the racy window: kept

	x, c := mountIndex(t, dir, cacheDir)
	all := x.All()
	if len(all) < 10 {
		t.Fatalf("%d sessions: the fixtures are missing", len(all))
	}
	for _, f := range all {
		x, err := ScanFacts(f)
		if err != nil {
			t.Fatal(err)
		}
		sameScan(t, f, x.Records, x.Name)
	}
	c.Close()

	x, c = mountIndex(t, dir, cacheDir)
	for _, f := range x.All() {
		x, ok := KeptFacts(f)
		if !ok {
			t.Errorf("%s: nothing kept across mounts", f.Name)
			continue
		}
		sameScan(t, f, x.Records, x.Name)
	}
	c.Close()

	// The file grows: the final line is ended, a name and another final
	// line without a newline come after. A byte before where the
	// last scan stopped is changed too (the model of the first record):
	// a scan that read the file again would see it.
	data, _ := os.ReadFile(grow)
	data = []byte(strings.Replace(string(data), `"m1"`, `"m2"`, 1))
	data = append(data, []byte("\n"+
		`{"type":"session_info","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03Z","name":" grown "}`+"\n"+
		`{"type":"usage","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04Z","usage":{"output":4}}`)...)
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
		t.Fatal("records of an earlier version kept for the grown file")
	}
	x2, err := ScanFacts(f)
	if err != nil {
		t.Fatal(err)
	}
	if x2.Name != "grown" || len(x2.Records) != 3 {
		t.Fatalf("grown file: %d records, name %q; want 3, grown", len(x2.Records), x2.Name)
	}
	if x2.Records[0].Model != "m1" {
		t.Errorf("the first record's model is %q: the grown file was read again from the start, not from where the last scan stopped", x2.Records[0].Model)
	}
	if x2.Records[1].Input != 3 || x2.Records[2].Output != 4 {
		t.Errorf("the lines after the last scan: %+v", x2.Records[1:])
	}
}
