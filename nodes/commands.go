package nodes

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The commands of each control: what one line means. Each returns a
// refusal that says what is wrong and what to write instead.

// nowMs is Date.now().
func nowMs() float64 { return float64(time.Now().UnixMilli()) }

// nameLine sets the session's name (pi's /name); an empty line clears it.
func nameLine(ss *session, b *tree.Builder, line []byte) error {
	b.Name(string(line))
	return nil
}

// leafLine moves the leaf to an entry id or label (pi's /tree); an empty
// line moves it before the first entry.
func leafLine(ss *session, b *tree.Builder, line []byte) error {
	ref := string(line)
	if strings.TrimSpace(ref) == "" {
		_, err := b.MoveLeaf("")
		return err
	}
	id, ok := resolveRef(ss.tree, b, ref)
	if !ok {
		return refuse(ErrNotFound, "no entry or label %q; write an entry id (ls entries/ or branches/), a label (ls labels/), or an empty line to move before the first entry", ref)
	}
	_, err := b.MoveLeaf(id)
	return err
}

// resolveRef finds the entry a user names: an id (also one built earlier in
// the batch), a label, or a name the mount shows for an entry, alone or at
// the end of a path (entries/<id>.json, branches/<id>, labels/<label>).
// Surrounding blanks are forgiven.
func resolveRef(t *tree.Tree, b *tree.Builder, ref string) (string, bool) {
	trimmed := strings.TrimSpace(ref)
	for _, r := range []string{ref, trimmed} {
		if r == "" {
			continue
		}
		if b != nil && b.Has(r) {
			return r, true
		}
		if id, ok := t.Resolve(r); ok {
			return id, true
		}
	}
	base := strings.TrimRight(trimmed, "/")
	base = base[strings.LastIndexByte(base, '/')+1:]
	if base == "" {
		return "", false
	}
	if name, ok := strings.CutSuffix(base, jsonExt); ok {
		if id, ok := findID(t, name, len(jsonExt)); ok {
			return id, true
		}
	}
	if id, ok := findID(t, base, 0); ok {
		return id, true
	}
	if _, texts := labels(t); texts[base] != "" {
		return t.Resolve(texts[base])
	}
	return "", false
}

// Entry types and message roles that append takes, as pi writes them.
var (
	entryTypes = []string{"label", "custom", "custom_message", "model_change", "thinking_level_change",
		"compaction", "branch_summary", "context_edit", "session_info", "usage", "message"}
	messageRoles = []string{"user", "assistant", "toolResult", "custom", "bashExecution",
		"branchSummary", "compactionSummary", "system"}
	// entryFields are the fields each type takes besides type and parentId.
	entryFields = map[string][]string{
		"label":                 {"targetId", "label"},
		"custom":                {"customType", "data"},
		"custom_message":        {"customType", "content", "display", "details"},
		"model_change":          {"provider", "modelId"},
		"thinking_level_change": {"thinkingLevel"},
		"compaction":            {"summary", "firstKeptEntryId", "tokensBefore", "details", "usage", "fromHook"},
		"branch_summary":        {"summary", "fromId", "details", "usage", "fromHook"},
		"context_edit":          {"targetId", "replacement"},
		"session_info":          {"name"},
		"usage":                 {"kind", "provider", "model", "usage", "note"},
		"message":               {"message"},
	}
	entryExamples = map[string]string{
		"label":                 `{"type":"label","targetId":"ID","label":"TEXT"} (label null clears it)`,
		"custom":                `{"type":"custom","customType":"NAME","data":{}}`,
		"custom_message":        `{"type":"custom_message","customType":"NAME","content":"TEXT","display":true}`,
		"model_change":          `{"type":"model_change","provider":"PROVIDER","modelId":"MODEL"}`,
		"thinking_level_change": `{"type":"thinking_level_change","thinkingLevel":"high"}`,
		"compaction":            `{"type":"compaction","summary":"TEXT","tokensBefore":1234}`,
		"branch_summary":        `{"type":"branch_summary","parentId":"ID","summary":"TEXT"}`,
		"context_edit":          `{"type":"context_edit","targetId":"ID","replacement":{"content":"TEXT"}} (replacement null drops the entry from the context)`,
		"session_info":          `{"type":"session_info","name":"NAME"}`,
		"usage":                 `{"type":"usage","kind":"KIND","provider":"PROVIDER","model":"MODEL","usage":{"input":1,"output":1}}`,
		"message":               `{"type":"message","message":{"role":"user","content":"TEXT"}}`,
	}
)

