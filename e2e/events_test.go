package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/events"
	"github.com/pifs/pifs/fs"
)

// The events files and active/ through the kernel, with real readers (cat,
// tail -f) and pi's own SessionManager writing.

// lineFollower runs a command that reads an events file until the test stops
// it, and collects its lines.
type lineFollower struct {
	cmd      *exec.Cmd
	out, err output
}

func followLines(t *testing.T, name string, args ...string) *lineFollower {
	t.Helper()
	f := &lineFollower{cmd: exec.Command(name, args...)}
	f.cmd.Stdout = &f.out
	f.cmd.Stderr = &f.err
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.stop)
	return f
}

func (f *lineFollower) stop() {
	if f.cmd.ProcessState == nil {
		syscall.Kill(-f.cmd.Process.Pid, syscall.SIGTERM)
		f.cmd.Wait()
	}
}

// lines are the JSON lines read so far.
func (f *lineFollower) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(f.out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// waitLines waits until the follower read n lines of the given event kinds
// and returns its lines.
func (f *lineFollower) waitLines(t *testing.T, what string, n int, kinds ...string) []map[string]any {
	t.Helper()
	var got int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = 0
		for _, l := range f.lines(t) {
			for _, k := range kinds {
				if l["event"] == k {
					got++
				}
			}
		}
		if got >= n || time.Now().After(deadline) {
			break
		}
	}
	if got != n {
		t.Errorf("%s: %d lines of %v, want %d (stderr: %s)", what, got, kinds, n, f.err.String())
	}
	return f.lines(t)
}

// smWriter is a node script: each process writes several sessions with
// pi's SessionManager at once, a turn at a time in each in turn, and prints
// every entry it appended.
const smWriter = `
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
const { SessionManager } = await import(pathToFileURL(join(process.env.PIFS_ORACLE_DIR,
  "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href);
const [store, tag, nSessions, rounds] = process.argv.slice(2);
const sms = [];
for (let i = 0; i < +nSessions; i++) {
  const cwd = "/w/" + (i % 2 ? "b" : "a");
  const dir = join(store, "--w-" + (i % 2 ? "b" : "a") + "--");
  mkdirSync(dir, { recursive: true });
  sms.push(SessionManager.create(cwd, dir));
}
const say = (sm, id, e) => console.log(JSON.stringify({ file: sm.getSessionFile(), id, ...e }));
const usage = (c) => ({ input: 10, output: 5, cacheRead: 2, cacheWrite: 1, totalTokens: 18,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: c } });
for (let r = 0; r < +rounds; r++) {
  for (const [i, sm] of sms.entries()) {
    const u = sm.appendMessage({ role: "user", content: [{ type: "text", text: tag + " " + i + " round " + r }], timestamp: Date.now() });
    say(sm, u, { type: "message", role: "user" });
    const a = sm.appendMessage({ role: "assistant", content: [{ type: "toolCall", id: "c" + r, name: "read", arguments: {} }],
      provider: "fake", model: "m-" + tag, stopReason: "toolUse", usage: usage(0.125), timestamp: Date.now() });
    say(sm, a, { type: "message", role: "assistant", stopReason: "toolUse", model: "m-" + tag, cost: 0.125, tools: ["read"] });
    const t = sm.appendMessage({ role: "toolResult", toolCallId: "c" + r, toolName: "read", content: [{ type: "text", text: "x" }], isError: false, timestamp: Date.now() });
    say(sm, t, { type: "message", role: "toolResult", tool: "read" });
    const s = sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "done" }],
      provider: "fake", model: "m-" + tag, stopReason: r % 3 == 2 ? "aborted" : "stop", usage: usage(0.25), timestamp: Date.now() });
    say(sm, s, { type: "message", role: "assistant", stopReason: r % 3 == 2 ? "aborted" : "stop", model: "m-" + tag, cost: 0.25 });
    if (r == 1) {
      say(sm, sm.appendSessionInfo(tag + " session " + i), { type: "session_info" });
      say(sm, sm.appendLabelChange(u, "start"), { type: "label" });
      sm.branch(u); // pi's /tree: the next entry goes under u
    }
    await new Promise((res) => setTimeout(res, 2));
  }
}
`

