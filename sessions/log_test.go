package sessions

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pifs/pifs/internal/jsjson"
)

const hdr = `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}`

func entryLine(id, parent string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"%s"}}`, id, p, id)
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func entryIDs(l *Log) []string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.ID)
	}
	return out
}

func TestIncremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, hdr+"\n"+entryLine("a", "")+"\n")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(l); fmt.Sprint(got) != "[a]" {
		t.Fatalf("entries %v", got)
	}
	first := l.Entries[0]

	// Growth: only new bytes are parsed; earlier entries stay the same objects.
	appendFile(t, path, entryLine("b", "a")+"\n")
	reset, err := l.Refresh()
	if err != nil || reset {
		t.Fatalf("refresh: reset=%v err=%v", reset, err)
	}
	if l.Entries[0] != first || fmt.Sprint(entryIDs(l)) != "[a b]" {
		t.Fatalf("after append: %v", entryIDs(l))
	}

	// A half-written line is held back until it is complete.
	line := entryLine("c", "b")
	appendFile(t, path, line[:20])
	if _, err := l.Refresh(); err != nil || len(l.Entries) != 2 {
		t.Fatalf("half line: %v %v", entryIDs(l), err)
	}
	appendFile(t, path, line[20:])
	// Complete but without newline: pi reads it, so does pifs (provisionally).
	if _, err := l.Refresh(); err != nil || fmt.Sprint(entryIDs(l)) != "[a b c]" {
		t.Fatalf("unterminated complete line: %v %v", entryIDs(l), err)
	}
	appendFile(t, path, "\n"+entryLine("d", "c")+"\n")
	reset, err = l.Refresh()
	if err != nil || fmt.Sprint(entryIDs(l)) != "[a b c d]" {
		t.Fatalf("after completing: %v %v", entryIDs(l), err)
	}
	if !reset {
		t.Error("replacing the provisional entry must be reported as a reset")
	}

	// Shrink: parse again.
	writeFile(t, path, hdr+"\n"+entryLine("x", "")+"\n")
	reset, err = l.Refresh()
	if err != nil || !reset || fmt.Sprint(entryIDs(l)) != "[x]" {
		t.Fatalf("after shrink: reset=%v %v %v", reset, entryIDs(l), err)
	}

	// Replaced by another file of greater size (rename over it): parse again.
	tmp := path + ".new"
	writeFile(t, tmp, hdr+"\n"+entryLine("y", "")+"\n"+entryLine("z", "y")+"\n")
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	reset, err = l.Refresh()
	if err != nil || !reset || fmt.Sprint(entryIDs(l)) != "[y z]" {
		t.Fatalf("after replace: reset=%v %v %v", reset, entryIDs(l), err)
	}

	// Rewritten in place, same inode, longer: the tail check catches it.
	writeFile(t, path, hdr+"\n"+entryLine("q", "")+"\n"+entryLine("r", "q")+"\n"+entryLine("s", "r")+"\n")
	reset, err = l.Refresh()
	if err != nil || !reset || fmt.Sprint(entryIDs(l)) != "[q r s]" {
		t.Fatalf("after rewrite: reset=%v %v %v", reset, entryIDs(l), err)
	}
}

func TestReadNeverWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	content := hdr + "\n" + entryLine("a", "") // no final newline: pi would add one
	writeFile(t, path, content)
	fi, _ := os.Stat(path)
	l, err := Open(path)
	if err != nil || len(l.Entries) != 1 {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi2, _ := os.Stat(path)
	if string(b) != content || !fi.ModTime().Equal(fi2.ModTime()) {
		t.Fatal("reading changed the file")
	}
}

func TestAppendAddsMissingNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, hdr+"\n"+entryLine("a", ""))
	if err := Append(path, []byte(entryLine("b", "a")), []byte(entryLine("c", "b"))); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := hdr + "\n" + entryLine("a", "") + "\n" + entryLine("b", "a") + "\n" + entryLine("c", "b") + "\n"
	if string(b) != want {
		t.Fatalf("file:\n%s", b)
	}
	if err := Append(path, []byte("two\nlines")); err == nil {
		t.Fatal("a line holding a newline must be refused")
	}
	if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) {
		t.Fatal("a refused append changed the file")
	}
}

func TestNotSession(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"empty":    "",
		"message":  entryLine("a", "") + "\n",
		"noid":     `{"type":"session","version":3}` + "\n",
		"bom":      "\ufeff" + hdr + "\n",
		"garbage":  "hello\n",
		"numberid": `{"type":"session","id":5}` + "\n",
	} {
		p := filepath.Join(dir, name)
		writeFile(t, p, content)
		if _, err := Open(p); err != ErrNotSession {
			t.Errorf("%s: err %v, want ErrNotSession", name, err)
		}
	}
	// Blank and malformed lines before the header are skipped, as pi does.
	p := filepath.Join(dir, "late")
	writeFile(t, p, "\n{oops\n"+hdr+"\n")
	if _, err := Open(p); err != nil {
		t.Errorf("header after blank and malformed lines: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(hdr + "\n" + entryLine("a", "") + "\n" + entryLine("b", "a")))
	f.Add([]byte(`{"type":"session","id":"x"}` + "\n" + `{"type":"compaction","firstKeptEntryIndex":0}` + "\n5\n[]\n"))
	f.Add([]byte(`{"type":"session","version":2,"id":"x"}` + "\n" + `{"type":"message","message":{"role":"hookMessage"}}`))
	// One folder for every input: a temporary folder per input costs more
	// than the rest of the input's checks.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		// Parsing in pieces on several cores gives what parsing line by
		// line does, error included.
		checkPieces(t, "input", data, 2, 3, 5)
		l, err := Parse(data)
		if err != nil {
			return
		}
		for _, e := range l.Entries {
			if d := fieldsAgainstGet(e); d != "" {
				t.Fatalf("entry %d %s: %s", e.Seq, e.Raw, d)
			}
		}
		// Parsing in two pieces (as a growing file is read) gives the same
		// entries as parsing at once, once the file is complete.
		cut := len(data) / 2
		path := filepath.Join(dir, "s.jsonl")
		writeFile(t, path, string(data[:cut]))
		inc := &Log{Path: path}
		if _, err := inc.Refresh(); err != nil {
			return
		}
		appendFile(t, path, string(data[cut:]))
		if _, err := inc.Refresh(); err != nil {
			return
		}
		if len(inc.Entries) != len(l.Entries) {
			t.Fatalf("incremental %d entries, whole %d", len(inc.Entries), len(l.Entries))
		}
		for i := range l.Entries {
			if !bytes.Equal(inc.Entries[i].Raw, l.Entries[i].Raw) || inc.Entries[i].ID != l.Entries[i].ID {
				t.Fatalf("entry %d differs: %s vs %s", i, inc.Entries[i].Raw, l.Entries[i].Raw)
			}
		}
	})
}

// fieldsAgainstGet compares the fields parseLine locates while it scans
// with what reading them from Raw by name gives ("" when all agree).
func fieldsAgainstGet(e *Entry) string {
	str := func(obj []byte, name string) string { s, _ := jsjson.Str(obj, name); return s }
	msg := jsjson.Get(e.Raw, "message")
	if e.Type != "message" {
		msg = nil
	}
	role := str(msg, "role")
	got := []any{e.Type, e.ID, e.ParentID, string(e.Timestamp), math.Float64bits(e.Time), e.Role,
		string(e.Msg), string(e.MsgContent), string(e.MsgModel), string(e.MsgProvider), string(e.MsgTimestamp), string(e.MsgUsage), string(e.MsgResponseModel)}
	want := []any{str(e.Raw, "type"), str(e.Raw, "id"), str(e.Raw, "parentId"), string(jsjson.Get(e.Raw, "timestamp")), math.Float64bits(jsjson.DateValue(jsjson.Get(e.Raw, "timestamp"))), role,
		string(msg), string(jsjson.Get(msg, "content")), string(jsjson.Get(msg, "model")), string(jsjson.Get(msg, "provider")), string(jsjson.Get(msg, "timestamp")), string(jsjson.Get(msg, "usage")), string(jsjson.Get(msg, "responseModel"))}
	if math.IsNaN(e.Time) && math.IsNaN(jsjson.DateValue(jsjson.Get(e.Raw, "timestamp"))) {
		got[4], want[4] = 0, 0
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("fields %q, by name %q", got, want)
	}
	return ""
}
