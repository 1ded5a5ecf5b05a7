package tree

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
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
	"custom":         {"customType", "data"},
	"custom_message": {"customType", "content", "display", "details"},
}

// Builder makes entries for one batch of appends against a tree: ids are
// unique in the file and in the batch, and each entry becomes the leaf for
// the next one, as in pi's SessionManager.
type Builder struct {
	t     *Tree
	used  map[string]bool
	leaf  string // id of the parent for the next entry; "" for null
	Lines [][]byte
	// IDs holds the id of each built entry.
	IDs []string
	// Now gives the timestamp of new entries (sessions.Now by default).
	Now func() string
}

// NewBuilder starts a batch. Entries attach at the leaf pi would resume at:
// the last entry of the file.
func (t *Tree) NewBuilder() *Builder {
	b := &Builder{t: t, used: map[string]bool{}, Now: sessions.Now}
	if leaf := t.Leaf(); leaf != nil {
		b.leaf = leaf.ID
	}
	return b
}

// Leaf is the id new entries attach to.
func (b *Builder) Leaf() string { return b.leaf }

// SetLeaf moves where the next entry attaches ("" for a new root).
func (b *Builder) SetLeaf(id string) { b.leaf = id }

func (b *Builder) inUse(id string) bool { return b.used[id] || b.t.byID[id] != nil }

// Has reports whether id names an entry of the tree or of this batch.
func (b *Builder) Has(id string) bool { return b.inUse(id) }

// Entry builds an entry of type typ with the given members, attached to
// parent, in pi's key order: type, [prefix fields], id, parentId, timestamp,
// the rest. It returns the new id.
func (b *Builder) Entry(typ string, parent string, members ...Member) string {
	id := sessions.NewEntryID(b.inUse)
	b.used[id] = true
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
	b.Lines = append(b.Lines, o.Bytes())
	b.IDs = append(b.IDs, id)
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

// Message appends a message (pi's appendMessage). msg must be a JSON object.
func (b *Builder) Message(msg []byte) (string, error) {
	c, err := jsjson.Canonical(msg)
	if err != nil || jsjson.KindOf(c) != jsjson.Object {
		return "", fmt.Errorf("%w: a message must be a JSON object", ErrInvalid)
	}
	return b.Entry("message", b.leaf, Member{"message", c}), nil
}

// UserText appends a user message with the given text, as pi records a
// prompt.
func (b *Builder) UserText(text string, nowMs float64) string {
	var m jsjson.Builder
	m.String("role", "user")
	var block jsjson.Builder
	block.String("type", "text")
	block.String("text", text)
	m.Raw("content", append(append([]byte{'['}, block.Bytes()...), ']'))
	m.Number("timestamp", nowMs)
	return b.Entry("message", b.leaf, Member{"message", m.Bytes()})
}

var newlines = regexp.MustCompile(`[\r\n]+`)

// SessionName sanitizes a name as pi's appendSessionInfo does.
func SessionName(name string) string { return jsjson.Trim(newlines.ReplaceAllString(name, " ")) }

// Name appends a session_info entry (pi's /name); "" clears the name.
func (b *Builder) Name(name string) string {
	return b.Entry("session_info", b.leaf, Member{"name", jsjson.Quote(nil, SessionName(name))})
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
	return b.Entry("label", b.leaf, Member{"targetId", jsjson.Quote(nil, target)}, Member{"label", lab}), nil
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
	return b.Entry("custom", target,
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
	if len(b.Lines) == 0 {
		fromID = b.t.LeafID() // the entry a leaf record points at
	}
	if fromID == "" {
		fromID = "root"
	}
	members := []Member{{"fromId", jsjson.Quote(nil, fromID)}, {"summary", summary}}
	members = append(members, extra...)
	return b.Entry("branch_summary", from, members...), nil
}

// labelTarget resolves a label text to the entry carrying it (the most
// recently labelled one when several share it).
func (t *Tree) labelTarget(label string) (string, bool) {
	for i := len(t.labelOrder) - 1; i >= 0; i-- {
		if t.labels[t.labelOrder[i]].Text == label {
			return t.labelOrder[i], true
		}
	}
	return "", false
}

// Resolve turns an entry id or a label into an entry id.
func (t *Tree) Resolve(ref string) (string, bool) {
	if t.byID[ref] != nil {
		return ref, true
	}
	return t.labelTarget(ref)
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
// createBranchedSession).
func (t *Tree) BranchedLines(leaf, id, ts, cwd, source string) ([][]byte, error) {
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
		if e.Type == "label" {
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
				if e.Type == "compaction" {
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
		o.String("type", "label")
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
