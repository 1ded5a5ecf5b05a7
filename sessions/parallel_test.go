package sessions

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
)

// parseIn parses data as Parse does, in the given number of pieces (1: line
// by line, in sequence).
func parseIn(data []byte, pieces int) (*Log, error) {
	l := &Log{pieces: func(int) int { return pieces }}
	if err := l.consume(data, true); err != nil {
		return nil, err
	}
	l.size = int64(len(data))
	return l, nil
}

// sameEntry compares every field; NaN equals NaN.
func sameEntry(a, b *Entry) bool {
	x, y := *a, *b
	if math.IsNaN(x.Time) && math.IsNaN(y.Time) {
		x.Time, y.Time = 0, 0
	}
	return reflect.DeepEqual(x, y)
}

func sameHeader(a, b *Header) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	if math.IsNaN(x.Version) && math.IsNaN(y.Version) {
		x.Version, y.Version = 0, 0
	}
	return reflect.DeepEqual(x, y)
}

// diffLogs describes how two logs of the same bytes differ ("" when they
// do not): entries field by field, and all the state a later Refresh
// starts from.
func diffLogs(a, b *Log) string {
	if !sameHeader(a.Header, b.Header) {
		return fmt.Sprintf("header %+v, want %+v", b.Header, a.Header)
	}
	if len(a.Entries) != len(b.Entries) {
		return fmt.Sprintf("%d entries, want %d", len(b.Entries), len(a.Entries))
	}
	for i := range a.Entries {
		if !sameEntry(a.Entries[i], b.Entries[i]) {
			return fmt.Sprintf("entry %d:\n%+v\nwant\n%+v", i, *b.Entries[i], *a.Entries[i])
		}
	}
	state := func(l *Log) string {
		byID := map[int]string{}
		for seq, e := range l.rawByID {
			byID[seq] = e.ID
		}
		return fmt.Sprintf("migrated %v size %d consumed %d tail %q provisional %d sum %x pend %x seq %d used %v last %q rawByID %v",
			l.Migrated, l.size, l.consumed, l.tail, l.provisional, l.sum, l.pendSum, l.seq, l.usedIDs, l.lastID, byID)
	}
	if sa, sb := state(a), state(b); sa != sb {
		return fmt.Sprintf("state\n%s\nwant\n%s", sb, sa)
	}
	return ""
}

// checkPieces parses data line by line and in several numbers of pieces,
// and fails when any result differs.
func checkPieces(t *testing.T, name string, data []byte, pieces ...int) {
	t.Helper()
	want, werr := parseIn(data, 1)
	for _, n := range pieces {
		got, err := parseIn(data, n)
		if err != werr {
			t.Fatalf("%s in %d pieces: error %v, want %v", name, n, err, werr)
		}
		if err != nil {
			continue
		}
		if d := diffLogs(want, got); d != "" {
			t.Fatalf("%s in %d pieces: %s", name, n, d)
		}
	}
}

// corpusInput decodes a file of Go's fuzz corpus: its first []byte value.
func corpusInput(b []byte) ([]byte, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(line, "[]byte("); ok {
			v, err := strconv.Unquote(strings.TrimSuffix(s, ")"))
			return []byte(v), err == nil
		}
	}
	return nil, false
}

func TestParallelFixtures(t *testing.T) {
	var files []string
	for _, pat := range []string{"../testdata/*/*.jsonl", "../testdata/*/*/*.jsonl", "testdata/fuzz/*/*", "../tree/testdata/fuzz/*/*"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d fixtures found", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(f, "fuzz") {
			if b, ok := corpusInput(b); ok {
				checkPieces(t, f, b, 2, 3, 5, 64)
			}
			continue
		}
		checkPieces(t, f, b, 2, 3, 5, 64)
	}
}

// variant rewrites a generated session's lines: header gives the first
// line (dropped when ""), and each entry line i (from 1) goes through fn.
func variant(t *testing.T, header string, fn func(i int, line string) []string) []byte {
	var buf bytes.Buffer
	if err := gen.Session(&buf, 1500, 400); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	var out []string
	if header != "" {
		out = append(out, header)
	}
	for i, line := range lines[1:] {
		out = append(out, fn(i+1, line)...)
	}
	return []byte(strings.Join(out, "\n"))
}

