package nodes

import (
	"context"
	"math"
	"os"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
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

func (s sessionRef) meta() (*fileMeta, error) { return s.r.st.meta(s.project, s.name) }

// activity is the session's latest activity: its folder's mtime.
func (s sessionRef) activity() (time.Time, error) {
	m, err := s.meta()
	if err != nil {
		return time.Time{}, err
	}
	return m.lastActivity(), nil
}

// ino numbers a view of this session.
func (s sessionRef) ino(parts ...string) uint64 { return inoOf(s.inoParts(parts...)...) }

func (s sessionRef) inoParts(parts ...string) []string {
	return append([]string{"s", s.project, s.name}, parts...)
}

// render returns a rendering of the session, made once per version, and the
// session's latest activity.
func (s sessionRef) render(key string, make func(*session) []byte) ([]byte, time.Time, error) {
	var data []byte
	err := s.with(func(ss *session) error {
		data = ss.cached(key, func() []byte { return make(ss) })
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	mt, err := s.activity()
	return data, mt, err
}

// Names in a session folder.
const (
	sessionFileName = "session.jsonl"
	headerName      = "header.json"
	infoName        = "info.json"
	contextName     = "context.json"
	transcriptName  = "transcript.md"
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

var sessionNames = []string{sessionFileName, headerName, infoName, contextName, transcriptName,
	nameName, leafName, appendName, forkName, errorsName, entriesName, branchesName, treeName, labelsName}

func (d *sessionDir) list() ([]child, error) {
	var out []child
	for _, n := range sessionNames {
		c, err := d.lookup(n)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if c, err := d.lookup(currentName); err == nil {
		out = append(out, c)
	}
	return out, nil
}

func (d *sessionDir) lookup(name string) (child, error) {
	s := d.s
	reg := func(make func() fs.InodeEmbedder) (child, error) {
		return child{name, syscall.S_IFREG, s.ino(name), make}, nil
	}
	sub := func(make func() fs.InodeEmbedder) (child, error) {
		return child{name, syscall.S_IFDIR, s.ino(name), make}, nil
	}
	switch name {
	case sessionFileName:
		if _, err := s.meta(); err != nil {
			return child{}, err
		}
		return reg(func() fs.InodeEmbedder { return newSessionFile(s) })
	case headerName:
		return reg(func() fs.InodeEmbedder { return newHeaderFile(s) })
	case infoName:
		return reg(func() fs.InodeEmbedder { return newInfoFile(s) })
	case contextName:
		return reg(func() fs.InodeEmbedder { return newContextFile(s, "", false) })
	case transcriptName:
		return reg(func() fs.InodeEmbedder { return newTranscriptFile(s, "", false) })
	case nameName:
		return reg(func() fs.InodeEmbedder { return newNameFile(s) })
	case leafName:
		return reg(func() fs.InodeEmbedder { return newLeafFile(s) })
	case appendName:
		return reg(func() fs.InodeEmbedder { return newAppendFile(s) })
	case forkName:
		return reg(func() fs.InodeEmbedder { return newForkFile(s) })
	case errorsName:
		return reg(func() fs.InodeEmbedder { return newErrorsFile(s) })
	case entriesName:
		return sub(func() fs.InodeEmbedder { return newEntriesDir(s) })
	case branchesName:
		return sub(func() fs.InodeEmbedder { return newBranchesDir(s) })
	case treeName:
		return sub(func() fs.InodeEmbedder { return newSegmentDir(s, "") })
	case labelsName:
		return sub(func() fs.InodeEmbedder { return newLabelsDir(s) })
	case currentName:
		var leaf string
		if err := s.with(func(ss *session) error { leaf = ss.tree.LeafID(); return nil }); err != nil {
			return child{}, err
		}
		if leaf == "" {
			return child{}, ErrNotFound
		}
		return child{name, syscall.S_IFLNK, s.ino(name), func() fs.InodeEmbedder { return newCurrentLink(s) }}, nil
	}
	return child{}, ErrNotFound
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

func (f *sessionFile) path() string { return f.s.r.st.sessionPath(f.s.project, f.s.name) }

func (f *sessionFile) fillAttr(out *fuse.Attr) error {
	fi, err := os.Stat(f.path())
	if err != nil {
		return err
	}
	f.s.r.fill(out, syscall.S_IFREG|0o444, uint64(fi.Size()), fi.ModTime())
	return nil
}

func (f *sessionFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*osFile); ok {
		fi, err := h.f.Stat()
		if err != nil {
			return toErrno(err)
		}
		f.s.r.fill(&out.Attr, syscall.S_IFREG|0o444, uint64(fi.Size()), fi.ModTime())
		return 0
	}
	return toErrno(f.fillAttr(&out.Attr))
}

func (f *sessionFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (f *sessionFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if wantsWrite(flags) {
		return nil, 0, syscall.EROFS
	}
	fd, err := sessions.OpenRegular(f.path()) // a FIFO put there must not block
	if err != nil {
		return nil, 0, toErrno(err)
	}
	return &osFile{fd}, fuse.FOPEN_DIRECT_IO, 0
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
	mt := m.sig.mtime
	if ms := jsjson.DateValue(m.header.Timestamp); !math.IsNaN(ms) {
		mt = msTime(ms)
	}
	return indentJSON(m.header.Raw), mt, nil
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

func (f *infoFile) content() ([]byte, time.Time, error) {
	return f.s.render(infoName, func(ss *session) []byte { return renderInfo(ss, ss.sig.mtime) })
}

// contextFile is context.json: the model context at the session's leaf, or
// at a branch's entry.
type contextFile struct {
	file
	s      sessionRef
	at     string // the entry, for a branch
	branch bool
}

func newContextFile(s sessionRef, at string, branch bool) *contextFile {
	f := &contextFile{s: s, at: at, branch: branch}
	f.file = file{r: s.r, src: f}
	return f
}

func (f *contextFile) content() ([]byte, time.Time, error) {
	if !f.branch {
		return f.s.render(contextName, func(ss *session) []byte { return indentJSON(ss.tree.Context().JSON()) })
	}
	return f.s.renderEntry(f.at, "context\x00"+f.at, func(ss *session) []byte { return indentJSON(ss.tree.ContextAt(f.at).JSON()) })
}

// transcriptFile is transcript.md: the root→leaf path (or root→entry, for a
// branch) as Markdown.
type transcriptFile struct {
	file
	s      sessionRef
	at     string
	branch bool
}

func newTranscriptFile(s sessionRef, at string, branch bool) *transcriptFile {
	f := &transcriptFile{s: s, at: at, branch: branch}
	f.file = file{r: s.r, src: f}
	return f
}

func (f *transcriptFile) content() ([]byte, time.Time, error) {
	if !f.branch {
		return f.s.render(transcriptName, func(ss *session) []byte { return renderTranscript(ss.tree.LeafPath()) })
	}
	return f.s.renderEntry(f.at, "transcript\x00"+f.at, func(ss *session) []byte { return renderTranscript(ss.tree.PathTo(f.at)) })
}

// nameFile reads the session's name (an empty line when unnamed).
type nameFile struct {
	file
	s sessionRef
}

func newNameFile(s sessionRef) *nameFile {
	f := &nameFile{s: s}
	f.file = file{r: s.r, src: f, ctl: sessionControl{s, nameName, nameLine}}
	return f
}

func (f *nameFile) content() ([]byte, time.Time, error) {
	return f.s.render(nameName, func(ss *session) []byte { return []byte(ss.tree.Name() + "\n") })
}

// leafFile reads the id of the entry the session stands at (an empty line
// when there is none).
type leafFile struct {
	file
	s sessionRef
}

func newLeafFile(s sessionRef) *leafFile {
	f := &leafFile{s: s}
	f.file = file{r: s.r, src: f, ctl: sessionControl{s, leafName, leafLine}}
	return f
}

func (f *leafFile) content() ([]byte, time.Time, error) {
	return f.s.render(leafName, func(ss *session) []byte { return []byte(ss.tree.LeafID() + "\n") })
}

// appendFile is append: each line written adds an entry at the leaf.
// Reading it gives nothing.
type appendFile struct {
	file
	s sessionRef
}

func newAppendFile(s sessionRef) *appendFile {
	f := &appendFile{s: s}
	f.file = file{r: s.r, src: f, ctl: sessionControl{s, appendName, appendLine}}
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
	data, mt := f.s.r.refused.get(f.s.r.st.sessionPath(f.s.project, f.s.name))
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
	var leaf string
	if err := l.s.with(func(ss *session) error { leaf = ss.tree.LeafID(); return nil }); err != nil {
		return "", time.Time{}, err
	}
	if leaf == "" {
		return "", time.Time{}, ErrNotFound
	}
	mt, err := l.s.activity()
	return branchesName + "/" + EncodeName(leaf), mt, err
}
