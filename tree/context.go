package tree

import (
	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// Context is the model context at a leaf, as pi's buildSessionContext
// returns it. Messages are raw JSON values; ThinkingLevel and Model are raw
// values too, nil when pi leaves them undefined.
type Context struct {
	Messages      [][]byte
	ThinkingLevel []byte
	Model         []byte
}

// JSON encodes the context as JSON.stringify does (compact).
func (c *Context) JSON() []byte {
	n := 64 + len(c.ThinkingLevel) + len(c.Model)
	for _, m := range c.Messages {
		n += len(m) + 1
	}
	buf := hugemem.Bytes(0, n)
	buf = append(buf, `{"messages":[`...)
	for i, m := range c.Messages {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, m...)
	}
	buf = append(buf, ']')
	if c.ThinkingLevel != nil {
		buf = append(buf, `,"thinkingLevel":`...)
		buf = append(buf, c.ThinkingLevel...)
	}
	if c.Model != nil {
		buf = append(buf, `,"model":`...)
		buf = append(buf, c.Model...)
	}
	return append(buf, '}')
}

// ContextAt returns the context with the entry of the given id as leaf; ""
// gives the context before the first entry (pi's resetLeaf).
func (t *Tree) ContextAt(id string) *Context {
	if id == "" {
		return t.contextOf(nil)
	}
	n := t.byID[id]
	if n == nil {
		return t.contextOf(nil)
	}
	return t.contextOf(t.pathFrom(n.Entry))
}

// Context returns the context at the session's leaf (the last entry of the
// file, whether or not it has an id), which is what pi resumes with.
func (t *Tree) Context() *Context {
	leaf := t.Leaf()
	if leaf == nil {
		return t.contextOf(nil)
	}
	if c := t.extendContext(leaf); c != nil {
		t.leafCtx = leafContext{leaf, c}
		return c
	}
	path := t.pathFrom(leaf)
	c := t.contextOf(path)
	t.leafCtx = leafContext{}
	if !hasEdits(path) && t.rooted(path) {
		t.leafCtx = leafContext{leaf, c}
	}
	return c
}

// rooted reports whether a path starts at a root, rather than where a
// parent cycle cut the walk.
func (t *Tree) rooted(path []*sessions.Entry) bool {
	if len(path) == 0 {
		return true
	}
	first := path[0]
	return first.ParentID == "" || first.ParentID == first.ID || t.byID[first.ParentID] == nil
}

// leafContext remembers the context at the leaf, so that when a session
// grows by appending to its branch, the new context extends the old one
// instead of walking the whole path again. Add forgets it when an entry
// changes an existing path (a duplicate id, an orphan's parent arriving).
type leafContext struct {
	leaf *sessions.Entry
	ctx  *Context
}

// maxExtend bounds the walk from a new leaf back to the remembered one.
const maxExtend = 1024

// extendContext returns the context at leaf built from the remembered one,
// or nil when it cannot be: leaf does not descend from the remembered leaf
// within maxExtend entries, or an entry in between is a compaction or a
// context edit, which change earlier messages.
func (t *Tree) extendContext(leaf *sessions.Entry) *Context {
	old := t.leafCtx
	if old.ctx == nil {
		return nil
	}
	if leaf == old.leaf {
		return old.ctx
	}
	var added []*sessions.Entry
	for e := leaf; e != old.leaf; {
		if len(added) == maxExtend || e == nil {
			return nil
		}
		if e.Type == schema.TypeCompaction || e.Type == schema.TypeContextEdit {
			return nil
		}
		added = append(added, e)
		if e.ParentID == "" {
			return nil
		}
		p := t.byID[e.ParentID]
		if p == nil || p.Entry == e {
			return nil
		}
		e = p.Entry
	}
	c := &Context{ThinkingLevel: old.ctx.ThinkingLevel, Model: old.ctx.Model}
	c.Messages = old.ctx.Messages[:len(old.ctx.Messages):len(old.ctx.Messages)]
	for i := len(added) - 1; i >= 0; i-- {
		e := added[i]
		switch {
		case e.Type == schema.TypeThinkingLevelChange:
			c.ThinkingLevel = e.Get("thinkingLevel")
		case e.Type == schema.TypeModelChange:
			c.Model = modelOf(e.Get("provider"), e.Get("modelId"))
		case e.Type == schema.TypeMessage && e.Role == schema.RoleAssistant:
			c.Model = modelOf(e.MsgProvider, e.MsgModel)
		}
		c.Messages = append(c.Messages, entryMessages(e)...)
	}
	return c
}

