package e2e

// The seeded model-based test: random sequences of operations on
// a small store, through the mount and beside it, each followed by a
// comparison of every view of the sessions touched with what pi itself reads
// in their files (pi's SessionManager on a copy, internal/oracle/js/model.mjs).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/internal/names"
)

var (
	modelSeed   = flag.Int64("pifs.model.seed", 20261130, "seed of TestModel's random run")
	modelSteps  = flag.Int("pifs.model.steps", 0, "steps of TestModel's random run (default $PIFS_MODEL_STEPS, else 2000)")
	modelStrict = flag.Bool("pifs.model.strict", false, "run TestModel without tolerating known bugs (and run the seeds kept for them)")
	modelKeep   = flag.Bool("pifs.model.keep", false, "add a failing seed of TestModel to testdata/model/seeds.txt")
)

const (
	// modelSeedsFile holds the regression seeds: "SEED STEPS [# note]" a line.
	modelSeedsFile = "../testdata/model/seeds.txt"
	// modelMaxSessions bounds the sessions followed (a fork beyond it
	// replaces one).
	modelMaxSessions = 6
	// modelSettle is how long a view may take to show a change made beside
	// the mount (SPEC: within a second); it only bounds a poll.
	modelSettle = 3 * time.Second
)

// Sessions of the demo store (written by pi) the model starts from.
var modelStart = []string{
	"--home-user-proj--/2025-05-12T16-04-41-000Z_0196c53d-bdc0-70f4-96f8-c081d4d1f705.jsonl",
	"--home-user-proj--/2025-05-12T13-01-20-000Z_0196c495-e118-70f4-96f8-c076621dc7b0.jsonl",
	"--home-user-other--/2025-05-12T16-05-53-000Z_0196c53e-d700-70f4-96f8-c0833872d44a.jsonl",
}

func TestModel(t *testing.T) {
	steps := *modelSteps
	if steps == 0 {
		steps = 2000
		if s, err := strconv.Atoi(os.Getenv("PIFS_MODEL_STEPS")); err == nil && s > 0 {
			steps = s
		}
	}
	type run struct {
		seed  int64
		steps int
		note  string
	}
	var runs []run
	if data, err := os.ReadFile(modelSeedsFile); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			l, note, _ := strings.Cut(l, "#")
			f := strings.Fields(l)
			if len(f) != 2 {
				continue
			}
			seed, err1 := strconv.ParseInt(f[0], 10, 64)
			n, err2 := strconv.Atoi(f[1])
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: bad line %q", modelSeedsFile, l)
			}
			runs = append(runs, run{seed, n, strings.TrimSpace(note)})
		}
	}
	runs = append(runs, run{*modelSeed, steps, ""})
	for _, r := range runs {
		t.Run(fmt.Sprintf("seed=%d,steps=%d", r.seed, r.steps), func(t *testing.T) {
			if strings.HasPrefix(r.note, "known bug:") && !*modelStrict {
				t.Skip(r.note)
			}
			runModel(t, r.seed, r.steps)
		})
	}
}

// model is the store, the mount and the run's log.
type model struct {
	t        *testing.T
	seed     int64
	rng      *rand.Rand
	store    string
	mnt      string
	opts     fs.Options
	fs       *fs.FS
	pi       *piServer
	sessions []string // session files
	views    map[string]*piModel
	ops      []string
	stats    map[string]*[2]int // op → accepted, refused
	checks   int
	polls    int // comparisons repeated while a change beside the mount settled
}