// TestEventsSessionManager: several node processes write sessions at once
// with pi's SessionManager; the store's events (read by cat) and one
// project's give every entry written, in order per session, none lost,
// none doubled, with what pi wrote of it.
func TestEventsSessionManager(t *testing.T) {
	store := t.TempDir()
	_, mnt := mountFS(t, fs.Options{SessionsDir: store})
	os.Mkdir(filepath.Join(store, "--w-a--"), 0o755)
	all := followLines(t, "cat", filepath.Join(mnt, "events"))
	eventually(t, "the project folder", func() (bool, string) {
		_, err := os.Stat(filepath.Join(mnt, "--w-a--"))
		return err == nil, fmt.Sprint(err)
	})
	proj := followLines(t, "cat", filepath.Join(mnt, "--w-a--", "events"))
	waitOpen := func(f *lineFollower) {
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(f.out.String(), `"event":"open"`); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no open line")
			}
		}
	}
	waitOpen(all)
	waitOpen(proj)

	script := filepath.Join(t.TempDir(), "writer.mjs")
	os.WriteFile(script, []byte(smWriter), 0o644)
	const procs, perProc, rounds = 4, 3, 6
	var mu sync.Mutex
	var written []map[string]any
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := oracleCommand(t, script, store, fmt.Sprint("p", p), fmt.Sprint(perProc), fmt.Sprint(rounds)).Output()
			if err != nil {
				t.Errorf("writer %d: %v", p, err)
				return
			}
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				var m map[string]any
				json.Unmarshal(sc.Bytes(), &m)
				mu.Lock()
				written = append(written, m)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// What pi wrote, per session file, in order (each process printed its
	// own in order).
	want := map[string][]map[string]any{}
	inA := 0
	for _, w := range written {
		path := strings.TrimPrefix(strings.TrimSuffix(w["file"].(string), ".jsonl"), store+"/")
		want[path] = append(want[path], w)
		if strings.HasPrefix(path, "--w-a--/") {
			inA++
		}
	}
	if len(want) != procs*perProc {
		t.Fatalf("%d sessions written, want %d", len(want), procs*perProc)
	}
	check := func(name string, f *lineFollower, n int, only string) {
		lines := f.waitLines(t, name, n, events.Append, events.Named)
		got := map[string][]map[string]any{}
		created := 0
		for _, l := range lines {
			switch l["event"] {
			case events.Created:
				created++
				if len(got[l["path"].(string)]) > 0 {
					t.Errorf("%s: %s created after its entries", name, l["path"])
				}
			case events.Append, events.Named:
				got[l["path"].(string)] = append(got[l["path"].(string)], l)
			case events.Open:
			default:
				t.Errorf("%s: unexpected line %v", name, l)
			}
		}
		sessions := 0
		for path, ws := range want {
			if !strings.HasPrefix(path, only) {
				continue
			}
			sessions++
			gs := got[path]
			wantIDs, gotIDs := eventIDs(ws), eventIDs(gs)
			if strings.Join(gotIDs, " ") != strings.Join(wantIDs, " ") {
				t.Errorf("%s: %s:\ngot  %v\nwant %v", name, path, gotIDs, wantIDs)
				continue
			}
			for i, w := range ws {
				g := gs[i]
				for _, k := range []string{"type", "role", "stopReason", "model", "cost", "tool"} {
					if w[k] != nil && fmt.Sprint(g[k]) != fmt.Sprint(w[k]) {
						t.Errorf("%s: %s entry %s: %s %v, pi wrote %v", name, path, w["id"], k, g[k], w[k])
					}
				}
				if w["tools"] != nil && fmt.Sprint(g["tools"]) != fmt.Sprint(w["tools"]) {
					t.Errorf("%s: %s entry %s: tools %v, want %v", name, path, w["id"], g["tools"], w["tools"])
				}
			}
		}
		if created != sessions {
			t.Errorf("%s: %d created lines, want %d", name, created, sessions)
		}
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) != sessions {
			t.Errorf("%s: lines for %d sessions %v, want %d", name, len(keys), keys, sessions)
		}
	}
	check("events", all, len(written), "")
	check("--w-a--/events", proj, inA, "--w-a--/")
}

