package view

import (
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/tree"
)

// The /tree views and prompts.txt of a session folder: tree.txt is pi's
// /tree with its default filter, tree-<mode>.txt its other four filter
// modes, each with the file's last entry as the active leaf (pi's
// getLeafId: after a leaf move by pifs, its record), and prompts.txt the
// user messages pi's /fork offers. Like context.json they are costly: a
// listing gives them by name alone until their size is counted, and stat
// counts a size without keeping the rendering. ls -l stats the six one
// after the other: the first stat counts all six together (one walk of
// the tree, each entry's row text once) and records them with the file's
// version, so the other five are known.

// treeViewFile is one filter mode's view, tree.txt or tree-<mode>.txt.
type treeViewFile struct {
	inSession
	filter tree.Filter
}

func newTreeViewFile(s sessionRef, f tree.Filter) *treeViewFile {
	return &treeViewFile{inSession{s}, f}
}

func (f *treeViewFile) key() string { return f.filter.FileName() }

func (f *treeViewFile) make(ss *session) []byte {
	return render.TreeText(ss.Tree, ss.Tree.FileLeafID(), f.filter, f.s.v.opts.Home)
}

func (f *treeViewFile) count(ss *session) int64 {
	return countTreeViews(f.s.v, ss)[f.key()]
}

func (f *treeViewFile) content() ([]byte, time.Time, error) { return f.s.render(f.key(), f.make) }

func (f *treeViewFile) size() (int64, time.Time, error) { return f.s.renderSize(f.key(), f.count) }

func (f *treeViewFile) knownSize() (int64, time.Time, bool) { return f.s.knownSize(f.key(), f.count) }

// promptsFile is prompts.txt.
type promptsFile struct{ inSession }

func newPromptsFile(s sessionRef) *promptsFile { return &promptsFile{inSession{s}} }

func renderPrompts(ss *session) []byte { return render.Prompts(ss.Tree) }

// countTreeViews counts the sizes of the six views of ss's version and
// records them with its file. ss.mu is held.
func countTreeViews(v *View, ss *session) map[string]int64 {
	v.treeCounts.Add(1)
	sizes := make(map[string]int64, len(tree.Filters)+1)
	for f, n := range render.TreeTextSizes(ss.Tree, ss.Tree.FileLeafID(), v.opts.Home) {
		sizes[tree.Filter(f).FileName()] = n
	}
	sizes[promptsName] = render.PromptsSize(ss.Tree)
	cache.RecordSizes(ss.File, sizes)
	return sizes
}

func (f *promptsFile) content() ([]byte, time.Time, error) {
	return f.s.render(promptsName, renderPrompts)
}

func (f *promptsFile) count(ss *session) int64 { return countTreeViews(f.s.v, ss)[promptsName] }

func (f *promptsFile) size() (int64, time.Time, error) {
	return f.s.renderSize(promptsName, f.count)
}

func (f *promptsFile) knownSize() (int64, time.Time, bool) {
	return f.s.knownSize(promptsName, f.count)
}

var (
	_ costly = (*treeViewFile)(nil)
	_ costly = (*promptsFile)(nil)
	_ sizer  = (*treeViewFile)(nil)
	_ sizer  = (*promptsFile)(nil)
)
