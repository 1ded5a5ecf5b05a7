package view

import (
	"time"

	"github.com/pifs/pifs/cache"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

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

// size counts the indented header without making it.
func (f *headerFile) size() (int64, time.Time, error) {
	m, err := f.s.meta()
	if err != nil {
		return 0, time.Time{}, err
	}
	mt := time.Unix(0, m.Sig.Mtime)
	if t := tree.DateTime(m.Header.Timestamp); !t.IsZero() {
		mt = t
	}
	return int64(render.IndentSize(m.Header.Raw)), mt, nil
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
		path := pathOf(s.v, ss, at)
		if c, ok := cache.HeldTranscriptCount(ss, at); ok {
			return render.TranscriptCounted(path, c)
		}
		return render.Transcript(path)
	}, func(ss *session, at string) int64 {
		return cache.TranscriptCount(s.v.cache, ss, at, pathOf(s.v, ss, at)).Size()
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
			if c, ok := cache.HeldSessionPageCount(ss); ok {
				return render.SessionHTMLCounted(ss.Tree, c)
			}
			return render.SessionHTML(ss.Tree)
		}
		return render.TranscriptHTML(render.PageOf(ss.Tree), pathOf(s.v, ss, at))
	}, func(ss *session, at string) int64 {
		if !branch {
			return cache.SessionPageCount(s.v.cache, ss, s.v.opts.Home).Size()
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
	data, mt := f.s.v.refused.Get(f.s.project + "/" + f.s.name)
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
