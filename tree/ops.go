package tree

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// Errors of the write operations; callers map them to errno.
var (
	ErrNotFound = errors.New("no such entry")
	ErrInvalid  = errors.New("invalid input")
)

// Member is one field of an entry being built: a key and its encoded value
// (nil for undefined, which JSON.stringify leaves out).
type Member struct {
	Key string
	Val []byte
}

// prefixKeys are the fields pi puts before id for some types (its object
// literals list them first).
var prefixKeys = map[string][]string{
	schema.TypeCustom:        {"customType", "data"},
	schema.TypeCustomMessage: {"customType", "content", "display", "details"},
}

// Builder makes entries for one batch of appends against a tree: ids are
// unique in the file and in the batch, and each entry becomes the leaf for
// the next one, as in pi's SessionManager.
type Builder struct {
	t    *Tree
	used idSet
	leaf string // id of the parent for the next entry; "" for null
	n    int    // entries built
	// Lines holds the lines built, and IDs the id of each, unless Out
	// is set.
	Lines [][]byte
	IDs   []string
	// Out, when set, takes each line built instead of Lines and IDs, so
	// that a batch of any size keeps no more than its ids in memory.
	Out LineStore
	// Now gives the timestamp of new entries (sessions.Now by default).
	Now func() string
}

// LineStore keeps the lines a Builder builds (see Builder.Out).
type LineStore interface {
	// Add keeps a line; it may keep it elsewhere than in line.
	Add(line []byte)
	// All gives back every line kept, in order (nil when they cannot be
	// read back: the store says why to its owner).
	All() [][]byte
}

// idSet is the ids a batch took: pi's 8 hex digits as a number (4 bytes a
// key instead of a string's header and bytes, for a batch of millions),
// any other as itself.
type idSet struct {
	hex   map[uint32]struct{}
	other map[string]struct{}
}

// hexID is id as a number when it is 8 lowercase hex digits.
func hexID(id string) (uint32, bool) {
	if len(id) != 8 {
		return 0, false
	}
	var v uint32
	for i := 0; i < 8; i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func (s *idSet) has(id string) bool {
	if v, ok := hexID(id); ok {
		_, in := s.hex[v]
		return in
	}
	_, in := s.other[id]
	return in
}

func (s *idSet) add(id string) {
	if v, ok := hexID(id); ok {
		if s.hex == nil {
			s.hex = map[uint32]struct{}{}
		}
		s.hex[v] = struct{}{}
		return
	}
	if s.other == nil {
		s.other = map[string]struct{}{}
	}
	s.other[id] = struct{}{}
}

// NewBuilder starts a batch. Entries attach at the leaf pi would resume at:
// the last entry of the file.
func (t *Tree) NewBuilder() *Builder {
	b := &Builder{t: t, Now: sessions.Now}
	if leaf := t.Leaf(); leaf != nil {
		b.leaf = leaf.ID
	}
	return b
}

// Leaf is the id new entries attach to.
func (b *Builder) Leaf() string { return b.leaf }

// SetLeaf moves where the next entry attaches ("" for a new root).
func (b *Builder) SetLeaf(id string) { b.leaf = id }

func (b *Builder) inUse(id string) bool { return b.used.has(id) || b.t.byID[id] != nil }

// Len is the number of entries built.
func (b *Builder) Len() int { return b.n }

// built is the lines built, read back from Out when it holds them.
func (b *Builder) built() [][]byte {
	if b.Out != nil {
		return b.Out.All()
	}
	return b.Lines
}

// Has reports whether id names an entry of the tree or of this batch.
func (b *Builder) Has(id string) bool { return b.inUse(id) }

// Entry builds an entry of type typ with the given members, attached to
// parent, in pi's key order: type, [prefix fields], id, parentId, timestamp,
// the rest. It returns the new id.
func (b *Builder) Entry(typ string, parent string, members ...Member) string {
	return b.entry(b.newID(), typ, parent, members...)
}

func (b *Builder) newID() string {
	id := sessions.NewEntryID(b.inUse)
	b.used.add(id)
	return id
}

func (b *Builder) entry(id, typ, parent string, members ...Member) string {
	var o jsjson.Builder
	o.String("type", typ)
	rest := members
	if pre, ok := prefixKeys[typ]; ok {
		rest = nil
		for _, m := range members {
			if contains(pre, m.Key) {
				o.Raw(m.Key, m.Val)
			} else {
				rest = append(rest, m)
			}
		}
	}
	o.String("id", id)
	if parent == "" {
		o.Raw("parentId", []byte("null"))
	} else {
		o.String("parentId", parent)
	}
	o.String("timestamp", b.Now())
	for _, m := range rest {
		o.Raw(m.Key, m.Val)
	}
	if b.Out != nil {
		b.Out.Add(o.Bytes())
	} else {
		b.Lines = append(b.Lines, o.Bytes())
		b.IDs = append(b.IDs, id)
	}
	b.n++
	b.leaf = id
	return id
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// message appends the message msg, as JSON.stringify writes it.
func (b *Builder) message(msg []byte) string {
	return b.Entry(schema.TypeMessage, b.leaf, Member{"message", msg})
}

// UserText appends a user message with the given text, as pi records a
// prompt.
func (b *Builder) UserText(text string, nowMs float64) string {
	return b.message(userMessage(text, nowMs))
}

// userMessage is a user message with the given text, as pi records a
// prompt.
func userMessage(text string, nowMs float64) []byte {
	var m jsjson.Builder
	m.String("role", schema.RoleUser)
	var block jsjson.Builder
	block.String("type", schema.BlockText)
	block.String("text", text)
	m.Raw("content", append(append([]byte{'['}, block.Bytes()...), ']'))
	m.Number("timestamp", nowMs)
	return m.Bytes()
}

var newlines = regexp.MustCompile(`[\r\n]+`)

// SessionName sanitizes a name as pi's appendSessionInfo does.
func SessionName(name string) string { return jsjson.Trim(newlines.ReplaceAllString(name, " ")) }

// Name appends a session_info entry (pi's /name); "" clears the name.
func (b *Builder) Name(name string) string { return b.name(jsjson.Quote(nil, SessionName(name))) }

// name appends a session_info entry with the sanitized name, encoded.
func (b *Builder) name(quoted []byte) string {
	return b.Entry(schema.TypeSessionInfo, b.leaf, Member{"name", quoted})
}

// Label sets (or with "" clears) the label of an entry (pi's
// appendLabelChange).
func (b *Builder) Label(target, label string) (string, error) {
	if !b.inUse(target) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, target)
	}
	var lab []byte
	if label != "" {
		lab = jsjson.Quote(nil, label)
	}
	return b.Entry(schema.TypeLabel, b.leaf, Member{"targetId", jsjson.Quote(nil, target)}, Member{"label", lab}), nil
}

