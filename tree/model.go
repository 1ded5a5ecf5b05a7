package tree

import (
	"strings"
	"unicode"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// The model and thinking level of a path, as pi resumes a session with
// them (createAgentSession): the model is the branch's selection
// (getBranchSelection): the last model_change on the path, or the model
// of the last assistant message after it that a physical model answered
// (a message whose api is "pi-virtual" failed routing and names none),
// whichever comes later; the thinking level is the last
// thinking_level_change's. pi uses them for a session that has a message
// in its context; it looks the model up among those it knows (and has a
// key for), falls back to its default model when it finds none, and
// clamps the level to what the model supports. pifs knows no models: it
// reads what the path records, with no virtual model registered.

// ThinkingLevels are the levels pi offers (THINKING_LEVEL_OPTIONS, and
// --thinking's), in its order.
var ThinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh", "max"}

// virtualAPI is the api of a message no physical model answered.
const virtualAPI = "pi-virtual"

// Selection is the model and thinking level a path records. The values are
// raw JSON; ok is false where the path records none.
type Selection struct {
	Provider, ModelID []byte
	HasModel          bool
	ThinkingLevel     []byte
	HasThinkingLevel  bool
}

// Model is the model as pi names it, "provider/id" ("" when none is
// recorded); a value that is not a string is written as JSON.
func (s Selection) Model() string {
	if !s.HasModel {
		return ""
	}
	return valueText(s.Provider) + "/" + valueText(s.ModelID)
}

// Thinking is the thinking level ("" when none is recorded).
func (s Selection) Thinking() string {
	if !s.HasThinkingLevel {
		return ""
	}
	return valueText(s.ThinkingLevel)
}

// valueText is a raw value as text: a string as itself, anything else as
// JSON, a missing one as "undefined".
func valueText(v []byte) string {
	switch jsjson.KindOf(v) {
	case jsjson.String:
		s, _ := jsjson.Unquote(v)
		return s
	case jsjson.Invalid:
		return "undefined"
	}
	return string(jsjson.AppendCanonical(nil, v))
}

// SelectionAt is the selection of the path from the root to the entry id
// ("" or an unknown id: the empty path).
func (t *Tree) SelectionAt(id string) Selection {
	return selectionOf(t.PathTo(id))
}

// LeafSelection is the selection of the path pi resumes: to the file's
// last entry (through a leaf record, which records neither).
func (t *Tree) LeafSelection() Selection { return selectionOf(t.LeafPath()) }

func selectionOf(path []*sessions.Entry) Selection {
	var s Selection
	for i := len(path) - 1; i >= 0 && !(s.HasModel && s.HasThinkingLevel); i-- {
		e := path[i]
		switch {
		case e.Type == schema.TypeThinkingLevelChange && !s.HasThinkingLevel:
			s.ThinkingLevel, s.HasThinkingLevel = e.Get("thinkingLevel"), true
		case e.Type == schema.TypeModelChange && !s.HasModel:
			s.Provider, s.ModelID, s.HasModel = e.Get("provider"), e.Get("modelId"), true
		case e.Type == schema.TypeMessage && e.Role == schema.RoleAssistant && !s.HasModel:
			if api := jsjson.Get(e.Msg, "api"); !(jsjson.KindOf(api) == jsjson.String && jsjson.KeyIs(api, virtualAPI)) {
				s.Provider, s.ModelID, s.HasModel = e.MsgProvider, e.MsgModel, true
			}
		}
	}
	return s
}

// ParseModel reads a model as pi's /model takes one by name,
// "provider/id": the text is trimmed, the provider is what comes before
// the first "/" and the id the rest, each trimmed. A model pi could not
// name is an error that says why: no "/", an empty provider or id, white
// space or control characters inside either. (pi also looks the model up
// in its catalog, which pifs does not have.)
func ParseModel(ref string) (provider, id string, err error) {
	text := strings.TrimSpace(ref)
	p, rest, ok := strings.Cut(text, "/")
	p, rest = strings.TrimSpace(p), strings.TrimSpace(rest)
	switch {
	case text == "":
		return "", "", refuse(ErrInvalid, "a model is provider/id, such as anthropic/claude-sonnet-4-5; the line is empty")
	case !ok:
		return "", "", refuse(ErrInvalid, "a model is provider/id, such as anthropic/claude-sonnet-4-5; %q has no provider", text)
	case p == "":
		return "", "", refuse(ErrInvalid, "model %q has an empty provider", text)
	case rest == "":
		return "", "", refuse(ErrInvalid, "model %q has an empty id", text)
	case strings.IndexFunc(p+rest, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "", "", refuse(ErrInvalid, "model %q has white space or control characters in its provider or id", text)
	}
	return p, rest, nil
}

// ParseThinkingLevel reads a thinking level as pi's /thinking takes one:
// trimmed, in any case, one of ThinkingLevels; anything else is refused
// with pi's own message.
func ParseThinkingLevel(s string) (string, error) {
	norm := strings.ToLower(strings.TrimSpace(s))
	for _, l := range ThinkingLevels {
		if l == norm {
			return l, nil
		}
	}
	return "", refuse(ErrInvalid, "unknown thinking level %q; available levels: %s", strings.TrimSpace(s), strings.Join(ThinkingLevels, ", "))
}

// SetModel appends the model_change pi's /model appends when it switches
// to ref ("provider/id", see ParseModel), at the builder's leaf: pi appends
// one even when the model is the one in force. (pi then sets the thinking
// level again for the new model, clamped to what it supports, which pifs
// does not know; it clamps the level when it resumes the session.)
func (b *Builder) SetModel(ref string) (string, error) {
	p, id, err := ParseModel(ref)
	if err != nil {
		return "", err
	}
	return b.ModelChange(p, id), nil
}

// SetThinkingLevel appends the thinking_level_change pi's /thinking
// appends for level (see ParseThinkingLevel), at the builder's leaf. Like
// pi's setThinkingLevel it appends only a change: "" and no error when the
// level the path records is that one already.
func (b *Builder) SetThinkingLevel(level string) (string, error) {
	l, err := ParseThinkingLevel(level)
	if err != nil {
		return "", err
	}
	if cur := b.selection(); cur.HasThinkingLevel && cur.Thinking() == l && jsjson.KindOf(cur.ThinkingLevel) == jsjson.String {
		return "", nil
	}
	return b.ThinkingLevel(l), nil
}

// selection is the selection at the builder's leaf, this batch's entries
// included.
func (b *Builder) selection() Selection {
	t := b.tree()
	if b.leaf == "" {
		return Selection{}
	}
	return t.SelectionAt(b.leaf)
}