// damage adds what pi skips or keeps but does not show: blank, malformed
// and non-object lines, and later header lines.
func damage(i int, line string) []string {
	switch i % 13 {
	case 1:
		return []string{"", line}
	case 2:
		return []string{line, `{"type":"message","id":"broken"`}
	case 3:
		return []string{"  \t", line, "5", "[]", "null", "false", `"s"`, "[1,2]"}
	case 4:
		return []string{line, `{"type":"session","version":3,"id":"later","cwd":"/x"}`}
	case 5:
		return []string{" " + line + " "}
	case 6:
		return []string{line, "{}", `{"id":5,"parentId":{"a":1}}`}
	}
	return []string{line}
}

func TestParallelGenerated(t *testing.T) {
	v3 := variant(t, hdr, func(_ int, line string) []string { return []string{line} })
	cases := map[string][]byte{
		"v3":            append(bytes.Clone(v3), '\n'),
		"v3 unfinished": v3,
		"v3 damaged":    variant(t, hdr, damage),
		"v2": variant(t, `{"type":"session","version":2,"id":"v2","cwd":"/x"}`, func(i int, line string) []string {
			if i%7 == 0 {
				line = strings.Replace(line, `"role":"user"`, `"role":"hookMessage"`, 1)
			}
			return damage(i, line)
		}),
		"v1": variant(t, `{"type":"session","id":"v1","cwd":"/x"}`, func(i int, line string) []string {
			if i%50 == 0 {
				return []string{fmt.Sprintf(`{"type":"compaction","summary":"s","firstKeptEntryIndex":%d}`, i-20), line}
			}
			return damage(i, line)
		}),
		"late header":   variant(t, "\n\n{oops\nnull\n0\n"+hdr, damage),
		"no header":     variant(t, "", damage),
		"blank then no": variant(t, "\n\n5", damage),
	}
	if len(cases["v3"]) < 2*parallelMin {
		t.Fatalf("generated session of %d bytes is too small to be parsed in pieces", len(cases["v3"]))
	}
	for name, data := range cases {
		checkPieces(t, name, data, 2, 3, 7, 1000)
		got, err := Parse(data) // in as many pieces as it would be
		want, werr := parseIn(data, 1)
		if err != werr {
			t.Fatalf("%s: error %v, want %v", name, err, werr)
		}
		if err == nil {
			if d := diffLogs(want, got); d != "" {
				t.Fatalf("%s: %s", name, d)
			}
		}
		switch name {
		case "no header", "blank then no":
			if err != ErrNotSession {
				t.Errorf("%s: error %v, want ErrNotSession", name, err)
			}
		default:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else if len(want.Entries) < 1500 {
				t.Errorf("%s: %d entries", name, len(want.Entries))
			}
		}
	}
}

// TestParallelRefresh reads a file as it grows, in large steps that end
// inside a line, in pieces and line by line, and compares the two.
func TestParallelRefresh(t *testing.T) {
	data := variant(t, `{"type":"session","version":2,"id":"v2","cwd":"/x"}`, damage)
	dir := t.TempDir()
	logs := map[int]*Log{}
	for _, n := range []int{1, 3} {
		p := filepath.Join(dir, strconv.Itoa(n))
		writeFile(t, p, "")
		logs[n] = &Log{Path: p, pieces: func(int) int { return n }}
	}
	for _, cut := range []int{len(data) / 3, len(data) / 2, len(data)/2 + 1, len(data) - 1, len(data)} {
		for n, l := range logs {
			writeFileAt(t, l.Path, data[:cut])
			if _, err := l.Refresh(); err != nil {
				t.Fatalf("%d pieces, %d bytes: %v", n, cut, err)
			}
		}
		if d := diffLogs(logs[1], logs[3]); d != "" {
			t.Fatalf("after %d bytes: %s", cut, d)
		}
	}
	whole, _ := parseIn(data, 1)
	if len(whole.Entries) != len(logs[3].Entries) {
		t.Fatalf("read as it grew: %d entries, at once %d", len(logs[3].Entries), len(whole.Entries))
	}
}

// writeFileAt makes path hold data, which extends what it holds, by
// appending the rest (a growing file keeps its inode).
func writeFileAt(t *testing.T, path string, data []byte) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, old) {
		t.Fatalf("%s does not grow into the data: %v", path, err)
	}
	appendFile(t, path, string(data[len(old):]))
}
