package tree

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// pi's append schema: what one line of entries to append, a name to set or
// an entry to move the leaf to means, and the refusal that says what is
// wrong with it and what to write instead. Text that is not valid UTF-8 is
// taken as pi would read it: each invalid sequence is U+FFFD
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
	EntryTypes = []string{schema.TypeLabel, schema.TypeCustom, schema.TypeCustomMessage, schema.TypeModelChange, schema.TypeThinkingLevelChange,
		schema.TypeCompaction, schema.TypeBranchSummary, schema.TypeContextEdit, schema.TypeSessionInfo, schema.TypeUsage, schema.TypeMessage}
	MessageRoles = []string{schema.RoleUser, schema.RoleAssistant, schema.RoleToolResult, schema.RoleCustom, schema.RoleBashExecution,
		schema.RoleBranchSummary, schema.RoleCompactionSummary, schema.RoleSystem}
)

// entryFields are the fields each type takes besides type and parentId.
var entryFields = map[string][]string{
	schema.TypeLabel:               {"targetId", "label"},
	schema.TypeCustom:              {"customType", "data"},
	schema.TypeCustomMessage:       {"customType", "content", "display", "details"},
	schema.TypeModelChange:         {"provider", "modelId"},
	schema.TypeThinkingLevelChange: {"thinkingLevel"},
	schema.TypeCompaction:          {"summary", "firstKeptEntryId", "tokensBefore", "details", "usage", "fromHook", "retainedTail"},
	schema.TypeBranchSummary:       {"summary", "fromId", "details", "usage", "fromHook"},
	schema.TypeContextEdit:         {"targetId", "replacement"},
	schema.TypeSessionInfo:         {"name"},
	schema.TypeUsage:               {"kind", "provider", "model", "usage", "note"},
	schema.TypeMessage:             {"message"},
}

// entryExamples are a well-formed line of each type, for refusals.
var entryExamples = map[string]string{
	schema.TypeLabel:               `{"type":"label","targetId":"ID","label":"TEXT"} (label null clears it)`,
	schema.TypeCustom:              `{"type":"custom","customType":"NAME","data":{}}`,
	schema.TypeCustomMessage:       `{"type":"custom_message","customType":"NAME","content":"TEXT","display":true}`,
	schema.TypeModelChange:         `{"type":"model_change","provider":"PROVIDER","modelId":"MODEL"}`,
	schema.TypeThinkingLevelChange: `{"type":"thinking_level_change","thinkingLevel":"high"}`,
	schema.TypeCompaction:          `{"type":"compaction","summary":"TEXT","tokensBefore":1234}`,
	schema.TypeBranchSummary:       `{"type":"branch_summary","parentId":"ID","summary":"TEXT"}`,
	schema.TypeContextEdit:         `{"type":"context_edit","targetId":"ID","replacement":{"content":"TEXT"}} (replacement null drops the entry from the context)`,
	schema.TypeSessionInfo:         `{"type":"session_info","name":"NAME"}`,
	schema.TypeUsage:               `{"type":"usage","kind":"KIND","provider":"PROVIDER","model":"MODEL","usage":{"input":1,"output":1}}`,
	schema.TypeMessage:             `{"type":"message","message":{"role":"user","content":"TEXT"}}`,
}

const malformedAppend = `malformed JSON: a line starting with "{" must be one JSON object on one line; to send such text, write {"role":"user","content":"TEXT"}`

// NameLine sets the session's name (pi's /name); an empty line clears it.
func (b *Builder) NameLine(line []byte) error {
	b.Name(string(line))
	return nil
}

