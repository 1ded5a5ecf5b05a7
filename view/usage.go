package view

import (
	"slices"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/usage"
)

// usageDir is usage/: token and cost reports for the store (project "")
// or one project.
type usageDir struct{ inProject }

func newUsageDir(v *View, project string) *usageDir { return &usageDir{inProject{v, project}} }

func (*usageDir) gathers() bool { return true }

// seenBy: a report is over the sessions the caller sees.
func (f *usageFile) seenBy(s *sight, c Child) (Child, bool) {
	if s.all {
		return c, true
	}
	in, name := f.inProject, f.name
	c.Ino = names.Ino(append([]string{usageName, f.project, name}, s.tag()...)...)
	c.make = func() Node { return &usageFile{in, name, s} }
	return c, true
}

// mtime is its folder's (the store's, or the project's): listing the root
// reads no header for it.
func (d *usageDir) mtime() (time.Time, error) {
	if d.project == "" {
		return dirMtime(d.v.opts.SessionsDir)
	}
	return d.v.projectMtime(d.project)
}

func (d *usageDir) list() ([]Child, error) {
	out := make([]Child, 0, len(usage.Files)+len(usage.ToolFiles))
	for _, names := range [][]string{usage.Files, usage.ToolFiles} {
		for _, name := range names {
			out = append(out, d.file(name))
		}
	}
	return out, nil
}

func (d *usageDir) lookup(name string) (Child, error) {
	if slices.Contains(usage.Files, name) || slices.Contains(usage.ToolFiles, name) {
		return d.file(name), nil
	}
	return Child{}, ErrNotFound
}

func (d *usageDir) file(name string) Child {
	return Child{name, syscall.S_IFREG, names.Ino(usageName, d.project, name), func() Node { return newUsageFile(d.v, d.project, name) }}
}

// usageFile is one report of a usage folder.
type usageFile struct {
	inProject
	name string
	sees *sight // nil: everything
}

func newUsageFile(v *View, project, name string) *usageFile {
	return &usageFile{inProject: inProject{v, project}, name: name}
}

// knownSize: a listing gives the reports by name alone; their size takes
// the whole store's index (see size), which ls alone need not load.
func (f *usageFile) knownSize() (int64, time.Time, bool) { return 0, time.Time{}, false }

// size is what a count of the reports over the store as it is kept
// (usage.Sizes: ls -l after a remount builds no report), else counted.
func (f *usageFile) size() (int64, time.Time, error) {
	if f.overAll() {
		if n, t, ok := f.v.usage.sizes.Known(f.v.x.Cache(), f.v.opts.SessionsDir, f.v.x.Gen(), f.v.reportFiles, f.v.opts.TimeZone, f.project, f.name, time.Now()); ok {
			return n, t, nil
		}
	}
	data, t, err := f.content()
	return int64(len(data)), t, err
}

// overAll: the file shows the reports over every session, whose sizes are kept.
func (f *usageFile) overAll() bool { return f.sees == nil || f.sees.all }

func (f *usageFile) content() ([]byte, time.Time, error) {
	reps, mt, err := f.v.reportsFor(f.sees, f.v.opts.TimeZone)
	if err != nil {
		return nil, time.Time{}, err
	}
	rep := reps.Root
	if f.project != "" {
		if rep = reps.Projects[f.project]; rep == nil {
			// A project without sessions: an empty report.
			rep = usage.Build(nil, f.v.opts.TimeZone).Root
		}
	}
	now := time.Now()
	data, ok := rep.File(f.name, now)
	if !ok {
		return nil, time.Time{}, ErrNotFound
	}
	t := mt[f.project]
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	if f.overAll() {
		f.v.usage.sizes.Record(f.v.x.Cache(), f.v.opts.SessionsDir, reps, f.v.opts.TimeZone, f.project, f.name, now, int64(len(data)), t)
	}
	return data, t, nil
}

