package tree

import (
	"strings"

	"github.com/pifs/pifs/internal/names"
)

// The names a mount shows for a session's entries and labels (package
// names spells them), and the entry a user names by any of them.

// EntryFileExt ends the names of entry files (entries/<id>.json).
const EntryFileExt = ".json"

// eachID calls fn for the id of every entry that has one, until it
// returns true.
func (t *Tree) eachID(fn func(string) bool) {
	for _, e := range t.Entries() {
		if e.ID != "" && fn(e.ID) {
			return
		}
	}
}

// FindShown resolves a name spelled for an id with room bytes left
// (names.EncodeIn) to an entry id.
func (t *Tree) FindShown(name string, room int) (string, bool) {
	return names.Match(name, room, func(id string) bool { return t.Node(id) != nil }, t.eachID)
}

// ShownLabels returns the labels by the names they are spelled as, the
// newest of a text first, and the text of each name.
func (t *Tree) ShownLabels() (spelled []string, texts map[string]string) {
	texts = map[string]string{}
	for _, id := range t.LabelsNewestFirst() {
		l, _ := t.Label(id)
		name := names.Encode(l.Text)
		if _, ok := texts[name]; !ok {
			texts[name] = l.Text
			spelled = append(spelled, name)
		}
	}
	return spelled, texts
}

// ResolveShown finds the entry a user names: an id (also one built
// earlier in b's batch; b may be nil), a label, or a name a mount shows
// for an entry, alone or at the end of a path (entries/<id>.json,
// branches/<id>, labels/<label>). Surrounding blanks are forgiven.
func (t *Tree) ResolveShown(b *Builder, ref string) (string, bool) {
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
	if name, ok := strings.CutSuffix(base, EntryFileExt); ok {
		if id, ok := t.FindShown(name, len(EntryFileExt)); ok {
			return id, true
		}
	}
	if id, ok := t.FindShown(base, 0); ok {
		return id, true
	}
	if _, texts := t.ShownLabels(); texts[base] != "" {
		return t.Resolve(texts[base])
	}
	return "", false
}