// appendLine adds one entry at the leaf: a message for a JSON object with
// "role", an entry for one with "type", else a user message with the text.
func appendLine(ss *session, b *tree.Builder, line []byte) error {
	v := jsjson.TrimWS(line)
	if len(v) == 0 {
		return refuse(ErrInvalid, `empty line; write the text of a user message, or a JSON object with "role" (a message) or "type" (an entry)`)
	}
	if v[0] != '{' {
		b.UserText(string(line), nowMs())
		return nil
	}
	o, err := parseObject(v)
	if err != nil {
		return refuse(ErrInvalid, `malformed JSON: a line starting with "{" must be one JSON object on one line; to send such text, write {"role":"user","content":"TEXT"}`)
	}
	switch {
	case o.has("role"):
		return appendMessage(b, o.raw)
	case o.has("type"):
		return appendEntry(b, o)
	}
	return refuse(ErrInvalid, `a JSON object needs "role" (a message, e.g. {"role":"user","content":"hi"}) or "type" (an entry: one of %s)`, strings.Join(entryTypes, ", "))
}

// appendMessage appends a message as pi's appendMessage does, with its
// timestamp (Date.now()) filled in when missing.
func appendMessage(b *tree.Builder, msg []byte) error {
	role, ok := jsjson.Str(msg, "role")
	if !ok || !contains(messageRoles, role) {
		return refuse(ErrInvalid, `unknown role %s; use one of: %s`, jsjson.AppendCanonical(nil, jsjson.Get(msg, "role")), strings.Join(messageRoles, ", "))
	}
	if jsjson.Get(msg, "timestamp") == nil {
		keys, vals := jsjson.ObjectMembers(msg)
		var o jsjson.Builder
		for i, k := range keys {
			o.Raw(k, jsjson.AppendCanonical(nil, vals[i]))
		}
		o.Number("timestamp", nowMs())
		msg = o.Bytes()
	}
	_, err := b.Message(msg)
	return err
}

