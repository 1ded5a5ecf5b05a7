package view

import (
	"errors"
	iofs "io/fs"
	"math"
	"os"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// update looks again at a path of the store that pifs itself changed (or
// is about to change), and queues what changed for the kernel.
func (v *View) update(path string) {
	v.out.put(v.x.Look(path))
}

// meta returns the index's current version of a session file.
func (v *View) meta(project, name string) (*sessions.File, error) {
	if project == trashName {
		return v.trashedMeta(name)
	}
	if !validProject(project) || !validSessionName(name) {
		return nil, ErrNotFound
	}
	f, err := v.x.Lookup(project, name)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err // a file that is there but cannot be read says why
}

// projects lists the project folders, sorted, leaving out names the root
// uses itself.
func (v *View) projects() []string {
	all := v.x.Projects()
	out := all[:0]
	for _, p := range all {
		if validProject(p) {
			out = append(out, p)
		}
	}
	return out
}

func (v *View) hasProject(project string) bool {
	return validProject(project) && v.x.HasProject(project)
}

// sessionFiles lists a project's sessions, sorted by name.
func (v *View) sessionFiles(project string) ([]*sessions.File, error) {
	if !validProject(project) {
		return nil, ErrNotFound
	}
	all, err := v.x.Sessions(project)
	if err != nil {
		return nil, ErrNotFound
	}
	out := make([]*sessions.File, 0, len(all))
	for _, f := range all {
		if validSessionName(f.Name) {
			out = append(out, f)
		}
	}
	return out, nil
}

// sessionByID finds the session a by-id name shows: the first in project
// and name order that has the id.
func (v *View) sessionByID(id string) (*sessions.File, bool) {
	f, ok := v.x.ByID(id)
	if !ok || !validProject(f.Project) || !validSessionName(f.Name) {
		return nil, false
	}
	return f, true
}

// projectCwd is a project's working directory: the cwd of its newest
// session that names one ("" when none does).
func (v *View) projectCwd(project string, s *sight) (string, error) {
	files, err := v.sessionFiles(project)
	if err != nil {
		return "", err
	}
	for i := len(files) - 1; i >= 0; i-- {
		if files[i].Header.Cwd != "" && (s == nil || s.sees(files[i])) {
			return files[i].Header.Cwd, nil
		}
	}
	return "", nil
}

// latest is the session whose file changed last, in a project or ("") in
// the whole store.
func (v *View) latest(project string, s *sight) (*sessions.File, bool) {
	var files []*sessions.File
	if project == "" {
		files = v.x.All()
	} else {
		var err error
		if files, err = v.sessionFiles(project); err != nil {
			return nil, false
		}
	}
	var best *sessions.File
	for _, f := range files {
		if !validProject(f.Project) || !validSessionName(f.Name) || (s != nil && !s.sees(f)) {
			continue
		}
		if best == nil || f.Sig.Mtime > best.Sig.Mtime || (f.Sig.Mtime == best.Sig.Mtime && f.Project+"/"+f.Name > best.Project+"/"+best.Name) {
			best = f
		}
	}
	return best, best != nil
}

// projectMtime is a project folder's mtime; for a project only flat files
// name, the store's.
func (v *View) projectMtime(project string) (time.Time, error) {
	path, ok := v.x.ProjectFolder(project)
	if !ok {
		path = v.x.Dir()
	}
	return dirMtime(path)
}

// dirMtime is a store folder's mtime. A store that is not there (not
// created yet, moved away) leaves the folders that show it there, empty,
// dated at the epoch: the mount's root must always answer, or the
// mountpoint itself is "no such file or directory".
func dirMtime(path string) (time.Time, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, nil
	}
	return fi.ModTime(), nil
}

// trashedMeta is store.meta for a trashed session.
func (v *View) trashedMeta(name string) (*sessions.File, error) {
	_, f, err := v.trash.Entry(name)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

// withSession runs fn with the parsed, up-to-date session, locked.
func (v *View) withSession(project, name string, fn func(s *session) error) error {
	f, err := v.meta(project, name)
	if err != nil {
		return err
	}
	return v.cache.With(project, name, f, fn)
}

// withFreshSession is withSession for a write: the file is looked at
// again first, whatever the watcher said last.
func (v *View) withFreshSession(project, name string, fn func(s *session) error) error {
	f, err := v.meta(project, name)
	if err != nil {
		return err
	}
	v.update(f.Path)
	if f, err = v.meta(project, name); err != nil {
		return err
	}
	return v.cache.With(project, name, f, fn)
}

// reread brings a held session up to date with its file after pifs wrote
// it: the writer reads its own write at once (the watcher tells the kernel
// later). s.mu is held.
func (v *View) reread(s *session) error {
	v.update(s.Path)
	f, err := v.meta(s.Project, s.Name)
	if err != nil {
		return err
	}
	return v.cache.Refresh(s, f)
}

// activity is a session's latest activity: the time of its last entry that
// has a valid one, else the header's, else the file's mtime.
func activity(f *sessions.File) time.Time {
	if t, err := f.Tail(); err == nil && t.HasActivity {
		return msTime(t.Activity)
	}
	if t := tree.DateTime(f.Header.Timestamp); !t.IsZero() {
		return t
	}
	return time.Unix(0, f.Sig.Mtime)
}

func msTime(ms float64) time.Time {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// entryMtime is when an entry was written; zero when its timestamp is not
// a valid date.
func entryMtime(e *sessions.Entry) time.Time {
	return tree.DateTime(e.Timestamp)
}