func runModel(t *testing.T, seed int64, steps int) {
	start := time.Now()
	m := &model{t: t, seed: seed, rng: rand.New(rand.NewSource(seed)), views: map[string]*piModel{}, stats: map[string]*[2]int{}}
	m.store = t.TempDir()
	for _, s := range modelStart {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "demo", s))
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(m.store, s)
		os.MkdirAll(filepath.Dir(file), 0o755)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m.sessions = append(m.sessions, file)
	}
	m.pi = startPiServer(t)
	m.mnt = t.TempDir()
	m.opts = fs.Options{SessionsDir: m.store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	m.mount()
	t.Cleanup(func() {
		if m.fs != nil {
			if err := m.fs.Unmount(); err != nil {
				t.Errorf("unmount: %v", err)
			}
		}
	})
	for _, f := range m.sessions {
		m.compare(f, true)
	}
	for i := 0; i < steps; i++ {
		touched := m.step()
		for _, f := range touched {
			m.check(f)
		}
		if (i+1)%100 == 0 {
			for _, f := range m.sessions {
				m.compare(f, true)
			}
		}
	}
	var kinds []string
	for k := range m.stats {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var sb strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&sb, " %s %d/%d", k, m.stats[k][0], m.stats[k][1])
	}
	t.Logf("seed %d: %d steps, %d sessions followed, %d comparisons with pi (%d repeated while settling) in %v; accepted/refused:%s",
		seed, steps, len(m.sessions), m.checks, m.polls, time.Since(start).Round(time.Millisecond), sb.String())
}

func (m *model) mount() {
	fs, err := fs.Mount(m.mnt, m.opts)
	if err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			m.t.Fatalf("mount: %v", err)
		}
		m.t.Skipf("cannot mount FUSE: %v", err)
	}
	m.fs = fs
}

// fail stops the run with the seed and the steps so far.
func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	var sb strings.Builder
	for i, op := range m.ops {
		fmt.Fprintf(&sb, "  %4d %s\n", i+1, op)
	}
	if *modelKeep {
		f, err := os.OpenFile(modelSeedsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d %d # %.80s\n", m.seed, len(m.ops), strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " "))
			f.Close()
		}
	}
	strict := ""
	if *modelStrict {
		strict = " -pifs.model.strict"
	}
	m.t.Fatalf("model seed %d failed at step %d (rerun: go test ./fs -run 'TestModel' -pifs.model.seed=%d -pifs.model.steps=%d%s; keep it: -pifs.model.keep):\n%s\nsteps:\n%s",
		m.seed, len(m.ops), m.seed, len(m.ops), strict, fmt.Sprintf(format, args...), sb.String())
}

func (m *model) log(format string, args ...any) { m.ops = append(m.ops, fmt.Sprintf(format, args...)) }

func (m *model) count(op string, ok bool) {
	s := m.stats[op]
	if s == nil {
		s = &[2]int{}
		m.stats[op] = s
	}
	if ok {
		s[0]++
	} else {
		s[1]++
	}
}

// dir is a session file's folder in the mount.
func (m *model) dir(file string) string {
	rel, _ := filepath.Rel(m.store, file)
	return filepath.Join(m.mnt, strings.TrimSuffix(rel, ".jsonl"))
}

// check compares the session's views with pi's reading of its file, polling
// for modelSettle while they differ (a change beside the mount shows within
// a second), and remembers pi's view for the next step.
func (m *model) check(file string) { m.compare(file, false) }

// compare is check, with every entry file compared when deep.
func (m *model) compare(file string, deep bool) {
	m.t.Helper()
	m.checks++
	deadline := time.Now().Add(modelSettle)
	for {
		data, err := os.ReadFile(file)
		if err != nil {
			m.fail("read %s: %v", file, err)
		}
		p, err := newPiModel(m.pi.dump(file))
		if err != nil {
			m.fail("%s: %v", filepath.Base(file), err)
		}
		if now, _ := os.ReadFile(file); !bytes.Equal(now, data) {
			continue // changed while pi read it
		}
		d := compareViews(m.dir(file), data, p, deep)
		if len(d) == 0 {
			m.views[file] = p
			return
		}
		if time.Now().After(deadline) {
			if keep := os.Getenv("PIFS_MODEL_KEEP_FILE"); keep != "" {
				os.WriteFile(keep, data, 0o644)
			}
			m.fail("%s differs from pi after %v:\n  %s", filepath.Base(file), modelSettle, strings.Join(d, "\n  "))
		}
		m.polls++
		time.Sleep(10 * time.Millisecond)
	}
}

