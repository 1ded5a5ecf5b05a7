package view

import (
	"errors"
	"syscall"
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// sessionRef names one session of the store; the values inside a session
// folder hold it and fetch the session's current state on every call.
type sessionRef struct {
	v             *View
	project, name string
}

// scope is the session's: every view of it shows its file's owner.
func (s sessionRef) scope() Scope { return Scope{s.project, s.name} }

// inSession is a value of a session's scope.
type inSession struct{ s sessionRef }

func (p inSession) scope() Scope { return p.s.scope() }

// with runs fn with the parsed, up-to-date session.
func (s sessionRef) with(fn func(*session) error) error {
	return s.v.withSession(s.project, s.name, fn)
}

func (s sessionRef) meta() (*sessions.File, error) { return s.v.meta(s.project, s.name) }

// activity is the session's latest activity: its folder's mtime.
func (s sessionRef) activity() (time.Time, error) {
	f, err := s.meta()
	if err != nil {
		return time.Time{}, err
	}
	return activity(f), nil
}

// leaf is the id the session stands at, read from the file's end when the
// session is not parsed already.
func (s sessionRef) leaf() (string, error) {
	f, err := s.meta()
	if err != nil {
		return "", err
	}
	if leaf, ok := s.v.cache.ParsedLeaf(f); ok {
		return leaf, nil
	}
	if t, err := f.Tail(); err == nil && t.LeafKnown {
		return t.Leaf, nil
	}
	var leaf string
	err = s.with(func(ss *session) error { leaf = ss.Tree.LeafID(); return nil })
	return leaf, err
}

// ino numbers a view of this session: names.Ino("s", project, name, parts...).
func (s sessionRef) ino(parts ...string) uint64 { return s.inoBase().With(parts...).Ino() }

// inoBase is the hash every view of this session starts with.
func (s sessionRef) inoBase() names.Hash { return names.Seed.With("s", s.project, s.name) }

// render returns a rendering of the session, made once per version, and the
// session's latest activity.
func (s sessionRef) render(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Make: make})
	return s.renderNow(key, make)
}

// renderPlanned is render for context.json at the session's leaf: a
// session whose parse is not held is rendered from its version's plan
// when it has one (see cache.FromPlan).
func (s sessionRef) renderPlanned(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Make: make, Planned: true})
	if f, err := s.meta(); err == nil {
		if data, ok := s.v.cache.FromPlan(s.project, s.name, f, key); ok {
			return data, activity(f), nil
		}
	}
	return s.renderNow(key, make)
}

// renderNow is render without reading ahead.
func (s sessionRef) renderNow(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	var data []byte
	var f *sessions.File
	err := s.with(func(ss *session) error {
		data = cache.Rendered(s.v.cache, ss, key, cache.BytesSize, func() []byte { return make(ss) })
		f = ss.File
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	cache.RecordSize(f, key, int64(len(data)))
	return data, activity(f), nil
}

// renderSize is the size of a rendering of the session, counted by count
// (which gives exactly the rendering's length) without keeping the bytes;
// cat renders them. It is recorded with the index's version of the file,
// so that stat counts a view at most once while the file is unchanged,
// however often the session is evicted.
func (s sessionRef) renderSize(key string, count func(*session) int64) (int64, time.Time, error) {
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Count: count})
	return s.size(key, count)
}

// knownSize is the size of a rendering of the session if it was counted
// already for the index's version of its file (see renderSize), without
// parsing: a listing answers READDIRPLUS with it. It tells reading ahead
// as renderSize does, so that a walk whose sizes were made ready ahead
// keeps reading ahead.
func (s sessionRef) knownSize(key string, count func(*session) int64) (int64, time.Time, bool) {
	f, err := s.meta()
	if err != nil {
		return 0, time.Time{}, false
	}
	n, ok := cache.RecordedSize(f, key)
	if !ok {
		return 0, time.Time{}, false
	}
	s.v.cache.Saw(s.project, s.name, cache.Work{Key: key, Count: count})
	return n, activity(f), true
}

