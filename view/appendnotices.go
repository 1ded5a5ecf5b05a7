package view

import (
	"strings"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// grownNotices is what the kernel must be told of a session whose file is
// the same one as at the version c.Old, as long or longer at c.New. When
// the session is held parsed and only grew since c.Old, that is what the
// new entries changed. Otherwise every view of it the kernel holds is
// looked at again: Reset when it was rewritten (or may have been: same
// size), else Refresh. That costs what the kernel holds of it, which is
// little for a session not held parsed: the kernel is told to forget the
// names in the folders of a session dropped from the cache.
//
// named tells whether the session's by-name/ link kept its name, and link
// is that name ("" when unnamed): known when the session is held parsed
// and no entry added names it, else from the versions' names (grownName).
//
// times tells that only the file's times moved (its bytes are those the
// session holds): a write caught half-way, its mtime set before its size.
// Then info.json alone of the session's views changed.
func (v *View) grownNotices(c sessions.Change) (out []Notice, link string, named, times bool) {
	p, s := c.Project, c.Name
	add := func(do Action, path ...string) { out = append(out, Notice{path, do}) }
	grew := func(t *tree.Tree, added []*sessions.Entry) {
		named = true
		if name := t.Name(); name != "" {
			link = names.Encode(name)
		}
		if len(added) == 0 && c.New.Sig == c.Old.Sig {
			return // looked at again, the same bytes
		}
		if len(added) == 0 && c.New.Sig.Size == c.Old.Sig.Size {
			times = true
			add(Refresh, p, s, infoName)
			return
		}
		add(Grew, p, s)
		for _, e := range added {
			if e.Type == schema.TypeSessionInfo {
				named = false
			}
			if e.ID == "" {
				continue
			}
			// A new name, or an id the file had already, whose name now
			// shows the later entry.
			add(Forget, p, s, entriesName, entryFileName(e.ID))
			add(Forget, p, s, branchesName, names.Encode(e.ID))
		}
		if len(added) > 0 && t.Reshaped(added[0].Seq) {
			// A repeated id or adopted orphans move folders of tree/
			// elsewhere: tree/ is looked at again.
			add(Refresh, p, s, treeName)
			return
		}
		out = append(out, segmentNotices(t, []string{p, s, treeName}, c.Old.Sig.Size, added)...)
	}
	how := cache.Unknown
	if f, err := v.meta(p, s); err == nil {
		how = v.cache.Grown(f, c.Old, c.New, grew)
	}
	switch {
	case how == cache.Rebuilt, how == cache.Unknown && c.New.Sig.Size == c.Old.Sig.Size:
		add(Reset, p, s)
	case how == cache.Unknown:
		add(Refresh, p, s)
	}
	if how != cache.Appended || !named {
		link, named = grownName(c)
	}
	return out, link, named, times && how == cache.Appended
}

// grownName is the by-name/ link of a session that grew under the name it
// had ("" when unnamed): that link alone changed in by-name/. It is known
// when the old version's name was (by-name/ was listed, or the session
// parsed): the new version's is read from the bytes it added.
func grownName(c sessions.Change) (string, bool) {
	if !c.Old.NameKnown() {
		return "", false
	}
	old, err := c.Old.SessionName()
	if err != nil {
		return "", false
	}
	name, err := c.New.SessionName()
	if err != nil || name != old {
		return "", false
	}
	if name == "" {
		return "", true
	}
	return names.Encode(name), true
}

// segmentNotices is what the kernel must be told of tree/ (at path top)
// when the entries added, from the file offset from on, joined tree t. A
// new entry changes the folder of the entry it is added below: that
// folder lists one more file (the entry continues its segment) or one
// more folder (a segment starts there), and when its entry had exactly one
// child before, the entries after it in that folder move into a folder of
// their own (the segment splits), so the names the kernel holds in it are
// looked at again. A leaf record without children shows nowhere: below
// one, the folder of its parent changes too.
func segmentNotices(t *tree.Tree, top []string, from int64, added []*sessions.Entry) []Notice {
	var out []Notice
	type key struct {
		path string
		do   Action
	}
	seen := map[key]bool{}
	add := func(do Action, path []string) {
		if k := (key{strings.Join(path, "/"), do}); !seen[k] {
			seen[k] = true
			out = append(out, Notice{path, do})
		}
	}
	for _, e := range added {
		n := t.Node(e.ID)
		if e.ID == "" || n == nil || n.Entry != e {
			continue
		}
		parent := n.Parent
		if parent == nil || parent.Offset >= from {
			if parent == nil {
				add(Attrs, top) // a new root
			}
			continue // below a new entry: in a folder the kernel never saw
		}
		changed := []*tree.Node{parent}
		if parent.IsLeafRecord() {
			changed = append(changed, parent.Parent)
		}
		for _, x := range changed {
			if x == nil {
				add(Attrs, top)
				continue
			}
			firsts, depth, ok := t.SegmentFolder(x)
			if !ok {
				add(Refresh, top)
				continue
			}
			path := top[:len(top):len(top)]
			for _, id := range firsts {
				path = append(path, names.Encode(id))
			}
			if x.VisibleBefore(from) == 1 {
				add(Refresh, path)
			} else {
				add(Attrs, path)
			}
			if x == parent && len(x.Visible()) == 1 {
				add(Forget, append(path[:len(path):len(path)], pathFileName(depth+1, e)))
			} else if x == parent {
				add(Forget, append(path[:len(path):len(path)], names.Encode(e.ID)))
			}
		}
	}
	return out
}