// appendEntry appends an entry of a given type, checked as pi's append
// methods take it. parentId attaches it there instead of at the leaf.
func appendEntry(b *tree.Builder, o *object) error {
	typ, ok := jsjson.Str(o.raw, "type")
	if !ok || !contains(entryTypes, typ) {
		return refuse(ErrInvalid, `unknown type %s; use one of: %s`, jsjson.AppendCanonical(nil, o.get("type")), strings.Join(entryTypes, ", "))
	}
	o.what, o.example = typ, entryExamples[typ]
	if o.has("id") {
		return refuse(ErrInvalid, `%s: "id" is assigned by pifs, never given; leave it out`, typ)
	}
	if err := o.only(append([]string{"type", "parentId"}, entryFields[typ]...)...); err != nil {
		return err
	}
	parent, hasParent := "", o.has("parentId")
	if hasParent {
		p, err := o.entryID(b, "parentId", true)
		if err != nil {
			return err
		}
		parent = p
		if typ != "branch_summary" {
			b.SetLeaf(parent)
		}
	}
	switch typ {
	case "message":
		m := o.get("message")
		if jsjson.KindOf(m) != jsjson.Object {
			return o.bad("message", "a JSON object with a role")
		}
		return appendMessage(b, m)
	case "label":
		target, err := o.entryID(b, "targetId", false)
		if err != nil {
			return err
		}
		label, err := o.optString("label")
		if err != nil {
			return err
		}
		_, err = b.Label(target, label)
		return err
	case "custom":
		ct, err := o.str("customType")
		if err != nil {
			return err
		}
		b.Custom(ct, o.canonical("data"))
	case "custom_message":
		ct, err := o.str("customType")
		if err != nil {
			return err
		}
		content := o.get("content")
		if k := jsjson.KindOf(content); k != jsjson.String && k != jsjson.Array {
			return o.bad("content", "a string or an array of content blocks")
		}
		display := []byte("true")
		if v := o.get("display"); v != nil {
			if jsjson.KindOf(v) != jsjson.Bool {
				return o.bad("display", "true or false")
			}
			display = v
		}
		b.CustomMessage(ct, jsjson.AppendCanonical(nil, content), display, o.canonical("details"))
	case "model_change":
		provider, err := o.str("provider")
		if err != nil {
			return err
		}
		model, err := o.str("modelId")
		if err != nil {
			return err
		}
		b.ModelChange(provider, model)
	case "thinking_level_change":
		level, err := o.str("thinkingLevel")
		if err != nil {
			return err
		}
		b.ThinkingLevel(level)
	case "compaction":
		summary, err := o.str("summary")
		if err != nil {
			return err
		}
		firstKept := ""
		if v := o.get("firstKeptEntryId"); v != nil && jsjson.KindOf(v) != jsjson.Null {
			if firstKept, err = o.entryID(b, "firstKeptEntryId", false); err != nil {
				return err
			}
		}
		tokens := o.get("tokensBefore")
		if jsjson.KindOf(tokens) != jsjson.Number {
			return o.bad("tokensBefore", "a number")
		}
		fromHook, err := o.optBool("fromHook")
		if err != nil {
			return err
		}
		_, err = b.Compaction(jsjson.Quote(nil, summary), firstKept, jsjson.AppendCanonical(nil, tokens),
			o.canonical("details"), o.canonical("usage"), fromHook)
		return err
	case "branch_summary":
		summary, err := o.str("summary")
		if err != nil {
			return err
		}
		fromHook, err := o.optBool("fromHook")
		if err != nil {
			return err
		}
		from := b.Leaf()
		if hasParent {
			from = parent
		}
		extra := []tree.Member{{Key: "details", Val: o.canonical("details")}, {Key: "usage", Val: o.canonical("usage")}, {Key: "fromHook", Val: fromHook}}
		if v := o.get("fromId"); v != nil {
			fromID, err := o.str("fromId")
			if err != nil {
				return err
			}
			b.Entry("branch_summary", from, append([]tree.Member{{Key: "fromId", Val: jsjson.Quote(nil, fromID)},
				{Key: "summary", Val: jsjson.Quote(nil, summary)}}, extra...)...)
			return nil
		}
		_, err = b.BranchSummary(from, jsjson.Quote(nil, summary), extra...)
		return err
	case "context_edit":
		target, err := o.entryID(b, "targetId", false)
		if err != nil {
			return err
		}
		rep := o.get("replacement")
		if rep == nil {
			return o.bad("replacement", `null (drop the entry from the context) or {"content":...} (replace its content)`)
		}
		if _, err := b.ContextEdit(target, jsjson.AppendCanonical(nil, rep)); err != nil {
			// tree's reasons are pi's; say what to do.
			msg := strings.TrimPrefix(err.Error(), tree.ErrInvalid.Error()+": ")
			return &refusal{err, "context_edit: " + msg + `; the target must be a user, assistant or toolResult message or a custom_message on the active branch (see current/), and the replacement null or {"content":...}`}
		}
	case "session_info":
		name, err := o.optString("name")
		if err != nil {
			return err
		}
		b.Name(name)
	case "usage":
		var f [3]string
		for i, k := range []string{"kind", "provider", "model"} {
			s, err := o.str(k)
			if err != nil {
				return err
			}
			f[i] = s
		}
		usage := o.get("usage")
		if jsjson.KindOf(usage) != jsjson.Object {
			return o.bad("usage", `an object such as {"input":1,"output":1}`)
		}
		note, err := o.optString("note")
		if err != nil {
			return err
		}
		b.Usage(f[0], f[1], f[2], jsjson.AppendCanonical(nil, usage), note)
	}
	return nil
}

// object is a JSON object written to a control.
type object struct {
	raw []byte
	// what and example name the object in refusals ("compaction", and a
	// well-formed one).
	what, example string
}

