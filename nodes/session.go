package nodes

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
	"github.com/pifs/pifs/view"
)

// sessionRef names one session of the store; nodes inside a session folder
// hold it and fetch the session's current state on every call.
type sessionRef struct {
	r             *Root
	project, name string
}

// with runs fn with the parsed, up-to-date session.
func (s sessionRef) with(fn func(*session) error) error {
	return s.r.st.withSession(s.project, s.name, fn)
}

func (s sessionRef) meta() (*sessions.File, error) { return s.r.st.meta(s.project, s.name) }

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
	if leaf, ok := s.r.st.parsedLeaf(f); ok {
		return leaf, nil
	}
	if t, err := f.Tail(); err == nil && t.LeafKnown {
		return t.Leaf, nil
	}
	var leaf string
	err = s.with(func(ss *session) error { leaf = ss.tree.LeafID(); return nil })
	return leaf, err
}

// ino numbers a view of this session: names.Ino("s", project, name, parts...).
func (s sessionRef) ino(parts ...string) uint64 { return s.inoBase().With(parts...).Ino() }

// inoBase is the hash every view of this session starts with.
func (s sessionRef) inoBase() names.Hash { return names.Seed.With("s", s.project, s.name) }

// render returns a rendering of the session, made once per version, and the
// session's latest activity.
func (s sessionRef) render(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	s.r.ahead.saw(s, aheadWork{key: key, make: make})
	return s.renderNow(key, make)
}

// renderPlanned is render for context.json at the session's leaf: a
// session whose parse is not held is rendered from its version's plan
// when it has one (see plans).
func (s sessionRef) renderPlanned(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	s.r.ahead.saw(s, aheadWork{key: key, make: make, planned: true})
	if data, f, ok := s.r.st.fromPlan(s.project, s.name, key); ok {
		return data, activity(f), nil
	}
	return s.renderNow(key, make)
}

// renderNow is render without reading ahead.
func (s sessionRef) renderNow(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	var data []byte
	var f *sessions.File
	err := s.with(func(ss *session) error {
		data = rendered(s.r.st, ss, key, bytesSize, func() []byte { return make(ss) })
		f = ss.file
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	f.SetSize(key, int64(len(data)))
	return data, activity(f), nil
}

// renderSize is the size of a rendering of the session, counted by count
// (which gives exactly the rendering's length) without keeping the bytes;
// cat renders them. It is recorded with the index's version of the file,
// so that stat counts a view at most once while the file is unchanged,
// however often the session is evicted.
func (s sessionRef) renderSize(key string, count func(*session) int64) (int64, time.Time, error) {
	s.r.ahead.saw(s, aheadWork{key: key, count: count})
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
	n, ok := f.Size(key)
	if !ok {
		return 0, time.Time{}, false
	}
	s.r.ahead.saw(s, aheadWork{key: key, count: count})
	return n, activity(f), true
}

// size is renderSize without reading ahead.
func (s sessionRef) size(key string, count func(*session) int64) (int64, time.Time, error) {
	f, err := s.meta()
	if err != nil {
		return 0, time.Time{}, err
	}
	if n, ok := f.Size(key); ok {
		return n, activity(f), nil
	}
	var n int64
	err = s.with(func(ss *session) error {
		n, f = sizeOf(ss, key, count), ss.file
		return nil
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, activity(f), nil
}

// sizeOf is the size of the rendering key of the session's version: the
// one recorded with its file, the held rendering's, or counted; it is
// recorded with the file. ss.mu is held.
func sizeOf(ss *session, key string, count func(*session) int64) int64 {
	if n, ok := ss.file.Size(key); ok {
		return n
	}
	var n int64
	if data, ok := ss.renders[key].([]byte); ok {
		n = int64(len(data))
	} else {
		n = count(ss)
	}
	ss.file.SetSize(key, n)
	return n
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
type sessionDir struct {
	dir
	s sessionRef
}

var _ = (fs.NodeLookuper)((*sessionDir)(nil))

func newSessionDir(r *Root, project, name string) *sessionDir {
	d := &sessionDir{s: sessionRef{r, project, name}}
	d.dir = dir{r: r, src: d}
	return d
}

func (d *sessionDir) mtime() (time.Time, error) { return d.s.activity() }

// sessionFiles is a session folder's files, declared once: the listing and
// the lookup both read it. current is listed only while there is a leaf.
var sessionFiles = []struct {
	name string
	mode uint32
	make func(s sessionRef) fs.InodeEmbedder
}{
	{sessionFileName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newSessionFile(s) }},
	{headerName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newHeaderFile(s) }},
	{infoName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newInfoFile(s) }},
	{contextName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newContextFile(s, "", false) }},
	{transcriptName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newTranscriptFile(s, "", false) }},
	{htmlName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newHTMLFile(s, "", false) }},
	{nameName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newNameFile(s) }},
	{leafName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newLeafFile(s) }},
	{appendName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newAppendFile(s) }},
	{forkName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newForkFile(s) }},
	{errorsName, syscall.S_IFREG, func(s sessionRef) fs.InodeEmbedder { return newErrorsFile(s) }},
	{entriesName, syscall.S_IFDIR, func(s sessionRef) fs.InodeEmbedder { return newEntriesDir(s) }},
	{branchesName, syscall.S_IFDIR, func(s sessionRef) fs.InodeEmbedder { return newBranchesDir(s) }},
	{treeName, syscall.S_IFDIR, func(s sessionRef) fs.InodeEmbedder { return newSegmentDir(s, "") }},
	{labelsName, syscall.S_IFDIR, func(s sessionRef) fs.InodeEmbedder { return newLabelsDir(s) }},
	{currentName, syscall.S_IFLNK, func(s sessionRef) fs.InodeEmbedder { return newCurrentLink(s) }},
}

