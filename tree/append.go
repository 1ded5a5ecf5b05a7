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
// what is wrong with it and what to write instead. Text that is not valid
// UTF-8 is taken as pi would read it: each invalid sequence is U+FFFD
// (jsjson.ValidText), so that every line written is valid JSON.

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

// NameLine sets the session's name (pi's /name); an empty line clears it.
func (b *Builder) NameLine(line []byte) error {
	b.Name(string(line))
	return nil
}

// LeafLine moves the leaf to the entry resolve finds for the line (an id, a
// label, a name the mount shows: pi's /tree); a blank line moves it before
// the first entry.
func (b *Builder) LeafLine(line []byte, resolve func(ref string) (string, bool)) error {
	ref := jsjson.ValidText(string(line))
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
// nowMs (Date.now()) stamps a message that has no timestamp. It is
// PrepareAppend and AppendPrepared in one.
func (b *Builder) AppendLine(line []byte, nowMs float64) error {
	p, err := PrepareAppend(line, nowMs)
	if err != nil {
		return err
	}
	return b.AppendPrepared(p)
}

// PreparedLine is a line for append made ready without the session (see
// PrepareAppend). It can be added to any number of batches.
type PreparedLine struct {
	// add builds the entry against the batch: only what needs the
	// session, from values encoded already. It changes nothing it holds.
	add func(b *Builder) error
}

// AppendPrepared adds a prepared line's entry at the leaf (or where its
// parentId says), checking what needs the session: the entries it names.
// It reads none of the line's JSON again.
func (b *Builder) AppendPrepared(p *PreparedLine) error { return p.add(b) }

// PrepareAppend does for a line of append everything that needs no
// session, so that it can be done before the session is locked: it parses
// the line, checks it against pi's schema as far as that goes without the
// session, canonicalizes it, fills in a message's missing timestamp with
// nowMs (Date.now()) and encodes the fields of its entry. A line refused
// here is refused whatever the session holds; one that names an entry is
// checked for it by AppendPrepared.
func PrepareAppend(line []byte, nowMs float64) (*PreparedLine, error) {
	v := jsjson.TrimWS(line)
	if len(v) == 0 {
		return nil, refuse(ErrInvalid, `empty line; write the text of a user message, or a JSON object with "role" (a message) or "type" (an entry)`)
	}
	if v[0] != '{' {
		return messageLine(userMessage(string(line), nowMs)), nil
	}
	o, err := parseObject(v)
	if err != nil {
		return nil, refuse(ErrInvalid, malformedAppend)
	}
	switch {
	case o.has("role"):
		msg, err := prepareMessage(o.raw, nowMs)
		if err != nil {
			return nil, err
		}
		return messageLine(msg), nil
	case o.has("type"):
		return prepareEntry(o, nowMs)
	}
	return nil, refuse(ErrInvalid, `a JSON object needs "role" (a message, e.g. {"role":"user","content":"hi"}) or "type" (an entry: one of %s)`, strings.Join(EntryTypes, ", "))
}

// messageLine appends the canonical message msg at the leaf.
func messageLine(msg []byte) *PreparedLine {
	return &PreparedLine{func(b *Builder) error {
		b.message(msg)
		return nil
	}}
}

// prepareMessage makes a message ready for pi's appendMessage: checked,
// its timestamp (Date.now()) filled in when missing, canonical.
func prepareMessage(msg []byte, nowMs float64) ([]byte, error) {
	role, ok := jsjson.Str(msg, "role")
	if !ok || !contains(MessageRoles, role) {
		if jsjson.Get(msg, "role") == nil {
			return nil, refuse(ErrInvalid, `a message needs "role", one of: %s`, strings.Join(MessageRoles, ", "))
		}
		return nil, refuse(ErrInvalid, `unknown role %s; use one of: %s`, jsjson.AppendCanonical(nil, jsjson.Get(msg, "role")), strings.Join(MessageRoles, ", "))
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
	return jsjson.AppendCanonical(nil, msg), nil
}

// prepareEntry makes an entry of a given type ready, checked as pi's
// append methods take it. parentId attaches it there instead of at the
// leaf.
func prepareEntry(o *object, nowMs float64) (*PreparedLine, error) {
	typ, ok := jsjson.Str(o.raw, "type")
	if !ok || !contains(EntryTypes, typ) {
		return nil, refuse(ErrInvalid, `unknown type %s; use one of: %s`, jsjson.AppendCanonical(nil, o.get("type")), strings.Join(EntryTypes, ", "))
	}
	o.what, o.example = typ, entryExamples[typ]
	if o.has("id") {
		return nil, refuse(ErrInvalid, `%s: "id" is assigned by pifs, never given; leave it out`, typ)
	}
	if err := o.only(append([]string{"type", "parentId"}, entryFields[typ]...)...); err != nil {
		return nil, err
	}
	parent, hasParent := "", o.has("parentId")
	root := jsjson.KindOf(o.get("parentId")) == jsjson.Null // parentId null: a new root
	if hasParent {
		p, err := o.entryID("parentId", true)
		if err != nil {
			return nil, err
		}
		parent = p
	}
	add, err := prepareFields(o, typ, parent, hasParent, nowMs)
	if err != nil {
		return nil, err
	}
	if !hasParent {
		return &PreparedLine{add}, nil
	}
	return &PreparedLine{func(b *Builder) error {
		if !root {
			if err := mustHave(b, typ, "parentId", parent); err != nil {
				return err
			}
		}
		if typ != "branch_summary" {
			b.SetLeaf(parent)
		}
		return add(b)
	}}, nil
}

// prepareFields checks and encodes the fields of an entry of type typ and
// returns what adds it to a batch.
func prepareFields(o *object, typ, parent string, hasParent bool, nowMs float64) (func(b *Builder) error, error) {
	switch typ {
	case "message":
		m := o.get("message")
		if jsjson.KindOf(m) != jsjson.Object {
			return nil, o.bad("message", "a JSON object with a role")
		}
		msg, err := prepareMessage(m, nowMs)
		if err != nil {
			return nil, err
		}
		return messageLine(msg).add, nil
	case "label":
		target, err := o.entryID("targetId", false)
		if err != nil {
			return nil, err
		}
		label, err := o.optString("label")
		if err != nil {
			return nil, err
		}
		return func(b *Builder) error {
			if err := mustHave(b, typ, "targetId", target); err != nil {
				return err
			}
			_, err := b.Label(target, label)
			return err
		}, nil
	case "custom":
		ct, err := o.str("customType")
		if err != nil {
			return nil, err
		}
		data := o.canonical("data")
		return func(b *Builder) error {
			b.Custom(ct, data)
			return nil
		}, nil
	case "custom_message":
		ct, err := o.str("customType")
		if err != nil {
			return nil, err
		}
		content := o.get("content")
		if k := jsjson.KindOf(content); k != jsjson.String && k != jsjson.Array {
			return nil, o.bad("content", "a string or an array of content blocks")
		}
		display := []byte("true")
		if v := o.get("display"); v != nil {
			if jsjson.KindOf(v) != jsjson.Bool {
				return nil, o.bad("display", "true or false")
			}
			display = v
		}
		content, details := jsjson.AppendCanonical(nil, content), o.canonical("details")
		return func(b *Builder) error {
			b.CustomMessage(ct, content, display, details)
			return nil
		}, nil
	case "model_change":
		provider, err := o.str("provider")
		if err != nil {
			return nil, err
		}
		model, err := o.str("modelId")
		if err != nil {
			return nil, err
		}
		return func(b *Builder) error {
			b.ModelChange(provider, model)
			return nil
		}, nil
	case "thinking_level_change":
		level, err := o.str("thinkingLevel")
		if err != nil {
			return nil, err
		}
		return func(b *Builder) error {
			b.ThinkingLevel(level)
			return nil
		}, nil
	case "compaction":
		summary, err := o.str("summary")
		if err != nil {
			return nil, err
		}
		firstKept, kept := "", false
		if v := o.get("firstKeptEntryId"); v != nil && jsjson.KindOf(v) != jsjson.Null {
			if firstKept, err = o.entryID("firstKeptEntryId", false); err != nil {
				return nil, err
			}
			kept = true
		}
		tokens := o.get("tokensBefore")
		if jsjson.KindOf(tokens) != jsjson.Number {
			return nil, o.bad("tokensBefore", "a number")
		}
		fromHook, err := o.optBool("fromHook")
		if err != nil {
			return nil, err
		}
		quoted, tokens, details, usage := jsjson.Quote(nil, summary), jsjson.AppendCanonical(nil, tokens), o.canonical("details"), o.canonical("usage")
		return func(b *Builder) error {
			if kept {
				if err := mustHave(b, typ, "firstKeptEntryId", firstKept); err != nil {
					return err
				}
			}
			_, err := b.Compaction(quoted, firstKept, tokens, details, usage, fromHook)
			return err
		}, nil
	case "branch_summary":
		summary, err := o.str("summary")
		if err != nil {
			return nil, err
		}
		fromHook, err := o.optBool("fromHook")
		if err != nil {
			return nil, err
		}
		var fromID []byte
		if v := o.get("fromId"); v != nil {
			s, err := o.str("fromId")
			if err != nil {
				return nil, err
			}
			fromID = jsjson.Quote(nil, s)
		}
		quoted := jsjson.Quote(nil, summary)
		extra := []Member{{Key: "details", Val: o.canonical("details")}, {Key: "usage", Val: o.canonical("usage")}, {Key: "fromHook", Val: fromHook}}
		return func(b *Builder) error {
			from := b.Leaf()
			if hasParent {
				from = parent
			}
			if fromID != nil {
				b.Entry("branch_summary", from, append([]Member{{Key: "fromId", Val: fromID},
					{Key: "summary", Val: quoted}}, extra...)...)
				return nil
			}
			_, err := b.BranchSummary(from, quoted, extra...)
			return err
		}, nil
	case "context_edit":
		target, err := o.entryID("targetId", false)
		if err != nil {
			return nil, err
		}
		rep := o.get("replacement")
		if rep == nil {
			return nil, o.bad("replacement", `null (drop the entry from the context) or {"content":...} (replace its content)`)
		}
		r, err := prepareReplacement(rep)
		if err != nil {
			return nil, contextEditRefusal(err)
		}
		return func(b *Builder) error {
			if err := mustHave(b, typ, "targetId", target); err != nil {
				return err
			}
			if _, err := b.contextEdit(target, r); err != nil {
				return contextEditRefusal(err)
			}
			return nil
		}, nil
	case "session_info":
		name, err := o.optString("name")
		if err != nil {
			return nil, err
		}
		quoted := jsjson.Quote(nil, SessionName(name))
		return func(b *Builder) error {
			b.name(quoted)
			return nil
		}, nil
	case "usage":
		var f [3]string
		for i, k := range []string{"kind", "provider", "model"} {
			s, err := o.str(k)
			if err != nil {
				return nil, err
			}
			f[i] = s
		}
		usage := o.get("usage")
		if jsjson.KindOf(usage) != jsjson.Object {
			return nil, o.bad("usage", `an object such as {"input":1,"output":1}`)
		}
		note, err := o.optString("note")
		if err != nil {
			return nil, err
		}
		usage = jsjson.AppendCanonical(nil, usage)
		return func(b *Builder) error {
			b.Usage(f[0], f[1], f[2], usage, note)
			return nil
		}, nil
	}
	return nil, fmt.Errorf("entry type %q has no schema", typ) // EntryTypes lists only those above
}

// contextEditRefusal says what to do about a context_edit that
// Builder.ContextEdit refuses (its reasons are pi's).
func contextEditRefusal(err error) error {
	msg := strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")
	return &Refusal{err, "context_edit: " + msg + `; the target must be a user, assistant or toolResult message or a custom_message on the active branch (see current/), and the replacement null or {"content":...}`}
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
		r.From = jsjson.ValidText(string(line))
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
		so.Cwd = jsjson.ValidText(string(v))
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

// entryID is a field naming an entry (which the batch must have: see
// mustHave); with nullable, null names none ("").
func (o *object) entryID(key string, nullable bool) (string, error) {
	if v := o.get(key); nullable && jsjson.KindOf(v) == jsjson.Null {
		return "", nil
	}
	return o.str(key)
}

// mustHave refuses an entry id, the value of field key of an entry of
// type typ, that names no entry of the session nor of the batch.
func mustHave(b *Builder, typ, key, id string) error {
	if !b.Has(id) {
		return refuse(ErrNotFound, `%s: %s %q: no such entry; give the id of an entry of this session (ls entries/)`, typ, key, id)
	}
	return nil
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