func parseObject(v []byte) (*object, error) {
	v, err := jsjson.Parse(v)
	if err != nil {
		return nil, err
	}
	if jsjson.KindOf(v) != jsjson.Object {
		return nil, fmt.Errorf("not an object")
	}
	return &object{raw: v}, nil
}

func (o *object) get(key string) []byte { return jsjson.Get(o.raw, key) }
func (o *object) has(key string) bool   { return jsjson.Has(o.raw, key) }

// canonical returns a field as JSON.stringify writes it (nil when absent).
func (o *object) canonical(key string) []byte {
	if v := o.get(key); v != nil {
		return jsjson.AppendCanonical(nil, v)
	}
	return nil
}

// bad refuses a field of the wrong kind.
func (o *object) bad(key, want string) error {
	msg := fmt.Sprintf(`%q must be %s`, key, want)
	if o.what != "" {
		msg = o.what + ": " + msg
	}
	if o.example != "" {
		msg += "; e.g. " + o.example
	}
	return refuse(ErrInvalid, "%s", msg)
}

// only refuses fields other than those given.
func (o *object) only(fields ...string) error {
	keys, _ := jsjson.ObjectMembers(o.raw)
	for _, k := range keys {
		if !contains(fields, k) {
			msg := fmt.Sprintf(`unknown field %q; the fields are: %s`, k, strings.Join(fields, ", "))
			if o.what != "" {
				msg = o.what + ": " + msg
			}
			return refuse(ErrInvalid, "%s", msg)
		}
	}
	return nil
}

func (o *object) str(key string) (string, error) {
	s, ok := jsjson.Str(o.raw, key)
	if !ok {
		return "", o.bad(key, "a string")
	}
	return s, nil
}

// optString is a string field that may be missing or null ("").
func (o *object) optString(key string) (string, error) {
	if v := o.get(key); v == nil || jsjson.KindOf(v) == jsjson.Null {
		return "", nil
	}
	return o.str(key)
}

// optBool is a boolean field that may be missing (nil).
func (o *object) optBool(key string) ([]byte, error) {
	v := o.get(key)
	if v != nil && jsjson.KindOf(v) != jsjson.Bool {
		return nil, o.bad(key, "true or false")
	}
	return v, nil
}

// entryID is a field naming an entry of the session (or of the batch);
// with nullable, null names none ("").
func (o *object) entryID(b *tree.Builder, key string, nullable bool) (string, error) {
	if v := o.get(key); nullable && jsjson.KindOf(v) == jsjson.Null {
		return "", nil
	}
	id, err := o.str(key)
	if err != nil {
		return "", err
	}
	if !b.Has(id) {
		return "", refuse(ErrNotFound, `%s: %s %q: no such entry; give the id of an entry of this session (ls entries/)`, o.what, key, id)
	}
	return id, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// newSession is a session file about to be created by fork or new: in
// folder dir of the store, shown in project.
type newSession struct {
	project, dir, file string
	lines              [][]byte
}

// create writes the planned sessions and returns their paths relative to
// the mount root, one a line.
func (r *Root) create(plans []newSession) ([]byte, error) {
	var reply []byte
	for _, p := range plans {
		path, err := sessions.Create(p.dir, p.file, p.lines...)
		if err != nil {
			return nil, err
		}
		r.st.x.Update(filepath.Dir(path)) // a new project folder
		r.st.x.Update(path)
		reply = append(reply, p.project+"/"+strings.TrimSuffix(p.file, ".jsonl")+"\n"...)
	}
	return reply, nil
}

// placeFor is where pi creates a new session for a working directory
// (SessionManager.create, forkFrom): flat in a directory the user chose,
// else in the cwd's own folder; and the project folder the mount shows it
// in.
func (r *Root) placeFor(cwd string) (project, dir string) {
	return sessions.ProjectFolder(cwd), sessions.NewSessionDir(r.opts.SessionsDir, r.opts.Flat, cwd)
}

// sessionOptions are the fields fork and new take in a JSON object.
type sessionOptions struct {
	cwd, id, name string
	hasName       bool
}

// options reads cwd, id and name from o (those of them in fields).
func (o *object) options(fields ...string) (sessionOptions, error) {
	var so sessionOptions
	if err := o.only(fields...); err != nil {
		return so, err
	}
	var err error
	if so.cwd, err = o.optString("cwd"); err != nil {
		return so, err
	}
	if so.id, err = o.optString("id"); err != nil {
		return so, err
	}
	if v := o.get("name"); v != nil && jsjson.KindOf(v) != jsjson.Null {
		so.hasName = true
		if so.name, err = o.str("name"); err != nil {
			return so, err
		}
	}
	return so, nil
}

// checkCwd requires an absolute working directory and cleans it as pi's
// resolve() does.
func checkCwd(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", refuse(ErrInvalid, `the working directory %q is not an absolute path; write one such as "/home/me/project"`, cwd)
	}
	return filepath.Clean(cwd), nil
}