// MoveLeaf records a leaf move to target ("" for before the first entry):
// a custom entry under target that adds nothing to the context, so that pi
// opening the file resumes at target.
func (b *Builder) MoveLeaf(target string) (string, error) {
	data := []byte(`{"leaf":null}`)
	if target != "" {
		if !b.inUse(target) {
			return "", fmt.Errorf("%w: %s", ErrNotFound, target)
		}
		var d jsjson.Builder
		d.String("leaf", target)
		data = d.Bytes()
	}
	return b.Entry(schema.TypeCustom, target,
		Member{"customType", jsjson.Quote(nil, LeafRecordType)},
		Member{"data", data}), nil
}

// BranchSummary appends a branch_summary under from ("" for a new root), as
// pi's branchWithSummary: fromId is the leaf being left ("root" when none).
func (b *Builder) BranchSummary(from string, summary []byte, extra ...Member) (string, error) {
	if from != "" && !b.inUse(from) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, from)
	}
	fromID := b.leaf
	if b.n == 0 {
		fromID = b.t.LeafID() // the entry a leaf record points at
	}
	if fromID == "" {
		fromID = "root"
	}
	members := []Member{{"fromId", jsjson.Quote(nil, fromID)}, {"summary", summary}}
	members = append(members, extra...)
	return b.Entry(schema.TypeBranchSummary, from, members...), nil
}

// LabelTarget is the entry that has a label text: of several, the one
// labelled last.
func (t *Tree) LabelTarget(label string) (string, bool) {
	id, seq := "", -1
	for target, l := range t.labels {
		if l.Text == label && l.seq > seq {
			id, seq = target, l.seq
		}
	}
	return id, seq >= 0
}

// Resolve turns an entry id or a label into an entry id. Either may end in
// "^", git's notation for the entry's parent ("^^" the grandparent, and so
// on; see Up): "" with ok true is before the first entry. An id or label
// that itself ends in "^" is taken as it is.
func (t *Tree) Resolve(ref string) (string, bool) {
	if id, ok := t.resolveName(ref); ok {
		return id, true
	}
	return resolveUp(ref, t.resolveName, t.Up)
}

// resolveName turns an entry id or a label into an entry id.
func (t *Tree) resolveName(ref string) (string, bool) {
	if t.byID[ref] != nil {
		return ref, true
	}
	return t.LabelTarget(ref)
}

