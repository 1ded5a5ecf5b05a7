package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pifs/pifs/events"
	"github.com/pifs/pifs/internal/fakemodel"
	"github.com/pifs/pifs/internal/oracle"
)

// The real pi CLI (pi -p) against internal/fakemodel, with the mount over
// pi's store: what pi writes shows in the mount, and what the mount's
// controls write is what pi sends the model next.

// piCLI starts a fake model server answering with script and an agent home
// whose store is mounted; it returns the server, the agent and the mount.
func piCLI(t *testing.T, script func(fakemodel.Request) fakemodel.Reply) (*fakemodel.Server, *oracle.Agent, string) {
	t.Helper()
	srv, err := fakemodel.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	a := oracle.NewAgent(t, srv.ModelsJSON(fakemodel.DefaultCosts()), fakemodel.Provider, fakemodel.Model)
	return srv, a, testMount(t, a.Sessions)
}

// twoTurns has pi answer "first", then "second" in the same session, in
// cwd, and returns the session's file.
func twoTurns(t *testing.T, a *oracle.Agent, cwd string) string {
	t.Helper()
	a.Print(t, cwd, "first")
	a.Print(t, cwd, "second", "--continue")
	files, _ := filepath.Glob(filepath.Join(a.Sessions, "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v, want one", files)
	}
	return files[0]
}

// ctxMessage is a message as role and text. A system message of
// context.json has its prompt in sections, which pi joins into the text it
// sends: Sections holds them.
type ctxMessage struct {
	Role, Text string
	Sections   []string
}

