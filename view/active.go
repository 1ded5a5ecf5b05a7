package view

import (
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// MOUNT/active/ and MOUNT/<project>/active/: a link to each session whose
// file was written in the last ActiveWindow, dated by that write, so that
// `ls -lt active/` lists the agents at work newest first, and each
// session's info.json says what its agent is doing (its status).

// activeDir is active/, at the root (project "") or in a project.
type activeDir struct{ inProject }

func newActiveDir(v *View, project string) *activeDir { return &activeDir{inProject{v, project}} }

func activeChild(v *View, project string) Child {
	ino := names.Ino(activeName)
	if project != "" {
		ino = names.Ino("p", project, activeName)
	}
	return Child{activeName, syscall.S_IFDIR, ino, func() Node { return newActiveDir(v, project) }}
}

// sessions are the sessions the folder shows from, written in the last
// span before now.
func (d *activeDir) sessions(now time.Time, span time.Duration) []*sessions.File {
	var files []*sessions.File
	if d.project == "" {
		files = d.v.x.All()
	} else {
		files, _ = d.v.sessionFiles(d.project)
	}
	out := files[:0:0]
	since := now.Add(-span).UnixNano()
	for _, f := range files {
		if f.Sig.Mtime >= since && validProject(f.Project) && validSessionName(f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// mtime is when the listing last changed: a session's write brought it in,
// or the end of its window took it out. The kernel lists the folder again
// when it sees the mtime move (a session that leaves changes nothing else).
func (d *activeDir) mtime() (time.Time, error) {
	now := time.Now()
	var last time.Time
	for _, f := range d.sessions(now, 2*ActiveWindow) {
		wrote := time.Unix(0, f.Sig.Mtime)
		if left := wrote.Add(ActiveWindow); !left.After(now) {
			wrote = left
		}
		if wrote.After(last) {
			last = wrote
		}
	}
	if last.IsZero() {
		return dirMtime(d.v.opts.SessionsDir)
	}
	return last, nil
}

func (d *activeDir) list() ([]Child, error) {
	var out []Child
	for _, f := range d.sessions(time.Now(), ActiveWindow) {
		out = append(out, d.link(f))
	}
	return out, nil
}

func (d *activeDir) lookup(name string) (Child, error) {
	for _, f := range d.sessions(time.Now(), ActiveWindow) {
		if f.Name == name {
			return d.link(f), nil
		}
	}
	return Child{}, ErrNotFound
}

func (d *activeDir) link(f *sessions.File) Child {
	project, name := f.Project, f.Name
	return Child{name, syscall.S_IFLNK, names.Ino(activeName, d.project, project, name),
		func() Node { return &activeLink{inProject{d.v, d.project}, project, name} }}
}

// activeLink points at a session's folder; its mtime is the session file's
// last write.
type activeLink struct {
	inProject             // the folder's project ("" at the root)
	sproject, name string // the session's
}

func (l *activeLink) target() (string, time.Time, error) {
	f, err := l.v.meta(l.sproject, l.name)
	if err != nil {
		return "", time.Time{}, err
	}
	mt := time.Unix(0, f.Sig.Mtime)
	if l.project != "" {
		return "../" + l.name, mt, nil
	}
	return "../" + l.sproject + "/" + l.name, mt, nil
}
func (*activeDir) gathers() bool { return true }

// seenBy: a session in active/ is shown to whoever sees it.
func (l *activeLink) seenBy(s *sight, c Child) (Child, bool) {
	f, err := l.v.meta(l.sproject, l.name)
	return c, err == nil && s.sees(f)
}