func hasEdits(path []*sessions.Entry) bool {
	for _, e := range path {
		if e.Type == schema.TypeContextEdit {
			return true
		}
	}
	return false
}

func modelOf(provider, modelID []byte) []byte {
	var b jsjson.Builder
	b.Raw("provider", provider)
	b.Raw("modelId", modelID)
	return b.Bytes()
}

func (t *Tree) contextOf(path []*sessions.Entry) *Context {
	c := &Context{ThinkingLevel: []byte(`"off"`), Model: []byte("null"), Messages: make([][]byte, 0, len(path))}
	// Settings come from the last entries that set them.
	for i, level, model := len(path)-1, false, false; i >= 0 && !(level && model); i-- {
		switch e := path[i]; {
		case e.Type == schema.TypeThinkingLevelChange && !level:
			c.ThinkingLevel, level = e.Get("thinkingLevel"), true
		case e.Type == schema.TypeModelChange && !model:
			c.Model, model = modelOf(e.Get("provider"), e.Get("modelId")), true
		case e.Type == schema.TypeMessage && e.Role == schema.RoleAssistant && !model:
			c.Model, model = modelOf(e.MsgProvider, e.MsgModel), true
		}
	}
	entries, tail := contextEntries(path)
	edits := map[string][]byte{}
	for _, e := range entries {
		if e.Type == schema.TypeContextEdit {
			if target, ok := e.Str("targetId"); ok {
				edits[target] = e.Get("replacement")
			}
		}
	}
	for i, e := range entries {
		if e.Type == schema.TypeCompaction && i > 0 {
			continue // only the newest compaction, at index 0, contributes
		}
		msgs := entryMessages(e)
		if i == 0 && tail != nil {
			msgs = append(msgs, tail...)
		}
		if rep, ok := edits[e.ID]; ok && e.ID != "" {
			msgs = applyEdit(msgs, rep)
		}
		c.Messages = append(c.Messages, msgs...)
	}
	return c
}

// contextEntries is pi's buildContextEntries: the path, or when it holds a
// compaction, the newest compaction followed by the kept entries (from
// firstKeptEntryId, system messages dropped) and the entries after it. A
// compaction carrying a retainedTail array is a self-contained checkpoint:
// its retained messages stand for everything before it.
func contextEntries(path []*sessions.Entry) (entries []*sessions.Entry, tail [][]byte) {
	idx := -1
	for i, e := range path {
		if e.Type == schema.TypeCompaction {
			idx = i
		}
	}
	if idx < 0 {
		return path, nil
	}
	comp := path[idx]
	out := []*sessions.Entry{comp}
	if rt := comp.Get("retainedTail"); jsjson.KindOf(rt) == jsjson.Array {
		tail = [][]byte{}
		jsjson.Elements(rt, func(v []byte) bool {
			tail = append(tail, v)
			return true
		})
		return append(out, path[idx+1:]...), tail
	}
	firstKept, hasFirstKept := comp.Str("firstKeptEntryId")
	found := false
	for _, e := range path[:idx] {
		if hasFirstKept && e.ID == firstKept {
			found = true
		}
		if found && !(e.Type == schema.TypeMessage && e.Role == schema.RoleSystem) {
			out = append(out, e)
		}
	}
	return append(out, path[idx+1:]...), nil
}