// size is renderSize without reading ahead.
func (s sessionRef) size(key string, count func(*session) int64) (int64, time.Time, error) {
	f, err := s.meta()
	if err != nil {
		return 0, time.Time{}, err
	}
	if n, ok := cache.RecordedSize(f, key); ok {
		return n, activity(f), nil
	}
	var n int64
	err = s.with(func(ss *session) error {
		n, f = cache.SizeOf(ss, key, count), ss.File
		return nil
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, activity(f), nil
}

// Names in a session folder.
const (
	sessionFileName = "session.jsonl"
	headerName      = "header.json"
	infoName        = "info.json"
	contextName     = "context.json"
	transcriptName  = "transcript.md"
	htmlName        = "transcript.html"
	nameName        = "name"
	leafName        = "leaf"
	appendName      = "append"
	forkName        = "fork"
	errorsName      = "errors"
	currentName     = "current"
	entriesName     = "entries"
	branchesName    = "branches"
	treeName        = "tree"
	labelsName      = "labels"
)

// sessionDir is one session: its file, views of it, and its controls.
type sessionDir struct{ inSession }

func newSessionDir(v *View, project, name string) *sessionDir {
	return &sessionDir{inSession{sessionRef{v, project, name}}}
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
}

func (d *sessionDir) list() ([]Child, error) {
	if _, err := d.s.meta(); err != nil {
		return nil, err
	}
	d.s.v.cache.FolderListed(d.s.project, d.s.name)
	out := make([]Child, 0, len(sessionFiles))
	for _, e := range sessionFiles {
		c, err := d.lookup(e.name)
		if errors.Is(err, ErrNotFound) && (e.name == currentName || e.name == parentName) {
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
	s := d.s
	for _, e := range sessionFiles {
		if e.name != name {
			continue
		}
		ino := s.ino(name)
		if name == currentName {
			leaf, err := s.leaf()
			if err != nil {
				return Child{}, err
			}
			if leaf == "" {
				return Child{}, ErrNotFound
			}
			// A new leaf is a new link to the kernel, which keeps
			// link targets.
			ino = s.ino(name, leaf)
		}
		if name == parentName {
			p, err := s.parent()
			if err != nil {
				return Child{}, err
			}
			// A parent found again elsewhere is a new link to the kernel.
			ino = s.ino(name, p.Project, p.Name)
		}
		make := e.make
		return Child{name, e.mode, ino, func() Node { return make(s) }}, nil
	}
	return Child{}, ErrNotFound
}

// sessionFile is session.jsonl: the file on disk, byte for byte, read
// straight from it so that its size and content are always the file's.
type sessionFile struct{ inSession }

func newSessionFile(s sessionRef) *sessionFile { return &sessionFile{inSession{s}} }

func (f *sessionFile) path() (string, error) {
	m, err := f.s.meta()
	if err != nil {
		return "", err
	}
	return m.Path, nil
}

// stat gives the file's size and mtime as the index knows them.
func (f *sessionFile) stat() (int64, time.Time, error) {
	m, err := f.s.meta()
	if err != nil {
		return 0, time.Time{}, err
	}
	return m.Sig.Size, time.Unix(0, m.Sig.Mtime), nil
}

// headerFile is header.json: the header line, indented. It needs only the
// header, not the parsed session.
type headerFile struct{ inSession }

func newHeaderFile(s sessionRef) *headerFile { return &headerFile{inSession{s}} }

func (f *headerFile) content() ([]byte, time.Time, error) {
	m, err := f.s.meta()
	if err != nil {
		return nil, time.Time{}, err
	}
	mt := time.Unix(0, m.Sig.Mtime)
	if t := tree.DateTime(m.Header.Timestamp); !t.IsZero() {
		mt = t
	}
	return render.Indent(nil, m.Header.Raw), mt, nil
}

// infoFile is info.json.
type infoFile struct{ inSession }

func newInfoFile(s sessionRef) *infoFile { return &infoFile{inSession{s}} }

func renderInfo(ss *session) []byte {
	return render.Info(ss.Path, ss.Tree, time.Unix(0, ss.File.Sig.Mtime))
}

func (f *infoFile) content() ([]byte, time.Time, error) {
	return f.s.render(infoName, renderInfo)
}

// size renders info.json and keeps it: it is small, and what it costs is
// the summary it shows, which counting would compute as well.
func (f *infoFile) size() (int64, time.Time, error) { return f.s.renderSize(infoName, f.count) }

func (f *infoFile) knownSize() (int64, time.Time, bool) { return f.s.knownSize(infoName, f.count) }

func (f *infoFile) count(ss *session) int64 {
	return int64(len(cache.Rendered(f.s.v.cache, ss, infoName, cache.BytesSize, func() []byte { return renderInfo(ss) })))
}

// pathView is a rendering of a path of the session: to its leaf (the
// session folder's view) or to one entry (branches/<id>/). The branch at
// the file's last entry shares the session's own rendering.
type pathView struct {
	inSession
	at     string
	branch bool
	name   string
	// make renders the view with at as the leaf ("": the session's leaf),
	// and count gives its length without keeping it.
	make  func(ss *session, at string) []byte
	count func(ss *session, at string) int64
}

func (v pathView) content() ([]byte, time.Time, error) {
	if !v.branch && v.name == contextName {
		return v.s.renderPlanned(v.name, func(ss *session) []byte { return v.make(ss, "") })
	}
	if !v.branch {
		return v.s.render(v.name, func(ss *session) []byte { return v.make(ss, "") })
	}
	return v.s.renderEntry(v.at, v.name+"\x00"+v.at, func(ss *session) []byte { return v.make(ss, v.at) }, v.sharedKey)
}

func (v pathView) knownSize() (int64, time.Time, bool) {
	if v.branch {
		return 0, time.Time{}, false
	}
	return v.s.knownSize(v.name, func(ss *session) int64 { return v.count(ss, "") })
}

func (v pathView) size() (int64, time.Time, error) {
	if !v.branch {
		return v.s.renderSize(v.name, func(ss *session) int64 { return v.count(ss, "") })
	}
	return v.s.renderEntrySize(v.at, v.name+"\x00"+v.at, func(ss *session) int64 { return v.count(ss, v.at) }, v.sharedKey)
}

// sharedKey is the key of the session's own view that a branch's view at
// the leaf is the same as, "" when they differ: context.json and
// transcript.md are; transcript.html is not (the session's page shows
// the whole session).
func (v pathView) sharedKey(*session) string {
	if v.name == htmlName {
		return ""
	}
	return v.name
}

// pathOf is the path a view shows: to the leaf, or to entry at.
func pathOf(v *View, ss *session, at string) []*sessions.Entry {
	if at == "" {
		return ss.Tree.LeafPath()
	}
	return pathTo(v, ss, at)
}

// contextOf is the context at the session's leaf, or at entry at.
func contextOf(ss *session, at string) *tree.Context {
	if at == "" {
		return ss.Tree.Context()
	}
	return ss.Tree.ContextAt(at)
}

// contextFile is context.json: the model context at the session's leaf, or
// at a branch's entry.
type contextFile struct{ pathView }

func newContextFile(s sessionRef, at string, branch bool) *contextFile {
	// The context at the session's leaf leaves its plan.
	context := func(ss *session, at string) *tree.Context {
		c := contextOf(ss, at)
		if at == "" {
			s.v.cache.KeepPlan(ss, c)
		}
		return c
	}
	f := &contextFile{pathView: pathView{inSession{s}, at, branch, contextName, func(ss *session, at string) []byte {
		return render.ContextJSON(context(ss, at))
	}, func(ss *session, at string) int64 {
		return render.ContextSize(context(ss, at))
	}}}
	return f
}

// transcriptFile is transcript.md: the root→leaf path (or root→entry, for a
// branch) as Markdown.
type transcriptFile struct{ pathView }

func newTranscriptFile(s sessionRef, at string, branch bool) *transcriptFile {
	f := &transcriptFile{pathView: pathView{inSession{s}, at, branch, transcriptName, func(ss *session, at string) []byte {
		return render.Transcript(pathOf(s.v, ss, at))
	}, func(ss *session, at string) int64 {
		return render.TranscriptSize(pathOf(s.v, ss, at))
	}}}
	return f
}

// followed is where an open transcript stands: the version of the file it
// rendered and the path it rendered.
type followed struct {
	file *sessions.File
	tree *tree.Tree
	path []*sessions.Entry
}

// path is the path the transcript shows: to the leaf, or to the branch's
// entry.
func (f *transcriptFile) path(ss *session) []*sessions.Entry {
	return pathOf(f.s.v, ss, f.at)
}

func (f *transcriptFile) start() ([]byte, any, error) {
	var st followed
	var data []byte
	err := f.s.with(func(ss *session) error {
		if f.branch && ss.Tree.Node(f.at) == nil {
			return ErrNotFound
		}
		st = followed{ss.File, ss.Tree, f.path(ss)}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	data, _, err = f.content()
	return data, st, err
}

// extend follows the session when it grew under the path shown: the
// current leaf's path starts with it (the same entries, not re-read).
func (f *transcriptFile) extend(state any) ([]byte, any, error) {
	st := state.(followed)
	m, err := f.s.meta()
	if err != nil || m == st.file {
		return nil, nil, nil
	}
	var more []byte
	var next any
	err = f.s.with(func(ss *session) error {
		if ss.Tree != st.tree && !ss.File.Sig.Grew(st.file.Sig) {
			return nil // rewritten: not the entries shown
		}
		path, n := ss.Tree.LeafPath(), len(st.path)
		if len(path) < n || (n > 0 && !sameEntry(path[n-1], st.path[n-1])) {
			return nil
		}
		more = render.Transcript(path[n:])
		next = followed{ss.File, ss.Tree, path}
		return nil
	})
	return more, next, err
}

// sameEntry tells whether two parsed entries are the same line of the
// file (parsed again after eviction, they are other values).
func sameEntry(a, b *sessions.Entry) bool {
	return a == b || (a.ID == b.ID && a.Offset == b.Offset && a.Seq == b.Seq)
}

// htmlFile is transcript.html: one self-contained page. The session
// folder's shows the whole session (the path to the leaf, the other
// branches, the tree); a branch's, the path to its entry. A page is read
// whole, so it does not follow the session: a new open (a reload) shows
// what was added.
type htmlFile struct{ pathView }

func newHTMLFile(s sessionRef, at string, branch bool) *htmlFile {
	f := &htmlFile{pathView: pathView{inSession{s}, at, branch, htmlName, func(ss *session, at string) []byte {
		if !branch {
			return render.SessionHTML(ss.Tree)
		}
		return render.TranscriptHTML(render.PageOf(ss.Tree), pathOf(s.v, ss, at))
	}, func(ss *session, at string) int64 {
		if !branch {
			return render.SessionHTMLSize(ss.Tree, s.v.opts.Home)
		}
		return render.TranscriptHTMLSize(render.PageOf(ss.Tree), pathOf(s.v, ss, at))
	}}}
	return f
}

// nameFile reads the session's name (an empty line when unnamed).
type nameFile struct{ inSession }

func newNameFile(s sessionRef) *nameFile { return &nameFile{inSession{s}} }

func (f *nameFile) content() ([]byte, time.Time, error) {
	return f.s.render(nameName, func(ss *session) []byte { return []byte(ss.Tree.Name() + "\n") })
}

func (f *nameFile) size() (int64, time.Time, error) { return f.s.renderSize(nameName, nameSize) }

func (f *nameFile) knownSize() (int64, time.Time, bool) { return f.s.knownSize(nameName, nameSize) }

func nameSize(ss *session) int64 { return int64(len(ss.Tree.Name()) + 1) }

// leafFile reads the id of the entry the session stands at (an empty line
// when there is none).
type leafFile struct{ inSession }

func newLeafFile(s sessionRef) *leafFile { return &leafFile{inSession{s}} }

func (f *leafFile) content() ([]byte, time.Time, error) {
	leaf, err := f.s.leaf()
	if err != nil {
		return nil, time.Time{}, err
	}
	mt, err := f.s.activity()
	return []byte(leaf + "\n"), mt, err
}

// appendFile is append: each line written adds an entry at the leaf.
// Reading it gives nothing.
type appendFile struct{ inSession }

func newAppendFile(s sessionRef) *appendFile { return &appendFile{inSession{s}} }

func (f *appendFile) content() ([]byte, time.Time, error) {
	mt, err := f.s.activity()
	return nil, mt, err
}

// forkFile is fork: each line written makes a new session from this one;
// reading the same open file then gives the new sessions' paths.
type forkFile struct{ inSession }

func newForkFile(s sessionRef) *forkFile { return &forkFile{inSession{s}} }

func (f *forkFile) content() ([]byte, time.Time, error) {
	mt, err := f.s.activity()
	return nil, mt, err
}

// errorsFile is errors: why recent writes to the session were refused,
// newest last, each line with its time. It lives in memory only.
type errorsFile struct{ inSession }

func newErrorsFile(s sessionRef) *errorsFile { return &errorsFile{inSession{s}} }

func (f *errorsFile) content() ([]byte, time.Time, error) {
	data, mt := f.s.v.refused.get(f.s.project + "/" + f.s.name)
	if mt.IsZero() {
		var err error
		if mt, err = f.s.activity(); err != nil {
			return nil, mt, err
		}
	}
	return data, mt, nil
}

// currentLink is current -> branches/<leaf>.
type currentLink struct{ inSession }

func newCurrentLink(s sessionRef) *currentLink { return &currentLink{inSession{s}} }

func (l *currentLink) target() (string, time.Time, error) {
	leaf, err := l.s.leaf()
	if err != nil {
		return "", time.Time{}, err
	}
	if leaf == "" {
		return "", time.Time{}, ErrNotFound
	}
	mt, err := l.s.activity()
	return branchesName + "/" + names.Encode(leaf), mt, err
}

// The views whose size takes parsing or rendering the session, and the
// controls.
var (
	_ costly   = (*contextFile)(nil)
	_ costly   = (*transcriptFile)(nil)
	_ costly   = (*htmlFile)(nil)
	_ costly   = (*infoFile)(nil)
	_ costly   = (*nameFile)(nil)
	_ costly   = (*usageFile)(nil)
	_ writable = (*nameFile)(nil)
	_ writable = (*leafFile)(nil)
	_ writable = (*appendFile)(nil)
	_ writable = (*forkFile)(nil)
	_ writable = (*newFile)(nil)
)

func (f *nameFile) control() control   { return nameControl(f.s) }
func (f *leafFile) control() control   { return leafControl(f.s) }
func (f *appendFile) control() control { return appendControl(f.s) }
func (f *forkFile) control() control   { return forkControl{f.s} }