// resolveUp resolves a reference that ends in carets: name resolves what
// precedes them, taking as few carets off as it can (so an id ending in
// "^" is found), and up goes up one generation per caret taken off.
func resolveUp(ref string, name func(string) (string, bool), up func(id string, n int) (string, bool)) (string, bool) {
	for k := 1; k < len(ref) && ref[len(ref)-k] == '^'; k++ {
		if id, ok := name(ref[:len(ref)-k]); ok {
			return up(id, k)
		}
	}
	return "", false
}

// Up is the entry up generations above id (its parent for 1), as the tree
// has it: the parent of a root, or of an entry whose parent is not in the
// file, is "" (before the first entry), and nothing is above that.
func (t *Tree) Up(id string, up int) (string, bool) {
	n := t.byID[id]
	if n == nil {
		return "", false
	}
	for ; up > 0; up-- {
		if n == nil {
			return "", false
		}
		n = n.Parent
		t.walked(1)
	}
	if n == nil {
		return "", true
	}
	return n.ID, true
}

// ForkLines returns the lines of a copy of the whole session (pi's
// forkFrom): a new header with parentSession pointing to source, then every
// entry as pi writes it.
func (t *Tree) ForkLines(id, ts, cwd, source string) [][]byte {
	lines := [][]byte{sessions.HeaderLine(id, ts, cwd, source)}
	for _, e := range t.entries {
		lines = append(lines, jsjson.AppendCanonical(nil, e.Raw))
	}
	return lines
}

// BranchedLines returns the lines of a new session holding the path from the
// root to leaf, with labels re-created at its end (pi's
// createBranchedSession). With leaf "" (before the first entry: the parent
// of a root, as Resolve gives it) it is the new session's header alone, as
// pi's /fork from a session's first prompt makes it.
func (t *Tree) BranchedLines(leaf, id, ts, cwd, source string) ([][]byte, error) {
	if leaf == "" {
		return [][]byte{sessions.HeaderLine(id, ts, cwd, source)}, nil
	}
	path := t.PathTo(leaf)
	if len(path) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, leaf)
	}
	lines := [][]byte{sessions.HeaderLine(id, ts, cwd, source)}
	replacement := map[string]string{}
	var pending []string
	parent := ""
	inPath := map[string]bool{}
	for _, e := range path {
		if e.Type == schema.TypeLabel {
			pending = append(pending, e.ID)
			continue
		}
		for _, l := range pending {
			replacement[l] = e.ID
		}
		pending = pending[:0]
		keys, vals := jsjson.ObjectMembers(e.Raw)
		var o jsjson.Builder
		for i, k := range keys {
			v := vals[i]
			switch k {
			case "parentId":
				if parent == "" {
					v = []byte("null")
				} else {
					v = jsjson.Quote(nil, parent)
				}
			case "firstKeptEntryId":
				if e.Type == schema.TypeCompaction {
					if fk, ok := e.Str("firstKeptEntryId"); ok && fk != e.ID {
						if r, ok := replacement[fk]; ok {
							v = jsjson.Quote(nil, r)
						}
					}
				}
			}
			o.Raw(k, jsjson.AppendCanonical(nil, v))
		}
		if !contains(keys, "parentId") {
			if parent == "" {
				o.Raw("parentId", []byte("null"))
			} else {
				o.String("parentId", parent)
			}
		}
		lines = append(lines, o.Bytes())
		parent = e.ID
		inPath[e.ID] = true
	}
	used := map[string]bool{}
	for k := range inPath {
		used[k] = true
	}
	for _, target := range t.labelOrder {
		if !inPath[target] {
			continue
		}
		l := t.labels[target]
		lid := sessions.NewEntryID(func(s string) bool { return used[s] })
		used[lid] = true
		var o jsjson.Builder
		o.String("type", schema.TypeLabel)
		o.String("id", lid)
		if parent == "" {
			o.Raw("parentId", []byte("null"))
		} else {
			o.String("parentId", parent)
		}
		o.Raw("timestamp", l.Timestamp)
		o.String("targetId", target)
		o.String("label", l.Text)
		lines = append(lines, o.Bytes())
		parent = lid
	}
	return lines, nil
}

func str(s string) []byte { return jsjson.Quote(nil, s) }

// ThinkingLevel appends a thinking_level_change (pi's
// appendThinkingLevelChange).
func (b *Builder) ThinkingLevel(level string) string {
	return b.Entry(schema.TypeThinkingLevelChange, b.leaf, Member{"thinkingLevel", str(level)})
}