var modelWords = []string{"list", "the", "files", "fix", "bug", "in", "parser", "héllo", "wörld", "日本", "tab\there", "ok", "why?", "50%", "a/b", "..", "`code`", "\"quoted\"", "back\\slash", "emoji🙂"}

func (m *model) text() string {
	n := 1 + m.rng.Intn(6)
	w := make([]string, n)
	for i := range w {
		w[i] = modelWords[m.rng.Intn(len(modelWords))]
	}
	return strings.Join(w, " ")
}

func (m *model) pick(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[m.rng.Intn(len(ids))]
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// step applies one random operation and returns the session files it touched.
func (m *model) step() []string {
	file := m.sessions[m.rng.Intn(len(m.sessions))]
	name := filepath.Base(m.dir(file))
	p := m.views[file]
	dir := m.dir(file)
	var msgIDs []string // entries that are not leaf records
	for _, e := range p.entries {
		if id, ok := e.ID.(string); ok && !e.isLeafRecord() {
			msgIDs = append(msgIDs, id)
		}
	}
	var labels []string
	for _, l := range p.labels {
		labels = append(labels, l)
	}
	sort.Strings(labels)

	type weighted struct {
		w  int
		fn func() []string
	}
	ops := []weighted{
		{12, func() []string { // a user message as text
			text := m.text()
			if strings.HasPrefix(text, "{") {
				text = "x" + text
			}
			m.write("append-text", file, "append", text+"\n", true)
			return []string{file}
		}},
		{8, func() []string { // a message as JSON
			var msg map[string]any
			switch m.rng.Intn(3) {
			case 0:
				msg = map[string]any{"role": "user", "content": m.text()}
			case 1:
				msg = map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": m.text()}}}
			default:
				n := 1 + m.rng.Intn(1000)
				msg = map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": m.text()}},
					"api": "anthropic-messages", "provider": "anthropic", "model": "claude-model", "stopReason": "stop",
					"usage": map[string]any{"input": n, "output": 2 * n, "cacheRead": 0, "cacheWrite": 1, "totalTokens": 3*n + 1,
						"cost": map[string]any{"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}}}
			}
			m.write("append-json", file, "append", mustJSON(msg)+"\n", true)
			return []string{file}
		}},
		{10, func() []string { // a typed entry
			var e map[string]any
			switch m.rng.Intn(7) {
			case 0:
				e = map[string]any{"type": "model_change", "provider": "openai", "modelId": m.pick([]string{"gpt-a", "gpt-b"})}
			case 1:
				e = map[string]any{"type": "thinking_level_change", "thinkingLevel": m.pick([]string{"off", "low", "high"})}
			case 2:
				e = map[string]any{"type": "custom", "customType": "model.test", "data": map[string]any{"n": m.rng.Intn(100)}}
			case 3:
				e = map[string]any{"type": "custom_message", "customType": "model.note", "content": m.text(), "display": m.rng.Intn(2) == 0}
			case 4:
				if len(msgIDs) == 0 {
					return nil
				}
				e = map[string]any{"type": "label", "targetId": m.pick(msgIDs), "label": m.pick([]string{"good", "bad", "x/y", "v2"})}
			case 5:
				e = map[string]any{"type": "session_info", "name": m.text()}
			default:
				if len(msgIDs) == 0 {
					return nil
				}
				e = map[string]any{"type": "branch_summary", "parentId": m.pick(msgIDs), "summary": m.text()}
			}
			m.write("append-typed:"+e["type"].(string), file, "append", mustJSON(e)+"\n", true)
			return []string{file}
		}},
		{3, func() []string { // input the mount refuses
			bad := m.pick([]string{
				"{broken json\n",
				`{"type":"no_such_type"}` + "\n",
				`{"type":"label","targetId":"no-such-id","label":"x"}` + "\n",
				`{"type":"custom","customType":"x","id":"given"}` + "\n",
				`{"neither":"role nor type"}` + "\n",
			})
			m.write("append-bad", file, "append", bad, false)
			return []string{file}
		}},
		{3, func() []string { // one transaction: good lines, then a bad one
			m.write("append-txn-bad", file, "append", m.text()+"\n"+mustJSON(map[string]any{"role": "user", "content": m.text()})+"\n{broken\n", false)
			return []string{file}
		}},
		{2, func() []string { // one transaction of several good lines
			m.write("append-txn", file, "append", m.text()+"\n"+mustJSON(map[string]any{"type": "custom", "customType": "model.t", "data": 1})+"\n"+m.text(), true)
			return []string{file}
		}},
		{10, func() []string { // leaf moves: an id, a label, before the first entry
			to, want := "", ""
			switch r := m.rng.Intn(10); {
			case r < 7 && len(msgIDs) > 0:
				to = m.pick(msgIDs)
				want = to
			case r < 9 && len(labels) > 0:
				to = m.pick(labels)
				want = p.labelNames[to]
			}
			if m.write("leaf", file, "leaf", to+"\n", true) {
				if got := readFileString(filepath.Join(dir, "leaf")); got != want+"\n" {
					m.fail("leaf moved to %q reads %q, want %q", to, got, want)
				}
			}
			return []string{file}
		}},
		{2, func() []string {
			m.write("leaf-bad", file, "leaf", "no-such-entry\n", false)
			return []string{file}
		}},
		{5, func() []string { // ln -s <id> labels/NAME
			if len(msgIDs) == 0 {
				return nil
			}
			id, label := m.pick(msgIDs), m.pick([]string{"good", "bad", "v2", "todo", "x y"})
			_, taken := p.labelNames[label]
			m.log("%s: ln -s %s labels/%s", name, id, label)
			before, _ := os.ReadFile(file)
			err := os.Symlink(id, filepath.Join(dir, "labels", names.Encode(label)))
			m.count("label-set", err == nil)
			switch {
			case taken && !errors.Is(err, syscall.EEXIST):
				m.fail("ln -s %s over the existing labels/%s: %v, want EEXIST", id, label, err)
			case taken:
				if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
					m.fail("refused ln -s changed the file")
				}
			case err != nil:
				m.fail("ln -s %s labels/%s: %v", id, label, err)
			default:
				m.appendedOnly(file, before)
			}
			return []string{file}
		}},
		{3, func() []string { // rm labels/NAME
			if len(labels) == 0 {
				return nil
			}
			label := m.pick(labels)
			m.log("%s: rm labels/%s", name, label)
			before, _ := os.ReadFile(file)
			err := os.Remove(filepath.Join(dir, "labels", names.Encode(label)))
			m.count("label-rm", err == nil)
			if err != nil {
				m.fail("rm labels/%s: %v", label, err)
			}
			m.appendedOnly(file, before)
			return []string{file}
		}},
		{4, func() []string { // name
			text := ""
			if m.rng.Intn(4) > 0 {
				text = m.text()
			}
			m.write("name", file, "name", text+"\n", true)
			return []string{file}
		}},
		{4, func() []string { // fork, with and without cwd
			from, cwd, forkName := m.pick(msgIDs), "", ""
			var in string
			switch r := m.rng.Intn(3); {
			case r == 0 && from != "":
				in = from + "\n"
			case r == 2 && from != "":
				cwd, forkName = "/home/user/forked", m.text()
				in = mustJSON(map[string]any{"from": from, "cwd": cwd, "name": forkName}) + "\n"
			default:
				from, in = "", "\n"
			}
			m.log("%s: fork %q", name, in)
			before, _ := os.ReadFile(file)
			path, err := forkThrough(filepath.Join(dir, "fork"), in)
			m.count("fork", err == nil)
			if err != nil {
				m.fail("fork %q: %v", in, err)
			}
			m.appendedOnly(file, before)
			// The new session's file: its folder's name in the mount is the file name.
			newFile := filepath.Join(m.store, path+".jsonl")
			if _, err := os.Stat(newFile); err != nil {
				m.fail("fork gave %q, no such file in the store: %v", path, err)
			}
			m.check(newFile)
			m.checkFork(p, from, cwd, forkName, m.views[newFile])
			if len(m.sessions) >= modelMaxSessions {
				// The store keeps the session; the model stops following one.
				i := m.rng.Intn(len(m.sessions))
				m.log("(stop following %s)", filepath.Base(m.dir(m.sessions[i])))
				m.sessions = append(m.sessions[:i:i], m.sessions[i+1:]...)
			}
			m.sessions = append(m.sessions, newFile)
			return []string{file}
		}},
		{12, func() []string { // pi appends to the file directly
			req := map[string]any{"text": m.text()}
			kinds := []string{"user", "assistant", "assistant", "model", "thinking", "name", "custom"}
			if len(msgIDs) > 0 {
				kinds = append(kinds, "label", "branch")
			}
			kind := m.pick(kinds)
			req["kind"] = kind
			switch kind {
			case "label":
				req["to"], req["label"] = m.pick(msgIDs), m.pick([]string{"good", "pi-label", ""})
				if req["label"] == "" {
					delete(req, "label") // pi clears the label
				}
			case "branch":
				req["to"] = m.pick(msgIDs)
			case "assistant":
				req["n"] = 1 + m.rng.Intn(500)
			}
			if kind == "label" || kind == "branch" {
				// pi knows only the entries it read: it opens the file again.
				m.pi.reopen(file)
			}
			m.log("%s: pi %s", name, mustJSON(req))
			m.pi.append(file, req)
			m.count("pi-"+kind, true)
			return []string{file}
		}},
		{2, func() []string { // truncate to an earlier line boundary
			data, _ := os.ReadFile(file)
			ends := lineEnds(data)
			if len(ends) < 4 {
				return nil
			}
			k := 2 + m.rng.Intn(len(ends)-3) // keep the header and an entry
			m.log("%s: truncate to %d lines", name, k)
			if err := os.Truncate(file, int64(ends[k-1])); err != nil {
				m.t.Fatal(err)
			}
			m.pi.reopen(file)
			m.count("truncate", true)
			return []string{file}
		}},
		{1, func() []string { // a torn last line, as a crash mid-write leaves it
			data, _ := os.ReadFile(file)
			ends := lineEnds(data)
			if len(ends) < 3 {
				return nil
			}
			last := ends[len(ends)-2] // the start of the last line
			cut := last + 1 + m.rng.Intn(ends[len(ends)-1]-last-2)
			m.log("%s: truncate to %d bytes, in the last line", name, cut)
			if err := os.Truncate(file, int64(cut)); err != nil {
				m.t.Fatal(err)
			}
			m.pi.reopen(file)
			m.count("truncate-torn", true)
			return []string{file}
		}},
		{3, func() []string { // rewrite a message's text in place, same length
			data, _ := os.ReadFile(file)
			var cands []int
			for i := 0; i+8 < len(data); i++ {
				if bytes.HasPrefix(data[i:], []byte(`"text":"`)) {
					for j := i + 8; j < len(data) && data[j] != '"' && data[j] != '\\'; j++ {
						if c := data[j]; c >= 'a' && c <= 'z' {
							cands = append(cands, j)
						}
					}
				}
			}
			if len(cands) == 0 {
				return nil
			}
			at := cands[m.rng.Intn(len(cands))]
			m.log("%s: rewrite byte %d %q → upper case in place", name, at, data[at])
			f, err := os.OpenFile(file, os.O_WRONLY, 0)
			if err != nil {
				m.t.Fatal(err)
			}
			_, err = f.WriteAt([]byte{data[at] - 'a' + 'A'}, int64(at))
			f.Close()
			if err != nil {
				m.t.Fatal(err)
			}
			m.pi.reopen(file)
			m.count("rewrite", true)
			m.compare(file, true) // the rewritten entry's file too
			return []string{file}
		}},
		{1, func() []string { // remount
			m.log("remount")
			if err := m.fs.Unmount(); err != nil {
				m.fail("unmount: %v", err)
			}
			m.fs = nil
			m.mount()
			m.count("remount", true)
			return m.sessions
		}},
	}
	total := 0
	for _, o := range ops {
		total += o.w
	}
	for {
		r := m.rng.Intn(total)
		for _, o := range ops {
			if r < o.w {
				if touched := o.fn(); touched != nil {
					return touched
				}
				break
			}
			r -= o.w
		}
	}
}

// checkFork compares a fork with its source as pi has them: at an entry,
// the root→entry path without its label entries (pi's /clone writes the
// labels on it again); without one, every entry (pi's --fork). A name
// given is set by a session_info entry at the end.
func (m *model) checkFork(src *piModel, from, cwd, name string, fork *piModel) {
	m.t.Helper()
	entries := fork.entries
	if name != "" {
		if fork.v.Name == nil || *fork.v.Name != name {
			m.fail("fork named %q is named %v", name, fork.v.Name)
		}
		if n := len(entries); n > 0 && entries[n-1].Type == "session_info" {
			entries = entries[:n-1]
		}
	}
	var want, got []string
	if from == "" {
		want = src.ids
	} else {
		for _, x := range src.v.Paths[from] {
			id := fmt.Sprint(x)
			for _, e := range src.entries {
				if e.ID == id && e.Type != "label" {
					want = append(want, id)
					break
				}
			}
		}
	}
	for _, e := range entries {
		if from == "" || e.Type != "label" {
			got = append(got, fmt.Sprint(e.ID))
		}
	}
	if !slices.Equal(got, want) {
		var extra []string
		for i, e := range fork.entries {
			if !slices.Contains(want, fmt.Sprint(e.ID)) {
				extra = append(extra, string(fork.v.Entries[i]))
			}
		}
		m.fail("fork of %q holds %v, want %v; not in the source path: %s", from, tail(got, 8), tail(want, 8), extra)
	}
	if from != "" {
		for id, l := range fork.labels {
			if src.labels[id] != l {
				m.fail("fork of %q labels %s %q, the source %q", from, id, l, src.labels[id])
			}
		}
	}
	var h struct{ Cwd string }
	json.Unmarshal(fork.v.Header, &h)
	if cwd != "" && h.Cwd != cwd {
		m.fail("fork into %s has cwd %q", cwd, h.Cwd)
	}
}

// write writes data to a control of the session in one open file and
// checks the outcome: a refused write leaves the file byte-identical, an
// accepted one only appends to it. It reports whether the write was
// accepted; one that should have been and was not (or the reverse) fails.
func (m *model) write(op, file, control, data string, good bool) bool {
	m.t.Helper()
	m.log("%s: %s < %q", filepath.Base(m.dir(file)), control, data)
	before, _ := os.ReadFile(file)
	err := writeControl(filepath.Join(m.dir(file), control), data)
	m.count(op, err == nil)
	if err != nil {
		if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
			m.fail("refused write to %s (%v) changed the file: %d → %d bytes", control, err, len(before), len(after))
		}
		if good {
			errs, _ := os.ReadFile(filepath.Join(m.dir(file), "errors"))
			m.fail("write to %s refused: %v\nerrors: %s", control, err, tail(strings.Split(string(errs), "\n"), 3))
		}
		return false
	}
	if !good {
		m.fail("write to %s of %q accepted", control, data)
	}
	m.appendedOnly(file, before)
	return true
}

// appendedOnly checks that an accepted write only appended whole lines.
func (m *model) appendedOnly(file string, before []byte) {
	m.t.Helper()
	after, _ := os.ReadFile(file)
	if bytes.Equal(after, before) {
		return // nothing to write (a fork), or a leaf already there
	}
	if !bytes.HasPrefix(after, before) || len(after) > 0 && after[len(after)-1] != '\n' {
		m.fail("the file was not only appended to with whole lines: %d → %d bytes", len(before), len(after))
	}
}

func readFileString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// lineEnds returns the offset just past each newline.
func lineEnds(data []byte) []int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// forkThrough writes in to a fork control and reads the new session's path
// back from the same open file.
func forkThrough(control, in string) (string, error) {
	f, err := os.OpenFile(control, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Write([]byte(in)); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("fork read back nothing")
	}
	return line, f.Close()
}