// reportsFor returns the usage reports over the sessions s sees (nil:
// all), built from the records the store's reports hold: a caller's
// reports read no session again.
func (v *View) reportsFor(s *sight, loc *time.Location) (*usage.Reports, map[string]time.Time, error) {
	reps, mtime, err := v.reports(loc)
	if err != nil || s == nil || s.all {
		return reps, mtime, err
	}
	c := &v.usage
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.bySight[s.key]; ok {
		return r.reports, r.mtime, nil
	}
	var list []usage.Session
	var seen []*sessions.File
	if c.list == nil {
		// The store's records were let go (see reports): read them again.
		for _, f := range c.files {
			if s.sees(f) {
				seen = append(seen, f)
			}
		}
		list, seen = c.Sessions(seen, func(missing []*sessions.File) []*sessions.File { return v.fromParsed(missing) })
		v.letGoRecords()
	} else {
		for i, f := range c.files {
			if s.sees(f) {
				list, seen = append(list, c.list[i]), append(seen, f)
			}
		}
	}
	r := sightReports{usage.Build(list, loc), usage.Mtimes(seen)}
	if c.bySight == nil || len(c.bySight) >= maxSights {
		c.bySight = map[uint64]sightReports{}
	}
	c.bySight[s.key] = r
	return r.reports, r.mtime, nil
}

// reports returns the store's usage reports, built again only after the
// index changed.
func (v *View) reports(loc *time.Location) (*usage.Reports, map[string]time.Time, error) {
	c := &v.usage
	c.mu.Lock()
	defer c.mu.Unlock()
	gen := v.x.Gen()
	if c.reports != nil && c.gen == gen {
		return c.reports, c.mtime, nil
	}
	files := v.reportFiles()
	list, kept := c.Sessions(files, func(missing []*sessions.File) []*sessions.File { return v.forWalk(v.fromParsed(missing)) })
	c.reports, c.mtime, c.gen = usage.Build(list, loc), usage.Mtimes(kept), gen
	c.sizes.Built(c.reports, files, len(kept) == len(files), loc)
	c.list, c.files, c.bySight = list, kept, nil
	if v.letGoRecords() {
		c.list = nil
	}
	return c.reports, c.mtime, nil
}

// reportFiles are the sessions the store's reports are over.
func (v *View) reportFiles() []*sessions.File {
	var files []*sessions.File
	for _, f := range v.x.All() {
		if validProject(f.Project) && validSessionName(f.Name) {
			files = append(files, f)
		}
	}
	return files
}

// letGoRecords drops the records the reports were built from when they
// hold more than a quarter of the cache's budget, and tells so. They are
// kept so that the reports after a change read only the sessions that
// changed, but a store's records are some 6% of its size (64 MB for a
// store of 1 GB: a call's numbers, a tool call's name): past that share
// they would leave the parsed sessions no room, and the heap none to
// collect in, so the reports read every session again after a change.
// c.mu is held.
func (v *View) letGoRecords() bool {
	c := &v.usage
	if c.Held.Load() <= v.cache.Budget()/4 {
		return false
	}
	c.Only(nil)
	return true
}

// fromParsed takes the records of the sessions that are parsed in the
// cache at the index's version from their entries, and returns the others,
// which must be read. A parse does not take them itself: most parses are
// for a view that needs no usage (grep of context.json), and the records
// of a session cost about a fifth of its parse. A session whose lock is
// held (a write, a parse) is read from its file instead, rather than
// waited for while c.mu is held.
func (v *View) fromParsed(files []*sessions.File) (rest []*sessions.File) {
	for _, f := range files {
		if !v.cache.IfParsed(f, v.usage.keep) {
			rest = append(rest, f)
		}
	}
	return rest
}

// forWalk reads the sessions that a walk statting session folders will
// come to as the walk will read them, their records taken from the
// entries (see cache.ReadForWalk); it returns the rest, to scan.
//
// ls -l MNT/*/*/ lists each project's usage/ after its sessions: the
// first report reads the whole store, and a scan for it alone would leave
// the walk to parse every session of the other projects again.
func (v *View) forWalk(files []*sessions.File) (rest []*sessions.File) {
	return v.cache.ReadForWalk(files, v.usage.keep)
}