// ModelChange appends a model_change (pi's appendModelChange).
func (b *Builder) ModelChange(provider, modelID string) string {
	return b.Entry(schema.TypeModelChange, b.leaf, Member{"provider", str(provider)}, Member{"modelId", str(modelID)})
}

// Usage appends a usage entry (pi's appendUsage); note is left out when
// empty.
func (b *Builder) Usage(kind, provider, model string, usage []byte, note string) string {
	var n []byte
	if note != "" {
		n = str(note)
	}
	return b.Entry(schema.TypeUsage, b.leaf, Member{"kind", str(kind)}, Member{"provider", str(provider)},
		Member{"model", str(model)}, Member{"usage", usage}, Member{"note", n})
}

// Custom appends a custom entry, which adds nothing to the context (pi's
// appendCustomEntry).
func (b *Builder) Custom(customType string, data []byte) string {
	return b.Entry(schema.TypeCustom, b.leaf, Member{"customType", str(customType)}, Member{"data", data})
}

// CustomMessage appends a custom_message, which the context shows as a
// custom-role message (pi's appendCustomMessageEntry).
func (b *Builder) CustomMessage(customType string, content, display, details []byte) string {
	return b.Entry(schema.TypeCustomMessage, b.leaf, Member{"customType", str(customType)},
		Member{"content", content}, Member{"display", display}, Member{"details", details})
}

// Compaction appends a compaction at the leaf (pi's appendCompaction):
// firstKept "" makes the compaction keep nothing before it (it points at
// itself), and the system message in effect is recorded so that the
// compacted context keeps it. extra members (a retainedTail) follow.
func (b *Builder) Compaction(summary []byte, firstKept string, tokensBefore, details, usage, fromHook []byte, extra ...Member) (string, error) {
	if firstKept != "" && !b.inUse(firstKept) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, firstKept)
	}
	id := b.newID()
	if firstKept == "" {
		firstKept = id
	}
	ts := b.Now()
	now := b.Now
	b.Now = func() string { return ts }
	defer func() { b.Now = now }()
	members := []Member{{"summary", summary}, {"firstKeptEntryId", str(firstKept)},
		{"tokensBefore", tokensBefore}, {"details", details}, {"usage", usage}, {"fromHook", fromHook}}
	if sys := currentSystemMessage(b.context().Messages); sys != nil {
		members = append(members, Member{"systemMessage", setMember(sys, "timestamp",
			jsjson.FormatNumber(nil, jsjson.DateValue(str(ts))))})
	}
	return b.entry(id, schema.TypeCompaction, b.leaf, append(members, extra...)...), nil
}

// context is the context at the builder's leaf.
func (b *Builder) context() *Context { return b.tree().ContextAt(b.leaf) }

// tree is the tree with this batch's entries added (the tree itself when
// the batch is empty).
func (b *Builder) tree() *Tree {
	if b.n == 0 {
		return b.t
	}
	l, err := sessions.Parse(append(append(append([]byte(nil), b.t.Header.Raw...), '\n'), joinLines(b.built())...))
	if err != nil {
		return b.t
	}
	return New(&sessions.Log{Header: b.t.Header, Entries: append(append([]*sessions.Entry(nil), b.t.entries...), l.Entries...)})
}

func joinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

