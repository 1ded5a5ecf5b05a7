package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
)

// The events files without a kernel: the lines a change gives, their
// bounds, and reads that wait.

const evHeader = `{"type":"session","version":3,"id":"sid-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`

// fixture is a store's index and its hub.
type fixture struct {
	x *sessions.Index
	h *Hub
}

// evStore is a store with one session, and the session file.
func evStore(t *testing.T) (*fixture, string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	path := filepath.Join(dir, "p", "s.jsonl")
	os.WriteFile(path, []byte(evHeader+"\n"), 0o644)
	x := sessions.NewIndex(dir)
	x.All()
	return &fixture{x, NewHub(x)}, path
}

// open opens the events of a project ("": the store), which the index
// has read, as the mount does.
func (v *fixture) open(project string) *Reader {
	if project == "" {
		v.x.All()
	} else {
		v.x.Sessions(project)
	}
	return v.h.Open(project, 0, nil)
}

// appendLines appends lines to path as one write and publishes what the
// index finds, as the watcher would.
func appendLines(t *testing.T, v *fixture, path string, lines ...string) {
	t.Helper()
	var bs [][]byte
	for _, l := range lines {
		bs = append(bs, []byte(l))
	}
	if err := sessions.Append(path, bs...); err != nil {
		t.Fatal(err)
	}
	v.h.Publish(v.x.Update(path))
}

// readLines reads what r has now, as decoded lines.
func readLines(t *testing.T, r *Reader) []map[string]any {
	t.Helper()
	var all []byte
	for off := int64(0); ; {
		if off >= r.Size() {
			break
		}
		b, err := r.Read(context.Background(), off, 4096)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
		off += int64(len(b))
	}
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSuffix(all, []byte("\n")), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

func TestEventLines(t *testing.T) {
	v, path := evStore(t)
	r := v.open("")
	defer r.Close()
	appendLines(t, v, path,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],"provider":"prov","model":"m1","stopReason":"toolUse","usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"cost":{"total":0.25}}}}`,
	)
	appendLines(t, v, path,
		`{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[],"isError":true}}`,
		`{"type":"session_info","id":"n1","parentId":"t1","timestamp":"2026-01-01T00:00:04.000Z","name":"  named  "}`,
		`{"type":"custom","id":"l1","parentId":"u1","timestamp":"2026-01-01T00:00:05.000Z","customType":"pifs.leaf"}`,
		`{"type":"message","id":"a2","parentId":"l1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"assistant","content":[],"stopReason":"error"}}`,
	)
	f, _ := v.x.Lookup("p", "s")
	v.h.Publish([]sessions.Change{{Project: "p", Name: "s", Old: f, New: f}})
	got := readLines(t, r)
	want := []string{"open", "append u1 user working", "append a1 assistant working", "append t1 toolResult working",
		"named n1", "leaf l1", "append a2 assistant error"}
	var saw []string
	for _, l := range got {
		s := fmt.Sprint(l["event"])
		for _, k := range []string{"id", "role", "status"} {
			if l[k] != nil {
				s += " " + fmt.Sprint(l[k])
			}
		}
		saw = append(saw, s)
	}
	if strings.Join(saw, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(saw, "\n"), strings.Join(want, "\n"))
	}
	a1 := got[2]
	if a1["path"] != "p/s" || a1["sessionId"] != "sid-1" || a1["stopReason"] != "toolUse" || a1["model"] != "m1" ||
		a1["provider"] != "prov" || a1["cost"] != 0.25 || fmt.Sprint(a1["tools"]) != "[bash]" ||
		fmt.Sprint(a1["tokens"]) != "map[cacheRead:1 cacheWrite:2 input:10 output:5 total:18]" || a1["parentId"] != "u1" {
		t.Errorf("assistant line %v", a1)
	}
	if got[3]["tool"] != "bash" || got[3]["isError"] != true {
		t.Errorf("tool result line %v", got[3])
	}
	if got[4]["name"] != "named" || got[5]["leaf"] != "u1" {
		t.Errorf("named %v, leaf %v", got[4], got[5])
	}
}

// A new session is "created" with its entries (pi writes a session's file
// at its first answer); a fork only says where from; a removed one goes.
func TestEventSessions(t *testing.T) {
	v, path := evStore(t)
	r := v.open("p")
	defer r.Close()
	dir := filepath.Dir(path)
	os.Mkdir(filepath.Join(dir, "..", "q"), 0o755)
	v.x.Update(filepath.Dir(dir))
	other := v.open("q") // another project's: sees none of it
	defer other.Close()
	newPath := filepath.Join(dir, "n.jsonl")
	os.WriteFile(newPath, []byte(`{"type":"session","version":3,"id":"sid-2","cwd":"/w"}`+"\n"+
		`{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"hi"}}`+"\n"), 0o644)
	v.h.Publish(v.x.Update(newPath))
	forkPath := filepath.Join(dir, "f.jsonl")
	os.WriteFile(forkPath, []byte(`{"type":"session","version":3,"id":"sid-3","cwd":"/w","parentSession":"`+path+`"}`+"\n"+
		`{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"hi"}}`+"\n"), 0o644)
	v.h.Publish(v.x.Update(forkPath))
	os.Remove(newPath)
	v.h.Publish(v.x.Update(newPath))
	got := readLines(t, r)
	var saw []string
	for _, l := range got {
		saw = append(saw, fmt.Sprint(l["event"], " ", l["path"], " ", l["parent"], " ", l["entries"]))
	}
	want := "open <nil> <nil> <nil>|created p/n <nil> <nil>|append p/n <nil> <nil>|forked p/f p/s 1|removed p/n <nil> <nil>"
	if strings.Join(saw, "|") != want {
		t.Errorf("lines %s\nwant  %s", strings.Join(saw, "|"), want)
	}
	if n := len(readLines(t, other)); n != 1 {
		t.Errorf("another project's events gave %d lines, want the open line only", n)
	}
}

