package view

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// sessionDir is one session: its file, views of it, and its controls.
type sessionDir struct{ inSession }

func newSessionDir(v *View, project, name string) *sessionDir {
	return &sessionDir{inSession{newSessionRef(v, project, name)}}
}

// sessionDirChild is a project's child that is a session folder, its
// numbers' base hashed once for the folder and what it makes.
func sessionDirChild(v *View, project, name string) Child {
	base := sessionBase(project, name)
	return Child{name, syscall.S_IFDIR, base.Ino(), func() Node {
		return &sessionDir{inSession{sessionRef{v, project, name, base}}}
	}}
}

func (d *sessionDir) mtime() (time.Time, error) { return d.s.activity() }

// sessionFiles is a session folder's files, declared once: the listing and
// the lookup both read it. current is listed only while there is a leaf.
var sessionFiles = []struct {
	name string
	mode uint32
	make func(s sessionRef) Node
}{
	{sessionFileName, syscall.S_IFREG, func(s sessionRef) Node { return newSessionFile(s) }},
	{headerName, syscall.S_IFREG, func(s sessionRef) Node { return newHeaderFile(s) }},
	{infoName, syscall.S_IFREG, func(s sessionRef) Node { return newInfoFile(s) }},
	{contextName, syscall.S_IFREG, func(s sessionRef) Node { return newContextFile(s, "", false) }},
	{transcriptName, syscall.S_IFREG, func(s sessionRef) Node { return newTranscriptFile(s, "", false) }},
	{htmlName, syscall.S_IFREG, func(s sessionRef) Node { return newHTMLFile(s, "", false) }},
	{nameName, syscall.S_IFREG, func(s sessionRef) Node { return newNameFile(s) }},
	{leafName, syscall.S_IFREG, func(s sessionRef) Node { return newLeafFile(s) }},
	{appendName, syscall.S_IFREG, func(s sessionRef) Node { return newAppendFile(s) }},
	{forkName, syscall.S_IFREG, func(s sessionRef) Node { return newForkFile(s) }},
	{errorsName, syscall.S_IFREG, func(s sessionRef) Node { return newErrorsFile(s) }},
	{entriesName, syscall.S_IFDIR, func(s sessionRef) Node { return newEntriesDir(s) }},
	{branchesName, syscall.S_IFDIR, func(s sessionRef) Node { return newBranchesDir(s) }},
	{treeName, syscall.S_IFDIR, func(s sessionRef) Node { return newSegmentDir(s, "") }},
	{labelsName, syscall.S_IFDIR, func(s sessionRef) Node { return newLabelsDir(s) }},
	{imagesName, syscall.S_IFDIR, func(s sessionRef) Node { return newImagesDir(s, "") }},
	{currentName, syscall.S_IFLNK, func(s sessionRef) Node { return newCurrentLink(s) }},
	{tree.FilterDefault.FileName(), syscall.S_IFREG, func(s sessionRef) Node { return newTreeViewFile(s, tree.FilterDefault) }},
	{tree.FilterNoTools.FileName(), syscall.S_IFREG, func(s sessionRef) Node { return newTreeViewFile(s, tree.FilterNoTools) }},
	{tree.FilterUserOnly.FileName(), syscall.S_IFREG, func(s sessionRef) Node { return newTreeViewFile(s, tree.FilterUserOnly) }},
	{tree.FilterLabeledOnly.FileName(), syscall.S_IFREG, func(s sessionRef) Node { return newTreeViewFile(s, tree.FilterLabeledOnly) }},
	{tree.FilterAll.FileName(), syscall.S_IFREG, func(s sessionRef) Node { return newTreeViewFile(s, tree.FilterAll) }},
	{promptsName, syscall.S_IFREG, func(s sessionRef) Node { return newPromptsFile(s) }},
	{parentName, syscall.S_IFLNK, func(s sessionRef) Node { return newParentLink(s) }},
	{forksName, syscall.S_IFDIR, func(s sessionRef) Node { return newForksDir(s) }},
	{filesTextName, syscall.S_IFREG, func(s sessionRef) Node { return newFilesView(s, "", false, filesTextName) }},
	{filesJSONName, syscall.S_IFREG, func(s sessionRef) Node { return newFilesView(s, "", false, filesJSONName) }},
	{patchName, syscall.S_IFREG, func(s sessionRef) Node { return newFilesView(s, "", false, patchName) }},
	{changesName, syscall.S_IFDIR, func(s sessionRef) Node { return &changesDir{inSession{s}, "", false, s.activity} }},
	{replyName, syscall.S_IFREG, func(s sessionRef) Node { return newReplyFile(s, "", false) }},
	{modelName, syscall.S_IFREG, func(s sessionRef) Node { return newModelFile(s) }},
	{thinkingName, syscall.S_IFREG, func(s sessionRef) Node { return newThinkingFile(s) }},
	{treeTimesName, syscall.S_IFREG, func(s sessionRef) Node { return newTreeTimesFile(s) }},
}

// sessionFilesByName is sessionFiles sorted by name: a listing made in
// that order needs no sorting.
var sessionFilesByName = func() []int {
	order := make([]int, len(sessionFiles))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(sessionFiles[a].name, sessionFiles[b].name) })
	return order
}()

func (d *sessionDir) list() ([]Child, error) {
	f, err := d.s.meta()
	if err != nil {
		return nil, err
	}
	d.s.v.cache.FolderListed(d.s.project, d.s.name)
	out := make([]Child, 0, len(sessionFiles))
	for _, i := range sessionFilesByName {
		c, err := d.child(i, f)
		if errors.Is(err, ErrNotFound) && (sessionFiles[i].name == currentName || sessionFiles[i].name == parentName) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (d *sessionDir) lookup(name string) (Child, error) {
	for i, e := range sessionFiles {
		if e.name != name {
			continue
		}
		var f *sessions.File
		if name == currentName || name == parentName || name == sessionFileName {
			var err error
			if f, err = d.s.meta(); err != nil {
				return Child{}, err
			}
		}
		return d.child(i, f)
	}
	return Child{}, ErrNotFound
}

// child is the folder's i-th file of sessionFiles; f is the session's
// version, needed for session.jsonl, current and parent.
func (d *sessionDir) child(i int, f *sessions.File) (Child, error) {
	s := d.s
	e := sessionFiles[i]
	ino := s.inoBase().With(e.name)
	switch e.name {
	case sessionFileName:
		// The file itself: another file put in its place is another
		// node to the kernel, which may read the file it was opened on
		// itself (see nodes' passthrough).
		ino = ino.WithInt(int64(f.Sig.Dev)).WithInt(int64(f.Sig.Ino))
	case currentName:
		leaf, err := s.leafOf(f)
		if err != nil {
			return Child{}, err
		}
		if leaf == "" {
			return Child{}, ErrNotFound
		}
		// A new leaf is a new link to the kernel, which keeps link
		// targets.
		ino = ino.With(leaf)
	case parentName:
		p, err := s.parentOf(f)
		if err != nil {
			return Child{}, err
		}
		// A parent found again elsewhere is a new link to the kernel.
		ino = ino.With(p.Project, p.Name)
	}
	make := e.make
	return Child{e.name, e.mode, ino.Ino(), func() Node { return make(s) }}, nil
}

// gathers: a session folder holds parent, a link to another session,
// when its session was forked from one in the store.
func (d *sessionDir) gathers() bool {
	_, err := d.s.parent()
	return err == nil
}