func (d *sessionDir) list() ([]child, error) {
	if _, err := d.s.meta(); err != nil {
		return nil, err
	}
	out := make([]child, 0, len(sessionFiles))
	for _, e := range sessionFiles {
		c, err := d.lookup(e.name)
		if errors.Is(err, view.ErrNotFound) && e.name == currentName {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (d *sessionDir) lookup(name string) (child, error) {
	s := d.s
	for _, e := range sessionFiles {
		if e.name != name {
			continue
		}
		ino := s.ino(name)
		if name == currentName {
			leaf, err := s.leaf()
			if err != nil {
				return child{}, err
			}
			if leaf == "" {
				return child{}, view.ErrNotFound
			}
			// A new leaf is a new link to the kernel, which keeps
			// link targets.
			ino = s.ino(name, leaf)
		}
		make := e.make
		return child{name, e.mode, ino, func() fs.InodeEmbedder { return make(s) }}, nil
	}
	return child{}, view.ErrNotFound
}

// sessionFile is session.jsonl: the file on disk, byte for byte, read
// straight from it so that its size and content are always the file's.
type sessionFile struct {
	fs.Inode
	s sessionRef
}

var (
	_ = (fs.NodeGetattrer)((*sessionFile)(nil))
	_ = (fs.NodeSetattrer)((*sessionFile)(nil))
	_ = (fs.NodeOpener)((*sessionFile)(nil))
)

func newSessionFile(s sessionRef) *sessionFile { return &sessionFile{s: s} }

func (f *sessionFile) path() (string, error) {
	m, err := f.s.meta()
	if err != nil {
		return "", err
	}
	return m.Path, nil
}

// fillAttr gives the file's size and mtime as the index knows them.
func (f *sessionFile) fillAttr(out *fuse.Attr) error {
	m, err := f.s.meta()
	if err != nil {
		return err
	}
	f.s.r.fill(out, syscall.S_IFREG|0o444, uint64(m.Sig.Size), time.Unix(0, m.Sig.Mtime))
	return nil
}

func (f *sessionFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*osFile); ok {
		fi, err := h.f.Stat()
		if err != nil {
			return f.s.r.errno(err)
		}
		f.s.r.fill(&out.Attr, syscall.S_IFREG|0o444, uint64(fi.Size()), fi.ModTime())
	} else if err := f.fillAttr(&out.Attr); err != nil {
		return f.s.r.errno(err)
	}
	n := f.EmbeddedInode()
	own(&out.Attr, f.s.r.ownerFor(n.Operations(), parentOf(n)))
	return 0
}

func (f *sessionFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (f *sessionFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if wantsWrite(flags) {
		return nil, 0, syscall.EROFS
	}
	path, err := f.path()
	if err != nil {
		return nil, 0, f.s.r.errno(err)
	}
	fd, err := sessions.OpenRegular(path) // a FIFO put there must not block
	if err != nil {
		return nil, 0, f.s.r.errno(err)
	}
	return &osFile{fd}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

// osFile is an open session file.
type osFile struct{ f *os.File }

var (
	_ = (fs.FileReader)((*osFile)(nil))
	_ = (fs.FileReleaser)((*osFile)(nil))
)

func (h *osFile) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := h.f.ReadAt(dest, off)
	if n > 0 || err == nil || isEOF(err) {
		return fuse.ReadResultData(dest[:n]), 0
	}
	return nil, toErrno(err)
}

func (h *osFile) Release(ctx context.Context) syscall.Errno {
	h.f.Close()
	return 0
}

// headerFile is header.json: the header line, indented. It needs only the
// header, not the parsed session.
type headerFile struct {
	file
	s sessionRef
}

func newHeaderFile(s sessionRef) *headerFile {
	f := &headerFile{s: s}
	f.file = file{r: s.r, src: f}
	return f
}

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
type infoFile struct {
	file
	s sessionRef
}

func newInfoFile(s sessionRef) *infoFile {
	f := &infoFile{s: s}
	f.file = file{r: s.r, src: f}
	return f
}

func renderInfo(ss *session) []byte {
	return render.Info(ss.path, ss.tree, time.Unix(0, ss.file.Sig.Mtime))
}

func (f *infoFile) content() ([]byte, time.Time, error) {
	return f.s.render(infoName, renderInfo)
}

// size renders info.json and keeps it: it is small, and what it costs is
// the summary it shows, which counting would compute as well.
func (f *infoFile) size() (int64, time.Time, error) { return f.s.renderSize(infoName, f.count) }

func (f *infoFile) knownSize() (int64, time.Time, bool) { return f.s.knownSize(infoName, f.count) }

func (f *infoFile) count(ss *session) int64 {
	return int64(len(rendered(f.s.r.st, ss, infoName, bytesSize, func() []byte { return renderInfo(ss) })))
}

// pathView is a rendering of a path of the session: to its leaf (the
// session folder's view) or to one entry (branches/<id>/). The branch at
// the file's last entry shares the session's own rendering.
type pathView struct {
	s      sessionRef
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
	return v.s.renderEntry(v.at, v.name+"\x00"+v.at, func(ss *session) []byte { return v.make(ss, v.at) }, v.name)
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
	return v.s.renderEntrySize(v.at, v.name+"\x00"+v.at, func(ss *session) int64 { return v.count(ss, v.at) }, v.name)
}

// pathOf is the path a view shows: to the leaf, or to entry at.
func pathOf(st *store, ss *session, at string) []*sessions.Entry {
	if at == "" {
		return ss.tree.LeafPath()
	}
	return pathTo(st, ss, at)
}

// contextOf is the context at the session's leaf, or at entry at.
func contextOf(ss *session, at string) *tree.Context {
	if at == "" {
		return ss.tree.Context()
	}
	return ss.tree.ContextAt(at)
}

// contextFile is context.json: the model context at the session's leaf, or
// at a branch's entry.
type contextFile struct {
	file
	pathView
}

func newContextFile(s sessionRef, at string, branch bool) *contextFile {
	// The context at the session's leaf leaves its plan.
	context := func(ss *session, at string) *tree.Context {
		c := contextOf(ss, at)
		if at == "" {
			s.r.st.keepPlan(ss, c)
		}
		return c
	}
	f := &contextFile{pathView: pathView{s, at, branch, contextName, func(ss *session, at string) []byte {
		return render.ContextJSON(context(ss, at))
	}, func(ss *session, at string) int64 {
		return render.ContextSize(context(ss, at))
	}}}
	f.file = file{r: s.r, src: f}
	return f
}

// transcriptFile is transcript.md: the root→leaf path (or root→entry, for a
// branch) as Markdown.
type transcriptFile struct {
	file
	pathView
}

func newTranscriptFile(s sessionRef, at string, branch bool) *transcriptFile {
	f := &transcriptFile{pathView: pathView{s, at, branch, transcriptName, func(ss *session, at string) []byte {
		return render.Transcript(pathOf(s.r.st, ss, at))
	}, func(ss *session, at string) int64 {
		return render.TranscriptSize(pathOf(s.r.st, ss, at))
	}}}
	f.file = file{r: s.r, src: f}
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
	return pathOf(f.s.r.st, ss, f.at)
}

func (f *transcriptFile) start() ([]byte, any, error) {
	var st followed
	var data []byte
	err := f.s.with(func(ss *session) error {
		if f.branch && ss.tree.Node(f.at) == nil {
			return view.ErrNotFound
		}
		st = followed{ss.file, ss.tree, f.path(ss)}
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
		if ss.tree != st.tree && !ss.file.Sig.Grew(st.file.Sig) {
			return nil // rewritten: not the entries shown
		}
		path, n := ss.tree.LeafPath(), len(st.path)
		if len(path) < n || (n > 0 && !sameEntry(path[n-1], st.path[n-1])) {
			return nil
		}
		more = render.Transcript(path[n:])
		next = followed{ss.file, ss.tree, path}
		return nil
	})
	return more, next, err
}

// sameEntry tells whether two parsed entries are the same line of the
// file (parsed again after eviction, they are other values).
func sameEntry(a, b *sessions.Entry) bool {
	return a == b || (a.ID == b.ID && a.Offset == b.Offset && a.Seq == b.Seq)
}

// htmlFile is transcript.html: the same path as one self-contained page.
// A page is read whole, so it does not follow the session: a new open (a
// reload) shows what was added.
type htmlFile struct {
	file
	pathView
}

func newHTMLFile(s sessionRef, at string, branch bool) *htmlFile {
	f := &htmlFile{pathView: pathView{s, at, branch, htmlName, func(ss *session, at string) []byte {
		return render.TranscriptHTML(render.PageOf(ss.tree), pathOf(s.r.st, ss, at))
	}, func(ss *session, at string) int64 {
		return render.TranscriptHTMLSize(render.PageOf(ss.tree), pathOf(s.r.st, ss, at))
	}}}
	f.file = file{r: s.r, src: f}
	return f
}

// nameFile reads the session's name (an empty line when unnamed).
type nameFile struct {
	file
	s sessionRef
}

func newNameFile(s sessionRef) *nameFile {
	f := &nameFile{s: s}
	f.file = file{r: s.r, src: f, ctl: nameControl(s)}
	return f
}

func (f *nameFile) content() ([]byte, time.Time, error) {
	return f.s.render(nameName, func(ss *session) []byte { return []byte(ss.tree.Name() + "\n") })
}

func (f *nameFile) size() (int64, time.Time, error) { return f.s.renderSize(nameName, nameSize) }

func (f *nameFile) knownSize() (int64, time.Time, bool) { return f.s.knownSize(nameName, nameSize) }

func nameSize(ss *session) int64 { return int64(len(ss.tree.Name()) + 1) }

// leafFile reads the id of the entry the session stands at (an empty line
// when there is none).
type leafFile struct {
	file
	s sessionRef
}

func newLeafFile(s sessionRef) *leafFile {
	f := &leafFile{s: s}
	f.file = file{r: s.r, src: f, ctl: leafControl(s)}
	return f
}

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
type appendFile struct {
	file
	s sessionRef
}

func newAppendFile(s sessionRef) *appendFile {
	f := &appendFile{s: s}
	f.file = file{r: s.r, src: f, ctl: appendControl(s)}
	return f
}

func (f *appendFile) content() ([]byte, time.Time, error) {
	mt, err := f.s.activity()
	return nil, mt, err
}

// forkFile is fork: each line written makes a new session from this one;
// reading the same open file then gives the new sessions' paths.
type forkFile struct {
	file
	s sessionRef
}

func newForkFile(s sessionRef) *forkFile {
	f := &forkFile{s: s}
	f.file = file{r: s.r, src: f, ctl: forkControl{s}}
	return f
}

func (f *forkFile) content() ([]byte, time.Time, error) {
	mt, err := f.s.activity()
	return nil, mt, err
}

// errorsFile is errors: why recent writes to the session were refused,
// newest last, each line with its time. It lives in memory only.
type errorsFile struct {
	file
	s sessionRef
}

func newErrorsFile(s sessionRef) *errorsFile {
	f := &errorsFile{s: s}
	f.file = file{r: s.r, src: f}
	return f
}

func (f *errorsFile) content() ([]byte, time.Time, error) {
	data, mt := f.s.r.refused.get(f.s.project + "/" + f.s.name)
	if mt.IsZero() {
		var err error
		if mt, err = f.s.activity(); err != nil {
			return nil, mt, err
		}
	}
	return data, mt, nil
}

// currentLink is current -> branches/<leaf>.
type currentLink struct {
	link
	s sessionRef
}

func newCurrentLink(s sessionRef) *currentLink {
	l := &currentLink{s: s}
	l.link = link{r: s.r, src: l}
	return l
}

func (l *currentLink) target() (string, time.Time, error) {
	leaf, err := l.s.leaf()
	if err != nil {
		return "", time.Time{}, err
	}
	if leaf == "" {
		return "", time.Time{}, view.ErrNotFound
	}
	mt, err := l.s.activity()
	return branchesName + "/" + names.Encode(leaf), mt, err
}

// The views whose size takes parsing or rendering the session.
func (f *contextFile) costly()    {}
func (f *transcriptFile) costly() {}
func (f *htmlFile) costly()       {}
func (f *infoFile) costly()       {}
func (f *nameFile) costly()       {}
func (f *usageFile) costly()      {}

var (
	_ costly = (*contextFile)(nil)
	_ costly = (*usageFile)(nil)
)