// TestEventsTailF: tail -f follows events through the real tail, which on
// FUSE polls the size with fstat and reads what it grew by.
func TestEventsTailF(t *testing.T) {
	store, _ := writeStore(t)
	mnt := testMount(t, store)
	tail := followLines(t, "tail", "-f", filepath.Join(mnt, "events"))
	tail.waitLines(t, "tail -f", 1, events.Open)
	ctl := filepath.Join(mnt, fixProject, fixSession, "append")
	for i := 0; i < 3; i++ {
		if err := os.WriteFile(ctl, []byte(fmt.Sprintf("message %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		tail.waitLines(t, "tail -f", i+1, events.Append)
	}
	lines := tail.lines(t)
	for i, l := range lines[1:] {
		if l["role"] != "user" || l["path"] != fixProject+"/"+fixSession || l["sessionId"] != fixID {
			t.Errorf("line %d: %v", i+1, l)
		}
	}
	// Another process's stat shows no size: the size is the reader's own.
	if fi, err := os.Stat(filepath.Join(mnt, "events")); err != nil || fi.Size() != 0 {
		t.Errorf("stat events: %v, %v", fi.Size(), err)
	}
}

// TestEventsStuckReaders: readers that never read, or read slowly, leave
// the mount responsive and their queues bounded; the slow one is told what
// it missed, in order; reads waiting at once are bounded.
func TestEventsStuckReaders(t *testing.T) {
	store, file := writeStore(t)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store})
	for i := 0; i < 3; i++ { // readers that never read: held open until the test ends
		f, err := os.Open(filepath.Join(mnt, "events"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	slow, err := os.Open(filepath.Join(mnt, fixProject, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// More lines than a queue holds, in batches the watcher sees apart.
	const n, batch = 3000, 250
	parent := "s1"
	for i := 0; i < n; i += batch {
		var b strings.Builder
		for j := i; j < i+batch; j++ {
			fmt.Fprintf(&b, `{"type":"label","id":"e%d","parentId":"%s","timestamp":"2024-01-01T00:00:07.000Z","targetId":"a1","label":"l"}`+"\n", j, parent)
			parent = fmt.Sprint("e", j)
		}
		appendLine(t, file, strings.TrimSuffix(b.String(), "\n"))
		// The mount answers while the readers sit.
		if _, err := os.ReadFile(filepath.Join(mnt, fixProject, fixSession, "leaf")); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "every line made", func() (bool, string) {
		st := m.Stats().Events
		return st.Lines >= n, fmt.Sprintf("%+v", st)
	})
	st := m.Stats().Events
	if st.MaxQueued > 2048 || st.Missed == 0 {
		t.Fatalf("stats %+v: queues not bounded", st)
	}
	// The slow reader reads now: the lines it kept, after a missed line.
	r := bufio.NewReader(slow)
	missed, seen, last := 0, 0, -1
	for missed+seen < n {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d+%d lines: %v", missed, seen, err)
		}
		var l map[string]any
		json.Unmarshal(line, &l)
		switch l["event"] {
		case events.Missed:
			missed += int(l["count"].(float64))
		case events.Append:
			var k int
			fmt.Sscanf(l["id"].(string), "e%d", &k)
			if k <= last {
				t.Fatalf("e%d after e%d", k, last)
			}
			last, seen = k, seen+1
		}
	}
	if missed == 0 || last != n-1 {
		t.Errorf("missed %d, read %d, last e%d", missed, seen, last)
	}

	// Reads waiting at once are bounded (docs/reference.md states the
	// bound): past it a read returns nothing (end of file) at once, and
	// the mount still answers.
	const maxBlockedReads = 32
	done := make(chan int, maxBlockedReads+8)
	for i := 0; i < maxBlockedReads+8; i++ {
		f, err := os.Open(filepath.Join(mnt, "events"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		go func() {
			br := bufio.NewReader(f)
			br.ReadBytes('\n') // the open line
			b, _ := br.ReadBytes('\n')
			done <- len(b)
		}()
	}
	early := 0
	for early < 8 {
		if n := <-done; n != 0 {
			t.Fatalf("a read got %d bytes while nothing changed", n)
		}
		early++
	}
	if b := m.Stats().Events.Blocked; b != maxBlockedReads {
		t.Errorf("%d reads wait, want %d", b, maxBlockedReads)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, fixProject, fixSession, "info.json")); err != nil {
		t.Fatal(err)
	}
	appendLine(t, file, `{"type":"label","id":"z1","parentId":"e2999","targetId":"a1","label":"z"}`)
	for i := 0; i < maxBlockedReads; i++ {
		if n := <-done; n == 0 {
			t.Error("a waiting read got nothing")
		}
	}
}

// TestActive: active/ lists the sessions written in the last ActiveWindow,
// newest first in ls -t, and info.json says what each agent is doing.
func TestActive(t *testing.T) {
	store, file := writeStore(t)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(file, old, old)
	other := filepath.Join(store, fixProject, "2024-02-01T00-00-00-000Z_aaaaaaaa-2222-3333-4444-555555555555.jsonl")
	os.WriteFile(other, []byte(`{"type":"session","version":3,"id":"aaaaaaaa-2222-3333-4444-555555555555","cwd":"/work/proj"}`+"\n"+
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2024-02-01T00:00:01.000Z","message":{"role":"user","content":"go"}}`+"\n"), 0o644)
	mnt := testMount(t, store)
	ls := func(dir string) string {
		out, err := exec.Command("ls", "-t", dir).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(out)), " ")
	}
	otherName := strings.TrimSuffix(filepath.Base(other), ".jsonl")
	if got := ls(filepath.Join(mnt, "active")); got != otherName {
		t.Errorf("active/: %q, want only %s", got, otherName)
	}
	status := func(name string) string {
		var info struct{ Status string }
		json.Unmarshal(readMount(t, filepath.Join(mnt, "active", name, "info.json")), &info)
		return info.Status
	}
	if s := status(otherName); s != "working" {
		t.Errorf("status after a user message: %q", s)
	}
	// The old session is written now: it comes in, first.
	ctl := filepath.Join(mnt, fixProject, fixSession, "append")
	time.Sleep(20 * time.Millisecond) // a later mtime than the other's
	os.WriteFile(ctl, []byte(`{"role":"assistant","content":[],"stopReason":"error","provider":"p","model":"m"}`+"\n"), 0o644)
	eventually(t, "active/ after a write", func() (bool, string) {
		got := ls(filepath.Join(mnt, "active"))
		return got == fixSession+" "+otherName, got
	})
	if got := ls(filepath.Join(mnt, fixProject, "active")); got != fixSession+" "+otherName {
		t.Errorf("the project's active/: %q", got)
	}
	if s := status(fixSession); s != "error" {
		t.Errorf("status after an assistant error: %q", s)
	}
	target, _ := os.Readlink(filepath.Join(mnt, "active", fixSession))
	if target != "../"+fixProject+"/"+fixSession {
		t.Errorf("link %q", target)
	}
}

// eventIDs are the ids of event lines, in order.
func eventIDs(lines []map[string]any) []string {
	var ids []string
	for _, l := range lines {
		ids = append(ids, l["id"].(string))
	}
	return ids
}