// sessionID returns the id for a new session: the one given, checked as pi
// checks it and not taken by another session (nor earlier in the batch), or
// a new UUIDv7.
func (r *Root) sessionID(id string, taken map[string]bool) (string, error) {
	if id == "" {
		return sessions.NewSessionID(), nil
	}
	if err := sessions.ValidSessionID(id); err != nil {
		return "", refuse(ErrInvalid, `%v; or leave "id" out for a new one`, err)
	}
	if _, found := r.st.sessionByID(id); found || taken[id] {
		return "", refuse(ErrExists, `session id %q is taken (see by-id/); choose another, or leave "id" out for a new one`, id)
	}
	taken[id] = true
	return id, nil
}

// withName adds a session_info entry naming the session at the end of a new
// session's lines.
func withName(lines [][]byte, name string) ([][]byte, error) {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	l, err := sessions.Parse(buf.Bytes())
	if err != nil {
		return nil, err
	}
	b := tree.New(l).NewBuilder()
	b.Name(name)
	return append(lines, b.Lines...), nil
}

// forkControl is a session's fork: each line makes a new session from it.
type forkControl struct{ s sessionRef }

func (c forkControl) refused(err error) { c.s.refused(err) }

func (c forkControl) run(lines [][]byte) ([]byte, error) {
	if c.s.r.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	var plans []newSession
	err := c.s.r.st.withFreshSession(c.s.project, c.s.name, func(ss *session) error {
		taken := map[string]bool{}
		for i, l := range lines {
			p, err := c.plan(ss, l, taken)
			if err != nil {
				return lineError("fork", i+1, err)
			}
			plans = append(plans, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c.s.r.create(plans)
}

// plan reads one fork line: an entry id or label (pi's /clone at that
// entry), an empty line (the whole session, pi's --fork), or
// {"from","cwd","id","name"}.
func (c forkControl) plan(ss *session, line []byte, taken map[string]bool) (newSession, error) {
	var so sessionOptions
	var from string
	v := jsjson.TrimWS(line)
	switch {
	case len(v) == 0:
	case v[0] == '{':
		o, err := parseObject(v)
		if err != nil {
			return newSession{}, refuse(ErrInvalid, `malformed JSON; write an entry id, a label, an empty line (the whole session), or {"from":"ID","cwd":"/dir","id":"ID","name":"NAME"}`)
		}
		o.example = `{"from":"ID","cwd":"/other/dir","name":"NAME"}`
		if so, err = o.options("from", "cwd", "id", "name"); err != nil {
			return newSession{}, err
		}
		if from, err = o.optString("from"); err != nil {
			return newSession{}, err
		}
	default:
		from = string(line)
	}
	// A copy in the same working directory goes next to its source, as
	// pi's clone does; one into another cwd where pi would create it.
	project, dir, cwd := c.s.project, filepath.Dir(ss.path), ss.tree.Header.Cwd
	if so.cwd != "" {
		var err error
		if cwd, err = checkCwd(so.cwd); err != nil {
			return newSession{}, err
		}
		project, dir = c.s.r.placeFor(cwd)
	}
	id, err := c.s.r.sessionID(so.id, taken)
	if err != nil {
		return newSession{}, err
	}
	ts := sessions.Now()
	var out [][]byte
	if from == "" {
		out = ss.tree.ForkLines(id, ts, cwd, ss.path)
	} else {
		at, ok := resolveRef(ss.tree, nil, from)
		if !ok {
			return newSession{}, refuse(ErrNotFound, `no entry or label %q; write an entry id (ls entries/), a label (ls labels/), or an empty line to copy the whole session`, from)
		}
		if out, err = ss.tree.BranchedLines(at, id, ts, cwd, ss.path); err != nil {
			return newSession{}, err
		}
	}
	if so.hasName {
		if out, err = withName(out, so.name); err != nil {
			return newSession{}, err
		}
	}
	return newSession{project, dir, sessions.FileName(ts, id), out}, nil
}

// newControl is new: each line creates an empty session, in a project or,
// at the root, for any working directory.
type newControl struct {
	r       *Root
	project string // "" at the root
}

func (c newControl) refused(err error) {
	where := "new"
	if c.project != "" {
		where = c.project + "/new"
	}
	c.r.log.Warn(fmt.Sprintf("%s: write refused: %v", where, err))
}

func (c newControl) run(lines [][]byte) ([]byte, error) {
	if c.r.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	var plans []newSession
	taken := map[string]bool{}
	for i, l := range lines {
		p, err := c.plan(l, taken)
		if err != nil {
			return nil, lineError("new", i+1, err)
		}
		plans = append(plans, p)
	}
	return c.r.create(plans)
}

func (c newControl) plan(line []byte, taken map[string]bool) (newSession, error) {
	var so sessionOptions
	v := jsjson.TrimWS(line)
	var o *object
	if len(v) > 0 && v[0] == '{' {
		var err error
		if o, err = parseObject(v); err != nil {
			return newSession{}, refuse(ErrInvalid, `malformed JSON; write %s`, c.usage())
		}
		o.example = c.usage()
	}
	if c.project != "" {
		if o != nil {
			if o.has("cwd") {
				return newSession{}, refuse(ErrInvalid, `a project's new creates sessions for the project's own working directory; write {"cwd":...} to the new file at the mount root instead`)
			}
			var err error
			if so, err = o.options("id", "name"); err != nil {
				return newSession{}, err
			}
		} else if len(v) > 0 {
			return newSession{}, refuse(ErrInvalid, `write %s; for another working directory, write its path to the new file at the mount root`, c.usage())
		}
		cwd, err := c.r.st.projectCwd(c.project)
		if err != nil {
			return newSession{}, err
		}
		if cwd == "" {
			return newSession{}, refuse(ErrInvalid, `no session of this project names its working directory; write the directory to the new file at the mount root instead`)
		}
		so.cwd = cwd
	} else {
		switch {
		case o != nil:
			var err error
			if so, err = o.options("cwd", "id", "name"); err != nil {
				return newSession{}, err
			}
			if so.cwd == "" {
				return newSession{}, o.bad("cwd", "the working directory, an absolute path")
			}
		case len(v) == 0:
			return newSession{}, refuse(ErrInvalid, `empty line; write %s`, c.usage())
		default:
			so.cwd = string(v)
		}
		cwd, err := checkCwd(so.cwd)
		if err != nil {
			return newSession{}, err
		}
		so.cwd = cwd
	}
	project, dir := c.r.placeFor(so.cwd)
	if c.project != "" {
		project = c.project
		if folder, ok := c.r.st.x.ProjectFolder(c.project); ok && !c.r.opts.Flat {
			dir = folder
		}
	}
	id, err := c.r.sessionID(so.id, taken)
	if err != nil {
		return newSession{}, err
	}
	ts := sessions.Now()
	lines := [][]byte{sessions.HeaderLine(id, ts, so.cwd, "")}
	if so.hasName {
		if lines, err = withName(lines, so.name); err != nil {
			return newSession{}, err
		}
	}
	return newSession{project, dir, sessions.FileName(ts, id), lines}, nil
}

func (c newControl) usage() string {
	if c.project != "" {
		return `an empty line, or {"id":"ID","name":"NAME"}`
	}
	return `a working directory (an absolute path), or {"cwd":"/dir","id":"ID","name":"NAME"}`
}
