package tree

import (
	"slices"
	"unicode/utf16"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// What pi records in a branch summary's details when it summarizes the
// branch a /tree move leaves: the files read and the files modified on it,
// from the read, write and edit tool calls of its assistant messages and
// from the details of the branch summaries (not an extension's) already on
// it (collectEntriesForBranchSummary, prepareBranchEntries and
// computeFileLists in pi's compaction code).

// BranchSummaryDetails is a branch summary's details as pi stores them,
// {"readFiles":[...],"modifiedFiles":[...]}, for a move from oldLeaf to
// target ("" for a new root): the files of the entries from oldLeaf up to
// where its path meets target's.
//
// pi reads only the newest part of a branch too long for its model's
// context window; pifs, which knows no model, reads the whole branch.
func (t *Tree) BranchSummaryDetails(oldLeaf, target string) []byte {
	read, modified := branchFiles(t.leftBranch(oldLeaf, target))
	var o jsjson.Builder
	o.Raw("readFiles", jsonArray(read))
	o.Raw("modifiedFiles", jsonArray(modified))
	return o.Bytes()
}

// branchDetails is the details of a branch summary the batch appends under
// to ("" for a new root): the files of the branch it leaves, which ends at
// the fromId the line gives (quoted JSON) or else at the leaf, as
// BranchSummary's fromId does.
func (b *Builder) branchDetails(fromID []byte, to string) []byte {
	old := b.leaf
	if b.n == 0 {
		old = b.t.LeafID()
	}
	if fromID != nil {
		old, _ = jsjson.Unquote(fromID)
	}
	return b.tree().BranchSummaryDetails(old, to)
}

// leftBranch is the entries from oldLeaf up to (not including) the
// deepest entry that is also on target's path, oldest first.
func (t *Tree) leftBranch(oldLeaf, target string) []*sessions.Entry {
	if oldLeaf == "" {
		return nil
	}
	old := t.PathTo(oldLeaf)
	at := make(map[*sessions.Entry]int, len(old))
	for i, e := range old {
		at[e] = i
	}
	path := t.PathTo(target)
	for i := len(path) - 1; i >= 0; i-- {
		if k, ok := at[path[i]]; ok {
			return old[k+1:]
		}
	}
	return old
}

// fileSet is a JavaScript Set of the JSON values it is given: strings and
// numbers are the same value when equal, objects and arrays never.
type fileSet struct {
	vals [][]byte // canonical JSON, in insertion order
	seen map[string]bool
}

func (s *fileSet) add(v []byte) {
	c := jsjson.AppendCanonical(nil, v)
	if k := jsjson.KindOf(c); k != jsjson.Object && k != jsjson.Array {
		if s.seen[string(c)] {
			return
		}
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[string(c)] = true
	}
	s.vals = append(s.vals, c)
}

func (s *fileSet) has(v []byte) bool { return s.seen[string(v)] }

// branchFiles is pi's file lists of the entries of a branch, oldest first:
// the files read but not modified, and the files modified, each sorted as
// JavaScript's sort() sorts them.
func branchFiles(entries []*sessions.Entry) (read, modified [][]byte) {
	var reads, edits, writes fileSet
	for _, e := range entries {
		if e.Type != schema.TypeBranchSummary || jsjson.Truthy(e.Get("fromHook")) {
			continue
		}
		d := e.Get("details")
		if !jsjson.Truthy(d) {
			continue
		}
		jsjson.Elements(jsjson.Get(d, "readFiles"), func(v []byte) bool { reads.add(v); return true })
		jsjson.Elements(jsjson.Get(d, "modifiedFiles"), func(v []byte) bool { edits.add(v); return true })
	}
	// The latest context_edit of an entry of the branch changes what its
	// message holds.
	replaced := map[string][]byte{}
	for _, e := range entries {
		if e.Type == schema.TypeContextEdit {
			if target, ok := e.Str("targetId"); ok {
				replaced[target] = e.Get("replacement")
			}
		}
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Type != schema.TypeMessage || e.Role != schema.RoleAssistant {
			continue // a branch summary takes no tool result: a script's calls do not count
		}
		content := e.MsgContent
		if rep, ok := replaced[e.ID]; ok {
			msgs := applyEdit(entryMessages(e), rep)
			if len(msgs) == 0 {
				continue
			}
			content = jsjson.Get(msgs[0], "content")
		}
		if !mayCall(content) {
			continue
		}
		jsjson.Elements(content, func(b []byte) bool {
			switch op, path, _ := blockOp(b); op {
			case OpRead:
				reads.add(path)
			case OpWrite:
				writes.add(path)
			case OpEdit:
				edits.add(path)
			}
			return true
		})
	}
	var mod fileSet
	for _, v := range edits.vals {
		mod.add(v)
	}
	for _, v := range writes.vals {
		mod.add(v)
	}
	for _, v := range reads.vals {
		if !mod.has(v) {
			read = append(read, v)
		}
	}
	return jsSort(read), jsSort(mod.vals)
}

// jsSort sorts values as Array.prototype.sort() does without a
// comparator: stably, by their String() in UTF-16 code units.
func jsSort(vals [][]byte) [][]byte {
	type keyed struct {
		v []byte
		k []uint16
	}
	ks := make([]keyed, len(vals))
	for i, v := range vals {
		ks[i] = keyed{v, utf16.Encode([]rune(jsText(v)))}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return slices.Compare(a.k, b.k) })
	for i := range ks {
		vals[i] = ks[i].v
	}
	return vals
}

// jsText is String(v) for the values a file list holds: strings, and
// whatever a hand-written details puts there (an array as its JSON, where
// JavaScript would join its elements).
func jsText(v []byte) string {
	switch jsjson.KindOf(v) {
	case jsjson.String:
		s, _ := jsjson.Unquote(v)
		return s
	case jsjson.Object:
		return "[object Object]"
	}
	return string(v)
}

func jsonArray(vals [][]byte) []byte {
	out := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']')
}