// entryMessages is pi's sessionEntryToContextMessages.
func entryMessages(e *sessions.Entry) [][]byte {
	switch e.Type {
	case schema.TypeMessage:
		m := e.Message()
		if m == nil {
			return nil // pi throws here; pifs shows the rest
		}
		nullContent := e.MsgContent == nil || jsjson.KindOf(e.MsgContent) == jsjson.Null
		switch {
		case e.Role == schema.RoleSystem && nullContent:
			return [][]byte{setMember(m, "content", []byte(`""`))}
		case (e.Role == schema.RoleUser || e.Role == schema.RoleAssistant || e.Role == schema.RoleToolResult) && nullContent:
			return [][]byte{setMember(m, "content", []byte(`[]`))}
		}
		return [][]byte{m}
	case schema.TypeCustomMessage:
		content := e.Get("content")
		if content == nil || jsjson.KindOf(content) == jsjson.Null {
			content = []byte("[]")
		}
		var b jsjson.Builder
		b.String("role", schema.RoleCustom)
		b.Raw("customType", e.Get("customType"))
		b.Raw("content", content)
		b.Raw("display", e.Get("display"))
		b.Raw("details", e.Get("details"))
		b.Number("timestamp", e.Time)
		return [][]byte{b.Bytes()}
	case schema.TypeBranchSummary:
		summary := e.Get("summary")
		if !jsjson.Truthy(summary) {
			return nil
		}
		var b jsjson.Builder
		b.String("role", schema.RoleBranchSummary)
		b.Raw("summary", summary)
		b.Raw("fromId", e.Get("fromId"))
		b.Number("timestamp", e.Time)
		return [][]byte{b.Bytes()}
	case schema.TypeCompaction:
		var b jsjson.Builder
		b.String("role", schema.RoleCompactionSummary)
		b.Raw("summary", e.Get("summary"))
		b.Raw("tokensBefore", e.Get("tokensBefore"))
		b.Number("timestamp", e.Time)
		if sys := e.Get("systemMessage"); jsjson.Truthy(sys) {
			return [][]byte{sys, b.Bytes()}
		}
		return [][]byte{b.Bytes()}
	}
	return nil
}

// applyEdit is pi's projectContextEntry with an edit: null removes the
// messages; otherwise user, assistant, toolResult and custom messages get the
// replacement content (a string becomes one text block for assistant and
// toolResult).
func applyEdit(msgs [][]byte, rep []byte) [][]byte {
	if rep == nil {
		return msgs // pi throws on a missing replacement; keep the entry
	}
	if jsjson.KindOf(rep) == jsjson.Null {
		return nil
	}
	content := jsjson.Get(rep, "content")
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		role, _ := jsjson.Str(m, "role")
		switch role {
		case schema.RoleUser, schema.RoleAssistant, schema.RoleToolResult, schema.RoleCustom:
		default:
			out = append(out, m)
			continue
		}
		c := content
		if (role == schema.RoleAssistant || role == schema.RoleToolResult) && jsjson.KindOf(content) == jsjson.String {
			var b jsjson.Builder
			b.String("type", schema.BlockText)
			b.Raw("text", content)
			c = append(append([]byte{'['}, b.Bytes()...), ']')
		}
		out = append(out, setMember(m, "content", c))
	}
	return out
}

// setMember returns {...obj, key: val}: the key keeps its place when present
// and goes last otherwise; a nil val drops it (undefined). Other members are
// copied as they are.
func setMember(obj []byte, key string, val []byte) []byte {
	keys, vals := jsjson.ObjectMembers(obj)
	var b jsjson.Builder
	seen := false
	for i, k := range keys {
		if k == key {
			b.Raw(key, val)
			seen = true
			continue
		}
		b.Raw(k, vals[i])
	}
	if !seen {
		b.Raw(key, val)
	}
	return b.Bytes()
}
