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
	return countTreeViews(f.s.v, ss, time.Now())[f.key()]
}

func (f *treeViewFile) content() ([]byte, time.Time, error) { return f.s.render(f.key(), f.make) }

func (f *treeViewFile) size() (int64, time.Time, error) { return f.s.renderSize(f.key(), f.count) }

func (f *treeViewFile) knownSize() (int64, time.Time, bool) { return f.s.knownSize(f.key(), f.count) }

// promptsFile is prompts.txt.
type promptsFile struct{ inSession }

func newPromptsFile(s sessionRef) *promptsFile { return &promptsFile{inSession{s}} }

func renderPrompts(ss *session) []byte { return render.Prompts(ss.Tree) }

// countTreeViews counts the sizes of the seven views of ss's version (the
// label times' as they read at now) and records them with its file. ss.mu
// is held.
func countTreeViews(v *View, ss *session, now time.Time) map[string]int64 {
	v.treeCounts.Add(1)
	sizes := make(map[string]int64, len(tree.Filters)+2)
	counted := render.TreeViewSizes(ss.Tree, ss.Tree.FileLeafID(), v.opts.Home, v.loc(), now)
	for f, n := range counted.Filters {
		sizes[tree.Filter(f).FileName()] = n
	}
	sizes[v.timesKey(now)] = counted.Times
	sizes[promptsName] = render.PromptsSize(ss.Tree)
	cache.RecordSizes(ss.File, sizes)
	return sizes
}

func (f *promptsFile) content() ([]byte, time.Time, error) {
	return f.s.render(promptsName, renderPrompts)
}

func (f *promptsFile) count(ss *session) int64 {
	return countTreeViews(f.s.v, ss, time.Now())[promptsName]
}

func (f *promptsFile) size() (int64, time.Time, error) {
	return f.s.renderSize(promptsName, f.count)
}

func (f *promptsFile) knownSize() (int64, time.Time, bool) {
	return f.s.knownSize(promptsName, f.count)
}

// treeTimesFile is tree-times.txt: tree.txt's rows with the label times
// pi shows when its T key is on. They read relative to the day ("15:04"
// today), so its rendering and size are kept under a key of the day, in
// the usage reports' time zone.
type treeTimesFile struct{ inSession }

func newTreeTimesFile(s sessionRef) *treeTimesFile { return &treeTimesFile{inSession{s}} }

// timesKey is tree-times.txt's key at now: what it shows holds until the
// next midnight.
func (v *View) timesKey(now time.Time) string {
	return treeTimesName + "\x00" + render.LabelTimesExpire(now, v.loc()).Format(time.RFC3339)
}

// loc is the time zone of the usage reports and the label times.
func (v *View) loc() *time.Location {
	if v.opts.TimeZone != nil {
		return v.opts.TimeZone
	}
	return time.Local
}

func (f *treeTimesFile) content() ([]byte, time.Time, error) {
	now := time.Now()
	v := f.s.v
	return f.s.render(v.timesKey(now), func(ss *session) []byte {
		return render.TreeTimesText(ss.Tree, ss.Tree.FileLeafID(), tree.FilterDefault, v.opts.Home, v.loc(), now)
	})
}

func (f *treeTimesFile) count(now time.Time) func(ss *session) int64 {
	return func(ss *session) int64 { return countTreeViews(f.s.v, ss, now)[f.s.v.timesKey(now)] }
}

func (f *treeTimesFile) size() (int64, time.Time, error) {
	now := time.Now()
	return f.s.renderSize(f.s.v.timesKey(now), f.count(now))
}

func (f *treeTimesFile) knownSize() (int64, time.Time, bool) {
	now := time.Now()
	return f.s.knownSize(f.s.v.timesKey(now), f.count(now))
}

var (
	_ costly = (*treeTimesFile)(nil)
	_ costly = (*treeViewFile)(nil)
	_ costly = (*promptsFile)(nil)
	_ sizer  = (*treeViewFile)(nil)
	_ sizer  = (*promptsFile)(nil)
)