// A reader that never reads holds a bounded queue, and is told what it
// missed; the lines it gets are in order.
func TestEventQueueBound(t *testing.T) {
	v, path := evStore(t)
	r := v.open("")
	defer r.Close()
	const n = (eventQueueLines/100 + 5) * 100
	parent := "null"
	for i := 0; i < n; i += 100 {
		var lines []string
		for j := i; j < i+100; j++ {
			lines = append(lines, fmt.Sprintf(`{"type":"label","id":"e%d","parentId":%s,"targetId":"x","label":"l"}`, j, parent))
			parent = fmt.Sprintf(`"e%d"`, j)
		}
		appendLines(t, v, path, lines...)
	}
	st := v.h.Stats()
	if st.MaxQueued > eventQueueLines || st.Missed == 0 {
		t.Fatalf("stats %+v: the queue is not bounded at %d lines", st, eventQueueLines)
	}
	got := readLines(t, r)
	missed, seen, last := 0, 0, -1
	for _, l := range got {
		switch l["event"] {
		case Missed:
			missed += int(l["count"].(float64))
		case Append:
			var k int
			fmt.Sscanf(l["id"].(string), "e%d", &k)
			if k <= last {
				t.Fatalf("e%d after e%d", k, last)
			}
			last = k
			seen++
		}
	}
	if missed == 0 || missed+seen != n || last != n-1 {
		t.Errorf("missed %d + read %d != %d written (last e%d)", missed, seen, n, last)
	}
}

// Nothing is read of the store for events while no one reads them.
func TestEventsIdleReadsNothing(t *testing.T) {
	v, path := evStore(t)
	appendLines(t, v, path, `{"type":"label","id":"e1","parentId":null,"targetId":"x","label":"l"}`)
	if st := v.h.Stats(); st.Scanned != 0 || st.Lines != 0 {
		t.Errorf("with no reader: %+v", st)
	}
	r := v.open("")
	r.Close()
	appendLines(t, v, path, `{"type":"label","id":"e2","parentId":"e1","targetId":"x","label":"l"}`)
	if st := v.h.Stats(); st.Scanned != 0 || st.Readers != 0 {
		t.Errorf("after the reader closed: %+v", st)
	}
}

// A read with nothing there waits for the next line or for its reader to
// give up; past maxBlockedReads, reads return at once with nothing.
func TestEventReadsWait(t *testing.T) {
	v, path := evStore(t)
	r := v.open("")
	defer r.Close()
	end := r.Size()
	got := make(chan []byte)
	go func() {
		b, _ := r.Read(context.Background(), end, 4096)
		got <- b
	}()
	waitFor(t, func() bool { return v.h.Stats().Blocked == 1 })
	appendLines(t, v, path, `{"type":"label","id":"e1","parentId":null,"targetId":"x","label":"l"}`)
	if b := <-got; !bytes.Contains(b, []byte(`"id":"e1"`)) {
		t.Fatalf("the waiting read got %q", b)
	}
	end = r.Size()

	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, maxBlockedReads)
	readers := make([]*Reader, maxBlockedReads)
	for i := range readers {
		readers[i] = v.open("")
		defer readers[i].Close()
		rd := readers[i]
		go func() {
			_, err := rd.Read(ctx, rd.Size(), 4096)
			errs <- err
		}()
	}
	waitFor(t, func() bool { return v.h.Stats().Blocked == maxBlockedReads })
	if b, err := r.Read(context.Background(), end, 4096); len(b) != 0 || err != nil {
		t.Errorf("a read past the bound gave %q, %v; want nothing at once", b, err)
	}
	cancel()
	for range readers {
		if err := <-errs; err != context.Canceled {
			t.Errorf("an interrupted read returned %v", err)
		}
	}
	// The mount going away ends a waiting read.
	go func() {
		b, _ := r.Read(context.Background(), end, 4096)
		got <- b
	}()
	waitFor(t, func() bool { return v.h.Stats().Blocked == 1 })
	v.h.Close()
	if b := <-got; len(b) != 0 {
		t.Errorf("read after close: %q", b)
	}
}

// A reader that reads again what it was given (tail reads back from the
// size) gets the same bytes.
func TestEventOffsets(t *testing.T) {
	v, path := evStore(t)
	r := v.open("")
	defer r.Close()
	appendLines(t, v, path, `{"type":"label","id":"e1","parentId":null,"targetId":"x","label":"l"}`)
	size := r.Size()
	a, _ := r.Read(context.Background(), 0, int(size))
	b, _ := r.Read(context.Background(), 10, int(size))
	if int64(len(a)) != size || !bytes.Equal(a[10:], b) {
		t.Errorf("read again at 10: %q, want %q", b, a[10:])
	}
}

// waitFor waits until cond holds: what the test waits for is a goroutine
// reaching a state, never a time.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the condition never held")
		}
	}
}
