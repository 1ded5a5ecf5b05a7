package usage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// scanRecords reads the records and the name of the session at path in
// one pass of sessions.Scan with the usage filter alone: the plain reader
// that ScanFacts, its faster and resumable kin, is checked against. name
// is the last session_info's, trimmed, as tree.Tree.Name gives it.
func scanRecords(path string) (records []Record, name string, err error) {
	var c Collector
	_, err = sessions.Scan(path, mayCount, func(e *sessions.Entry) {
		if e.Type == schema.TypeSessionInfo {
			n, _ := e.Str("name")
			name = jsjson.Trim(n)
			return
		}
		c.Add(e)
	})
	if err != nil {
		return nil, "", err
	}
	return c.kept(), name, nil
}

// TestScanMatchesParse: the records and the name scanRecords reads are those of
// the parsed session, for every session in the repository's fixtures and
// for the cases a line filter could get wrong.
func TestScanMatchesParse(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.jsonl")
	more, _ := filepath.Glob("../testdata/*/*/*.jsonl")
	files = append(files, more...)
	dir := t.TempDir()
	long := strings.Repeat("x", 700<<10) // longer than scanRecords' buffer
	for name, text := range map[string]string{
		"long.jsonl": `{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}` + "\n" +
			`{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"` + long + `"}}` + "\n" +
			`{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":"` + long + `","provider":"p","model":"m","usage":{"input":1,"output":2,"cost":{"total":0.5}}}}` + "\n",
		"escaped.jsonl": `{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}` + "\n" +
			`{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"assistant","us\u0061ge":{"input":7}}}` + "\n" +
			`{"type":"session\u005finfo","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","name":" named "}` + "\n",
		"unterminated.jsonl": `{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}` + "\n" +
			`{"type":"usage","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","usage":{"input":3}}`,
		"header-late.jsonl": "\n[]\n" + `{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}` + "\n" +
			`{"type":"session","version":3,"id":"s2","timestamp":"2025-01-01T00:00:00Z","cwd":"/","usage":{"input":1}}` + "\n" +
			`{"type":"usage","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","usage":{"input":3}}` + "\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	counted := 0
	for _, p := range files {
		l, err := sessions.Open(p)
		records, name, serr := scanRecords(p)
		if err != nil {
			if !errors.Is(serr, sessions.ErrNotSession) || !errors.Is(err, sessions.ErrNotSession) {
				t.Errorf("%s: Open: %v, Scan: %v", p, err, serr)
			}
			continue
		}
		if serr != nil {
			t.Errorf("%s: Scan: %v", p, serr)
			continue
		}
		want := Records(l.Entries)
		if len(want) == 0 {
			want = nil
		}
		if len(records) == 0 {
			records = nil
		}
		if !reflect.DeepEqual(records, want) {
			t.Errorf("%s: Scan records\n%+v\nparse\n%+v", p, records, want)
		}
		if tn := tree.New(l).Name(); name != tn {
			t.Errorf("%s: Scan name %q, parse %q", p, name, tn)
		}
		counted += len(want)
		if filepath.Base(p) == "escaped.jsonl" && (len(want) != 1 || name != "named") {
			t.Errorf("escaped keys: %d records, name %q; the case no longer tests the filter", len(want), name)
		}
	}
	if counted == 0 || len(files) < 10 {
		t.Fatalf("compared %d records in %d files: the fixtures are missing", counted, len(files))
	}
}

// TestMayCount: the one-pass filter lets a line through exactly when it
// holds "usage", "session_info" or `\u`, at every offset the word-at-a-time
// loop and its tail can meet them.
func TestMayCount(t *testing.T) {
	want := func(line []byte) bool {
		return bytes.Contains(line, []byte("usage")) || bytes.Contains(line, []byte("session_info")) ||
			bytes.Contains(line, []byte(`\u`))
	}
	for n := 0; n <= 40; n++ {
		fill := []byte(strings.Repeat("qu_ux sessio", 4)[:n])
		for i := 0; i <= n; i++ {
			for _, ins := range []string{"usage", "usag", "session_info", "ession_info", `\u`, `\`, "u", "_", "session_inf"} {
				line := append(append(append([]byte(nil), fill[:i]...), ins...), fill[i:]...)
				if got := mayCount(line); got != want(line) {
					t.Fatalf("%q: %v, want %v", line, got, want(line))
				}
			}
		}
	}
}
