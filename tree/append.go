package tree

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
)

// pi's append schema: what one line written to a session's controls
// (append, leaf, name) or to fork and new means, and the refusal that says
// what is wrong with it and what to write instead.

// Refusal is a refused line: the sentence that says why and what to do
// instead, and the error (ErrInvalid, ErrNotFound, or one
// wrapping them) that tells its kind. errors.Is sees the kind.
type Refusal struct {
	Kind error
	Msg  string
}

func (e *Refusal) Error() string { return e.Msg }
func (e *Refusal) Unwrap() error { return e.Kind }

// refuse makes a refusal; format must say what is wrong and what to do.
func refuse(kind error, format string, args ...any) error {
	return &Refusal{kind, fmt.Sprintf(format, args...)}
}

// EntryTypes and MessageRoles are the entry types and message roles append
// takes, as pi writes them.
var (
	EntryTypes = []string{"label", "custom", "custom_message", "model_change", "thinking_level_change",
		"compaction", "branch_summary", "context_edit", "session_info", "usage", "message"}
	MessageRoles = []string{"user", "assistant", "toolResult", "custom", "bashExecution",
		"branchSummary", "compactionSummary", "system"}
)

// entryFields are the fields each type takes besides type and parentId.
var entryFields = map[string][]string{
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

// entryExamples are a well-formed line of each type, for refusals.
var entryExamples = map[string]string{
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

const malformedAppend = `malformed JSON: a line starting with "{" must be one JSON object on one line; to send such text, write {"role":"user","content":"TEXT"}`

// CheckAppendLine checks what a line for append can be checked for without
// the session: that a line starting with "{" is JSON. It is cheap, for use
// before the session's lock is taken.
func CheckAppendLine(line []byte) error {
	if v := jsjson.TrimWS(line); len(v) > 0 && v[0] == '{' && !jsjson.Valid(v) {
		return refuse(ErrInvalid, malformedAppend)
	}
	return nil
}

// NameLine sets the session's name (pi's /name); an empty line clears it.
func (b *Builder) NameLine(line []byte) error {
	b.Name(string(line))
	return nil
}

// LeafLine moves the leaf to the entry resolve finds for the line (an id, a
// label, a name the mount shows: pi's /tree); a blank line moves it before
// the first entry.
func (b *Builder) LeafLine(line []byte, resolve func(ref string) (string, bool)) error {
	ref := string(line)
	if strings.TrimSpace(ref) == "" {
		_, err := b.MoveLeaf("")
		return err
	}
	id, ok := resolve(ref)
	if !ok {
		return refuse(ErrNotFound, "no entry or label %q; write an entry id (ls entries/ or branches/), a label (ls labels/), or an empty line to move before the first entry", ref)
	}
	_, err := b.MoveLeaf(id)
	return err
}

// AppendLine adds one entry at the leaf: a message for a JSON object with
// "role", an entry for one with "type", else a user message with the text.
// nowMs (Date.now()) stamps a message that has no timestamp.
func (b *Builder) AppendLine(line []byte, nowMs float64) error {
	v := jsjson.TrimWS(line)
	if len(v) == 0 {
		return refuse(ErrInvalid, `empty line; write the text of a user message, or a JSON object with "role" (a message) or "type" (an entry)`)
	}
	if v[0] != '{' {
		b.UserText(string(line), nowMs)
		return nil
	}
	o, err := parseObject(v)
	if err != nil {
		return refuse(ErrInvalid, malformedAppend)
	}
	switch {
	case o.has("role"):
		return b.appendMessage(o.raw, nowMs)
	case o.has("type"):
		return b.appendEntry(o, nowMs)
	}
	return refuse(ErrInvalid, `a JSON object needs "role" (a message, e.g. {"role":"user","content":"hi"}) or "type" (an entry: one of %s)`, strings.Join(EntryTypes, ", "))
}

// appendMessage appends a message as pi's appendMessage does, with its
// timestamp (Date.now()) filled in when missing.
func (b *Builder) appendMessage(msg []byte, nowMs float64) error {
	role, ok := jsjson.Str(msg, "role")
	if !ok || !contains(MessageRoles, role) {
		if jsjson.Get(msg, "role") == nil {
			return refuse(ErrInvalid, `a message needs "role", one of: %s`, strings.Join(MessageRoles, ", "))
		}
		return refuse(ErrInvalid, `unknown role %s; use one of: %s`, jsjson.AppendCanonical(nil, jsjson.Get(msg, "role")), strings.Join(MessageRoles, ", "))
	}
	if jsjson.Get(msg, "timestamp") == nil {
		keys, vals := jsjson.ObjectMembers(msg)
		var o jsjson.Builder
		for i, k := range keys {
			o.Raw(k, jsjson.AppendCanonical(nil, vals[i]))
		}
		o.Number("timestamp", nowMs)
		msg = o.Bytes()
	}
	_, err := b.Message(msg)
	return err
}

// appendEntry appends an entry of a given type, checked as pi's append
// methods take it. parentId attaches it there instead of at the leaf.
func (b *Builder) appendEntry(o *object, nowMs float64) error {
	typ, ok := jsjson.Str(o.raw, "type")
	if !ok || !contains(EntryTypes, typ) {
		return refuse(ErrInvalid, `unknown type %s; use one of: %s`, jsjson.AppendCanonical(nil, o.get("type")), strings.Join(EntryTypes, ", "))
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
		return b.appendMessage(m, nowMs)
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
		extra := []Member{{Key: "details", Val: o.canonical("details")}, {Key: "usage", Val: o.canonical("usage")}, {Key: "fromHook", Val: fromHook}}
		if v := o.get("fromId"); v != nil {
			fromID, err := o.str("fromId")
			if err != nil {
				return err
			}
			b.Entry("branch_summary", from, append([]Member{{Key: "fromId", Val: jsjson.Quote(nil, fromID)},
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
			// ContextEdit's reasons are pi's; say what to do.
			msg := strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")
			return &Refusal{err, "context_edit: " + msg + `; the target must be a user, assistant or toolResult message or a custom_message on the active branch (see current/), and the replacement null or {"content":...}`}
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

// ForkRequest is one line written to a session's fork: copy the session
// (From "") or its branch up to the entry From names, into a new session.
type ForkRequest struct {
	// From names the entry as the user wrote it (an id, a label, a name
	// the mount shows); the caller resolves it.
	From string
	SessionOptions
}

// SessionOptions are what fork and new take besides the source: a working
// directory (absolute and cleaned; "" keeps the source's), a session id
// ("" for a new one) and a name.
type SessionOptions struct {
	Cwd, ID, Name string
	// HasName: Name was given (a session_info entry names the session).
	HasName bool
}

// ParseForkLine reads one fork line: an entry id or label (pi's /clone at
// that entry), an empty line (the whole session, pi's --fork), or
// {"from","cwd","id","name"}.
func ParseForkLine(line []byte) (ForkRequest, error) {
	var r ForkRequest
	v := jsjson.TrimWS(line)
	switch {
	case len(v) == 0:
	case v[0] == '{':
		o, err := parseObject(v)
		if err != nil {
			return r, refuse(ErrInvalid, `malformed JSON; write an entry id, a label, an empty line (the whole session), or {"from":"ID","cwd":"/dir","id":"ID","name":"NAME"}`)
		}
		o.example = `{"from":"ID","cwd":"/other/dir","name":"NAME"}`
		if r.SessionOptions, err = o.options("from", "cwd", "id", "name"); err != nil {
			return r, err
		}
		if r.From, err = o.optString("from"); err != nil {
			return r, err
		}
	default:
		r.From = string(line)
	}
	if r.Cwd != "" {
		var err error
		if r.Cwd, err = checkCwd(r.Cwd); err != nil {
			return r, err
		}
	}
	return r, nil
}

// ParseNewLine reads one line written to new: at the mount root a working
// directory or {"cwd","id","name"}; in a project (inProject), whose own
// working directory the caller fills in, an empty line or {"id","name"}.
func ParseNewLine(line []byte, inProject bool) (SessionOptions, error) {
	var so SessionOptions
	usage := NewUsage(inProject)
	v := jsjson.TrimWS(line)
	var o *object
	if len(v) > 0 && v[0] == '{' {
		var err error
		if o, err = parseObject(v); err != nil {
			return so, refuse(ErrInvalid, `malformed JSON; write %s`, usage)
		}
		o.example = usage
	}
	if inProject {
		switch {
		case o != nil && o.has("cwd"):
			return so, refuse(ErrInvalid, `a project's new creates sessions for the project's own working directory; write {"cwd":...} to the new file at the mount root instead`)
		case o != nil:
			return o.options("id", "name")
		case len(v) > 0:
			return so, refuse(ErrInvalid, `write %s; for another working directory, write its path to the new file at the mount root`, usage)
		}
		return so, nil
	}
	switch {
	case o != nil:
		var err error
		if so, err = o.options("cwd", "id", "name"); err != nil {
			return so, err
		}
		if so.Cwd == "" {
			return so, o.bad("cwd", "the working directory, an absolute path")
		}
	case len(v) == 0:
		return so, refuse(ErrInvalid, `empty line; write %s`, usage)
	default:
		so.Cwd = string(v)
	}
	cwd, err := checkCwd(so.Cwd)
	if err != nil {
		return so, err
	}
	so.Cwd = cwd
	return so, nil
}

// NewUsage says what new takes, at the mount root or in a project.
func NewUsage(inProject bool) string {
	if inProject {
		return `an empty line, or {"id":"ID","name":"NAME"}`
	}
	return `a working directory (an absolute path), or {"cwd":"/dir","id":"ID","name":"NAME"}`
}

// checkCwd requires an absolute working directory and cleans it as pi's
// resolve() does.
func checkCwd(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", refuse(ErrInvalid, `the working directory %q is not an absolute path; write one such as "/home/me/project"`, cwd)
	}
	return filepath.Clean(cwd), nil
}

// WithName adds a session_info entry naming the session at the end of a
// new session's lines (the header first).
func WithName(lines [][]byte, name string) ([][]byte, error) {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	l, err := sessions.Parse(buf.Bytes())
	if err != nil {
		return nil, err
	}
	b := New(l).NewBuilder()
	b.Name(name)
	return append(lines, b.Lines...), nil
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
func (o *object) entryID(b *Builder, key string, nullable bool) (string, error) {
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

// options reads cwd, id and name from o (those of them in fields).
func (o *object) options(fields ...string) (SessionOptions, error) {
	var so SessionOptions
	if err := o.only(fields...); err != nil {
		return so, err
	}
	var err error
	if so.Cwd, err = o.optString("cwd"); err != nil {
		return so, err
	}
	if so.ID, err = o.optString("id"); err != nil {
		return so, err
	}
	if v := o.get("name"); v != nil && jsjson.KindOf(v) != jsjson.Null {
		so.HasName = true
		if so.Name, err = o.str("name"); err != nil {
			return so, err
		}
	}
	return so, nil
}