// LeafLine moves the leaf to the entry resolve finds for the line (an id, a
// label, any name the caller resolves: pi's /tree); a blank line moves it
// before the first entry. A reference resolve does not know that ends in "^"
// names a parent (see Tree.Up), of an entry of the session or of this batch:
// pi's "select a user message" is its id and "^".
func (b *Builder) LeafLine(line []byte, resolve func(ref string) (string, bool)) error {
	ref := jsjson.ValidText(string(line))
	if strings.TrimSpace(ref) == "" {
		_, err := b.MoveLeaf("")
		return err
	}
	id, ok := resolve(ref)
	if trimmed := strings.TrimSpace(ref); !ok && strings.HasSuffix(trimmed, "^") {
		id, ok = resolveUp(trimmed, resolve, b.tree().Up)
	}
	if !ok {
		return refuse(ErrNotFound, "no entry or label %q; write an entry id (ls entries/ or branches/), a label (ls labels/), or an empty line to move before the first entry", ref)
	}
	_, err := b.MoveLeaf(id)
	return err
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
		if typ != schema.TypeBranchSummary {
			b.SetLeaf(parent)
		}
		return add(b)
	}}, nil
}

// prepareFields checks and encodes the fields of an entry of type typ and
// returns what adds it to a batch.
func prepareFields(o *object, typ, parent string, hasParent bool, nowMs float64) (func(b *Builder) error, error) {
	switch typ {
	case schema.TypeMessage:
		m := o.get("message")
		if jsjson.KindOf(m) != jsjson.Object {
			return nil, o.bad("message", "a JSON object with a role")
		}
		msg, err := prepareMessage(m, nowMs)
		if err != nil {
			return nil, err
		}
		return messageLine(msg).add, nil
	case schema.TypeLabel:
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
	case schema.TypeCustom:
		ct, err := o.str("customType")
		if err != nil {
			return nil, err
		}
		data := o.canonical("data")
		return func(b *Builder) error {
			b.Custom(ct, data)
			return nil
		}, nil
	case schema.TypeCustomMessage:
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
	case schema.TypeModelChange:
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
	case schema.TypeThinkingLevelChange:
		level, err := o.str("thinkingLevel")
		if err != nil {
			return nil, err
		}
		return func(b *Builder) error {
			b.ThinkingLevel(level)
			return nil
		}, nil
	case schema.TypeCompaction:
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
		var tail []Member
		if o.has("retainedTail") {
			rt, err := retainedTail(o)
			if err != nil {
				return nil, err
			}
			tail = []Member{{Key: "retainedTail", Val: rt}}
		}
		quoted, tokens, details, usage := jsjson.Quote(nil, summary), jsjson.AppendCanonical(nil, tokens), o.canonical("details"), o.canonical("usage")
		return func(b *Builder) error {
			if kept {
				if err := mustHave(b, typ, "firstKeptEntryId", firstKept); err != nil {
					return err
				}
			}
			_, err := b.Compaction(quoted, firstKept, tokens, details, usage, fromHook, tail...)
			return err
		}, nil
	case schema.TypeBranchSummary:
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
			members := extra
			if extra[0].Val == nil && !jsjson.Truthy(fromHook) { // pi's files of the branch left
				members = append([]Member{{Key: "details", Val: b.branchDetails(fromID, from)}}, extra[1:]...)
			}
			if fromID != nil {
				b.Entry(schema.TypeBranchSummary, from, append([]Member{{Key: "fromId", Val: fromID},
					{Key: "summary", Val: quoted}}, members...)...)
				return nil
			}
			_, err := b.BranchSummary(from, quoted, members...)
			return err
		}, nil
	case schema.TypeContextEdit:
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
	case schema.TypeSessionInfo:
		name, err := o.optString("name")
		if err != nil {
			return nil, err
		}
		quoted := jsjson.Quote(nil, SessionName(name))
		return func(b *Builder) error {
			b.name(quoted)
			return nil
		}, nil
	case schema.TypeUsage:
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
// prepareReplacement or Builder.contextEdit refuses (its reasons are
// pi's).
func contextEditRefusal(err error) error {
	msg := strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")
	return &Refusal{err, "context_edit: " + msg + `; the target must be a user, assistant or toolResult message or a custom_message on the active branch (see current/), and the replacement null or {"content":...}`}
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

// object is a JSON object of a line.
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