// currentSystemMessage is pi-ai's getCurrentSystemMessage: every system
// message replayed in order (texts joined, sections merged, tools added and
// removed), or nil when there is none.
func currentSystemMessage(msgs [][]byte) []byte {
	var texts []string
	var sectionKeys []string
	sections := map[string][]byte{}
	var toolNames []string
	tools := map[string][]byte{}
	var timestamp []byte
	seen := false
	for _, m := range msgs {
		if role, _ := jsjson.Str(m, "role"); role != schema.RoleSystem {
			continue
		}
		seen = true
		if timestamp == nil {
			timestamp = jsjson.Get(m, "timestamp")
			if jsjson.KindOf(timestamp) == jsjson.Null {
				timestamp = nil
			}
		}
		if t := contentText(jsjson.Get(m, "content"), "\n"); t != "" {
			texts = append(texts, t)
		}
		keys, vals := jsjson.ObjectMembers(jsjson.Get(m, "sections"))
		for i, k := range keys {
			if jsjson.KindOf(vals[i]) == jsjson.Null {
				if _, ok := sections[k]; ok {
					delete(sections, k)
					sectionKeys = removeString(sectionKeys, k)
				}
				continue
			}
			if _, ok := sections[k]; !ok {
				sectionKeys = append(sectionKeys, k)
			}
			sections[k] = vals[i]
		}
		jsjson.Elements(jsjson.Get(m, "toolsRemoved"), func(tool []byte) bool {
			name, _ := jsjson.Str(tool, "name")
			if _, ok := tools[name]; ok {
				delete(tools, name)
				toolNames = removeString(toolNames, name)
			}
			return true
		})
		jsjson.Elements(jsjson.Get(m, "toolsAdded"), func(tool []byte) bool {
			name, _ := jsjson.Str(tool, "name")
			if _, ok := tools[name]; !ok {
				toolNames = append(toolNames, name)
			}
			tools[name] = tool
			return true
		})
	}
	if !seen || (timestamp == nil && len(tools) == 0) {
		return nil
	}
	var o jsjson.Builder
	o.String("role", schema.RoleSystem)
	o.String("content", strings.Join(texts, "\n\n"))
	if len(sectionKeys) > 0 {
		var so jsjson.Builder
		for _, k := range sectionKeys {
			so.Raw(k, sections[k])
		}
		o.Raw("sections", so.Bytes())
	}
	if len(toolNames) > 0 {
		arr := []byte{'['}
		for i, n := range toolNames {
			if i > 0 {
				arr = append(arr, ',')
			}
			arr = append(arr, tools[n]...)
		}
		o.Raw("toolsAdded", append(arr, ']'))
	}
	if timestamp == nil {
		timestamp = []byte("0")
	}
	o.Raw("timestamp", timestamp)
	return o.Bytes()
}

func removeString(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// contentText is pi-ai's contentText: a string, or the text blocks joined.
func contentText(content []byte, sep string) string {
	if jsjson.KindOf(content) == jsjson.String {
		s, _ := jsjson.Unquote(content)
		return s
	}
	var parts []string
	jsjson.Elements(content, func(b []byte) bool {
		if typ, _ := jsjson.Str(b, "type"); typ == schema.BlockText {
			t, _ := jsjson.Str(b, "text")
			parts = append(parts, t)
		}
		return true
	})
	return strings.Join(parts, sep)
}

// replacement is a context_edit's replacement, checked and encoded: as
// given, and as it is for an assistant or toolResult target (string
// content as one text block).
type replacement struct{ asGiven, blocks []byte }

// prepareReplacement checks and encodes a replacement, which needs no
// session.
func prepareReplacement(v []byte) (*replacement, error) {
	if jsjson.KindOf(v) != jsjson.Null {
		content := jsjson.Get(v, "content")
		if jsjson.KindOf(v) != jsjson.Object || (jsjson.KindOf(content) != jsjson.String && jsjson.KindOf(content) != jsjson.Array) {
			return nil, fmt.Errorf("%w: the replacement must be null or an object with string or array content", ErrInvalid)
		}
	}
	rep := jsjson.AppendCanonical(nil, v)
	r := &replacement{rep, rep}
	if c := jsjson.Get(rep, "content"); jsjson.KindOf(c) == jsjson.String {
		var blk jsjson.Builder
		blk.String("type", schema.BlockText)
		blk.Raw("text", c)
		var o jsjson.Builder
		o.Raw("content", append(append([]byte{'['}, blk.Bytes()...), ']'))
		r.blocks = o.Bytes()
	}
	return r, nil
}

// contextEdit appends a context_edit of target with a prepared
// replacement, checking what needs the session.
func (b *Builder) contextEdit(target string, r *replacement) (string, error) {
	n := b.t.byID[target]
	if n == nil {
		return "", fmt.Errorf("%w: %s", ErrNotFound, target)
	}
	onBranch := false
	for _, e := range b.tree().PathTo(b.leaf) {
		if e.ID == target {
			onBranch = true
		}
	}
	if !onBranch {
		return "", fmt.Errorf("%w: entry %s is not on the active branch", ErrInvalid, target)
	}
	rep := r.asGiven
	switch {
	case n.Type == schema.TypeCustomMessage:
	case n.Type == schema.TypeMessage && (n.Role == schema.RoleUser || n.Role == schema.RoleAssistant || n.Role == schema.RoleToolResult):
		if n.Role != schema.RoleUser {
			rep = r.blocks
		}
	default:
		return "", fmt.Errorf("%w: entry %s does not contribute editable model content", ErrInvalid, target)
	}
	return b.Entry(schema.TypeContextEdit, b.leaf, Member{"targetId", str(target)}, Member{"replacement", rep}), nil
}

// Rebase points the batch at t, the same session read again, so that a
// batch checked piece by piece checks each piece against the session as it
// is then. The batch keeps its entries, ids and leaf.
func (b *Builder) Rebase(t *Tree) { b.t = t }