// contextMessages reads a context.json of the mount as roles and texts,
// with pi's roles named as the chat completions API names them.
func contextMessages(t *testing.T, path string) []ctxMessage {
	t.Helper()
	var ctx struct {
		Messages []struct {
			Role     string            `json:"role"`
			Content  json.RawMessage   `json:"content"`
			Sections map[string]string `json:"sections"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(readMount(t, path), &ctx); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []ctxMessage
	for _, m := range ctx.Messages {
		role := m.Role
		if role == "toolResult" {
			role = "tool"
		}
		c := ctxMessage{Role: role, Text: contentText(t, m.Content)}
		for _, sec := range m.Sections {
			c.Sections = append(c.Sections, sec)
		}
		out = append(out, c)
	}
	return out
}

// contentText is the text of a message content: a string, or its text
// parts joined by newlines.
func contentText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	if err := json.Unmarshal(raw, &parts); err != nil {
		t.Fatalf("content %s: %v", raw, err)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// requestMessages is the messages of a request pi sent, as roles and texts.
func requestMessages(t *testing.T, r fakemodel.Request) []ctxMessage {
	t.Helper()
	msgs, err := r.Messages()
	if err != nil {
		t.Fatal(err)
	}
	var out []ctxMessage
	for _, m := range msgs {
		out = append(out, ctxMessage{Role: m.Role, Text: m.Text})
	}
	return out
}

// sessionEntries are a session file's entries in file order.
func sessionEntries(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%s line %d: %v", file, i+1, err)
		}
		if i > 0 {
			out = append(out, e)
		}
	}
	return out
}

// sameMessages says how the messages pi sent differ from those of the
// context plus the prompt ("" when they match: same roles and texts in
// order; a system message's text holds each of its sections).
func sameMessages(sent, ctx []ctxMessage) string {
	if len(sent) != len(ctx) {
		return fmt.Sprintf("%d messages sent, context and prompt %d:\nsent %q\nctx  %q", len(sent), len(ctx), sent, ctx)
	}
	for i := range sent {
		s, c := sent[i], ctx[i]
		ok := s.Role == c.Role && (s.Text == c.Text || c.Role == "system" && c.Text == "" && len(c.Sections) > 0)
		for _, sec := range c.Sections {
			ok = ok && strings.Contains(s.Text, sec)
		}
		if !ok {
			return fmt.Sprintf("message %d: sent %s %q, context %s %q", i, s.Role, s.Text, c.Role, c.Text)
		}
	}
	return ""
}

// entryWith returns the id of the first message entry of role with text.
func entryWith(t *testing.T, entries []map[string]any, role, text string) string {
	t.Helper()
	for _, e := range entries {
		if m, ok := e["message"].(map[string]any); ok && m["role"] == role {
			if c, _ := json.Marshal(m["content"]); contentText(t, c) == text {
				return e["id"].(string)
			}
		}
	}
	t.Fatalf("no %s message %q", role, text)
	return ""
}

// TestPiCLIScriptedBranching: the everyday scripted branching with the
// real CLI. `echo ID^ > leaf`, `echo text > append`, then pi continuing the
// session sends the model exactly the messages of the mount's context.json
// (and its prompt), and chains its entries under the chosen leaf; the same
// after `echo ID > leaf`.
func TestPiCLIScriptedBranching(t *testing.T) {
	srv, a, mnt := piCLI(t, fakemodel.Echo)
	cwd := t.TempDir()
	file := twoTurns(t, a, cwd)
	dir := filepath.Join(mnt, filepath.Base(filepath.Dir(file)), strings.TrimSuffix(filepath.Base(file), ".jsonl"))
	entries := sessionEntries(t, file)
	u1 := entryWith(t, entries, "user", "first")
	a1 := entryWith(t, entries, "assistant", "echo: first")
	u2 := entryWith(t, entries, "user", "second")

	// turn runs pi on the session with prompt and checks what it sent and
	// where its entries went; it returns the entries after.
	turn := func(prompt string) []map[string]any {
		t.Helper()
		before := sessionEntries(t, file)
		want := append(contextMessages(t, filepath.Join(dir, "context.json")), ctxMessage{Role: "user", Text: prompt})
		n := len(srv.Requests())
		if out := a.Print(t, cwd, prompt, "--session", file); out != "echo: "+prompt+"\n" {
			t.Errorf("pi printed %q", out)
		}
		reqs := srv.Requests()
		if len(reqs) != n+1 {
			t.Fatalf("%d requests for one turn", len(reqs)-n)
		}
		if d := sameMessages(requestMessages(t, reqs[n]), want); d != "" {
			t.Errorf("%s: pi did not send the mount's context: %s", prompt, d)
		}
		after := sessionEntries(t, file)
		if len(after) <= len(before) {
			t.Fatalf("%s: pi wrote nothing", prompt)
		}
		parent := before[len(before)-1]["id"]
		for _, e := range after[len(before):] {
			if e["parentId"] != parent {
				t.Errorf("%s: pi's entry %v has parent %v, want %v", prompt, e["id"], e["parentId"], parent)
			}
			parent = e["id"]
		}
		eventually(t, "leaf after pi's turn", func() (bool, string) {
			b, _ := os.ReadFile(filepath.Join(dir, "leaf"))
			return strings.TrimSpace(string(b)) == parent, string(b)
		})
		return after
	}

	// pi's "select a user message" in /tree, then a new user message.
	if err := writeControl(filepath.Join(dir, "leaf"), u2+"^\n"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(readMount(t, filepath.Join(dir, "leaf")))); got != a1 {
		t.Fatalf("leaf %q after %s^, want %s", got, u2, a1)
	}
	if err := writeControl(filepath.Join(dir, "append"), "try B\n"); err != nil {
		t.Fatal(err)
	}
	entries = sessionEntries(t, file)
	b := entryWith(t, entries, "user", "try B")
	got := contextMessages(t, filepath.Join(dir, "context.json"))
	if len(got) != 4 || got[1].Text != "first" || got[2].Text != "echo: first" || got[3].Text != "try B" {
		t.Fatalf("context.json before the turn: %q", got)
	}
	after := turn("go on")
	if after[len(entries)]["parentId"] != b {
		t.Errorf("pi's turn is not under the appended message")
	}

	// A plain id: the leaf at the user message itself.
	if err := writeControl(filepath.Join(dir, "leaf"), u1+"\n"); err != nil {
		t.Fatal(err)
	}
	entries = sessionEntries(t, file)
	if rec := entries[len(entries)-1]; rec["parentId"] != u1 {
		t.Fatalf("the leaf record %v is not under %s", rec, u1)
	}
	if got := contextMessages(t, filepath.Join(dir, "context.json")); len(got) != 2 || got[1].Text != "first" {
		t.Fatalf("context.json at %s: %q", u1, got)
	}
	turn("third")
}

// TestPiCLIEvents: while the store's events and a project's are read, real
// pi -p turns run in three sessions, two or three at once: one made through
// the mount's new, one after `echo ID > leaf`, one made by pi. Every entry
// in the files appears in events, in order per session, none lost or
// doubled, with pi's stopReason, model, tokens and cost, and each session's
// info.json says it waits for the user.
func TestPiCLIEvents(t *testing.T) {
	_, a, mnt := piCLI(t, fakemodel.Echo)
	cwdA, cwdB, cwdC := t.TempDir(), t.TempDir(), t.TempDir()
	all := followLines(t, "cat", filepath.Join(mnt, "events"))
	all.waitLines(t, "events", 1, events.Open)

	created, err := forkThrough(filepath.Join(mnt, "new"), cwdA+"\n")
	if err != nil {
		t.Fatal(err)
	}
	projA := strings.Split(created, "/")[0]
	fileA := filepath.Join(a.Sessions, created+".jsonl")
	proj := followLines(t, "cat", filepath.Join(mnt, projA, "events"))
	proj.waitLines(t, projA+"/events", 1, events.Open)

	// together runs pi turns at once: {cwd, prompt, args...}.
	together := func(turns ...[]string) {
		t.Helper()
		var wg sync.WaitGroup
		for _, tu := range turns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := a.Run(tu[0], tu[1], tu[2:]...)
				if err != nil {
					t.Error(err)
				} else if out != "echo: "+tu[1]+"\n" {
					t.Errorf("pi printed %q for %q", out, tu[1])
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	together([]string{cwdA, "a one", "--session", fileA}, []string{cwdB, "b one"}, []string{cwdC, "c one"})
	one := func(cwd string) string {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(a.Sessions, "*", "*.jsonl"))
		for _, f := range files {
			if sessionCwd(t, f) == cwd {
				return f
			}
		}
		t.Fatalf("no session of %s in %v", cwd, files)
		return ""
	}
	fileB, fileC := one(cwdB), one(cwdC)
	pathOf := func(file string) string {
		return strings.TrimSuffix(strings.TrimPrefix(file, a.Sessions+"/"), ".jsonl")
	}
	ub := entryWith(t, sessionEntries(t, fileB), "user", "b one")
	if err := writeControl(filepath.Join(mnt, pathOf(fileB), "leaf"), ub+"\n"); err != nil {
		t.Fatal(err)
	}
	together([]string{cwdA, "a two", "--continue"}, []string{cwdB, "b two", "--session", fileB})

	files := []string{fileA, fileB, fileC}
	want := map[string][]map[string]any{}
	total := 0
	for _, f := range files {
		want[pathOf(f)] = sessionEntries(t, f)
		total += len(want[pathOf(f)])
	}
	check := func(name string, f *lineFollower, paths []string, wantCreated int) {
		n := 0
		for _, p := range paths {
			n += len(want[p])
		}
		lines := f.waitLines(t, name, n, events.Append, events.Named, events.Leaf)
		got := map[string][]map[string]any{}
		createdLines := 0
		for _, l := range lines {
			switch l["event"] {
			case events.Created:
				createdLines++
			case events.Append, events.Named, events.Leaf:
				got[l["path"].(string)] = append(got[l["path"].(string)], l)
			case events.Open:
			default:
				t.Errorf("%s: unexpected line %v", name, l)
			}
		}
		if createdLines != wantCreated {
			t.Errorf("%s: %d created lines, want %d", name, createdLines, wantCreated)
		}
		if len(got) != len(paths) {
			t.Errorf("%s: lines of %d sessions, want %d", name, len(got), len(paths))
		}
		for _, p := range paths {
			ws, gs := want[p], got[p]
			wantIDs, gotIDs := eventIDs(ws), eventIDs(gs)
			if strings.Join(gotIDs, " ") != strings.Join(wantIDs, " ") {
				t.Errorf("%s: %s:\ngot  %v\nwant %v", name, p, gotIDs, wantIDs)
				continue
			}
			for i, w := range ws {
				g := gs[i]
				if g["type"] != w["type"] {
					t.Errorf("%s: %s %s: type %v, file %v", name, p, w["id"], g["type"], w["type"])
				}
				m, _ := w["message"].(map[string]any)
				if m == nil {
					continue
				}
				if g["role"] != m["role"] {
					t.Errorf("%s: %s %s: role %v, file %v", name, p, w["id"], g["role"], m["role"])
				}
				if m["role"] != "assistant" {
					continue
				}
				u := m["usage"].(map[string]any)
				tok, _ := g["tokens"].(map[string]any)
				gotA := fmt.Sprint(g["stopReason"], g["provider"], g["model"], g["cost"], tok["input"], tok["output"], tok["cacheRead"], tok["cacheWrite"], tok["total"])
				wantA := fmt.Sprint(m["stopReason"], m["provider"], m["model"], u["cost"].(map[string]any)["total"], u["input"], u["output"], u["cacheRead"], u["cacheWrite"], u["totalTokens"])
				if gotA != wantA {
					t.Errorf("%s: %s %s: stopReason provider model cost tokens\ngot  %s\nwant %s", name, p, w["id"], gotA, wantA)
				}
			}
		}
	}
	// The store's: the session made through new was created before pi ran
	// in it, the two pi made are created by their first turn.
	check("events", all, []string{pathOf(fileA), pathOf(fileB), pathOf(fileC)}, 3)
	check(projA+"/events", proj, []string{pathOf(fileA)}, 0)

	for _, f := range files {
		var info struct{ Status string }
		if err := json.Unmarshal(readMount(t, filepath.Join(mnt, pathOf(f), "info.json")), &info); err != nil {
			t.Fatal(err)
		}
		if info.Status != "waiting" {
			t.Errorf("%s: status %q after pi's turn, want waiting", pathOf(f), info.Status)
		}
	}
}

// sessionCwd is the cwd of a session file's header.
func sessionCwd(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Cwd string }
	line, _, _ := strings.Cut(string(b), "\n")
	json.Unmarshal([]byte(line), &h)
	return h.Cwd
}
