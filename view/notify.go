package view

import (
	"strings"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// Notices is what the kernel must be told of changes the index found:
// names that went away, and the attributes and content of every view of a
// session whose file changed, of the folders listing it and of the links
// that may now point elsewhere.
func (v *View) Notices(changes []sessions.Change) []Notice {
	var out []Notice
	add := func(do Action, path ...string) { out = append(out, Notice{path, do}) }
	// The folders whose names or attributes changed.
	var touched [][]string
	seen := map[string]bool{}
	touch := func(path ...string) {
		if k := strings.Join(path, "/"); !seen[k] {
			seen[k] = true
			touched = append(touched, path)
		}
	}
	// The projects whose by-name/ is looked at again whole: all but those
	// where sessions only grew under the names they had.
	wholeByName := map[string]bool{}
	real := 0 // changes that changed something
	for _, c := range changes {
		if c.Name == "" {
			wholeByName[c.Project] = true
			if !v.hasProject(c.Project) {
				add(Forget, c.Project)
			} else {
				add(Refresh, c.Project)
			}
			touch()
			real++
			continue
		}
		switch {
		case c.New == nil:
			add(Forget, c.Project, c.Name)
		case c.Old == nil || !c.New.Sig.Grew(c.Old.Sig):
			add(Reset, c.Project, c.Name)
		default:
			grown, link, named, times := v.grownNotices(c)
			if len(grown) == 0 && c.New.Sig == c.Old.Sig {
				// A racy file looked at again, its bytes the same as
				// the session held parsed: nothing changed (a write
				// through pifs, then the watcher's event of it).
				continue
			}
			out = append(out, grown...)
			if times {
				// Only its times moved: info.json shows them, and
				// active/ and latest date sessions by them.
				for _, p := range [][]string{{c.Project}, nil} {
					add(Refresh, append(p[:len(p):len(p)], activeName)...)
					add(ForgetHeld, append(p[:len(p):len(p)], latestName)...)
				}
				continue
			}
			if !named {
				wholeByName[c.Project] = true
			} else if link != "" {
				add(Refresh, c.Project, byNameName, link)
			}
		}
		real++
		touch(c.Project)
		if c.New == nil || c.Old == nil || !c.New.Sig.Grew(c.Old.Sig) {
			wholeByName[c.Project] = true
		}
		if c.Old == nil || c.New == nil {
			for _, f := range []*sessions.File{c.Old, c.New} {
				if f != nil {
					add(Forget, byIDName, names.Encode(f.Header.ID))
				}
			}
			if c.New != nil && c.New.Header != nil {
				out = append(out, prefixNotices(c.New.Header.ID)...)
			}
			touch(byIDName)
			add(Refresh, byCwdName)
			// A session trashed or restored, by pifs or by trash-put
			// and trash-restore, leaves or joins trash/.
			add(Refresh, trashName)
			out = append(out, v.lineageNotices(c.Old, c.New)...)
		}
		touch()
	}
	if real > 0 {
		// Every report covers the store; a project's only its own, but
		// which projects a clone's calls count in can change too.
		add(Refresh, usageName)
		add(Refresh, "*", usageName)
	}
	for _, p := range touched {
		if len(p) != 1 || wholeByName[p[0]] {
			add(Refresh, append(p[:len(p):len(p)], byNameName)...)
		}
		add(Refresh, append(p[:len(p):len(p)], activeName)...)
		add(Attrs, p...)
		add(ForgetHeld, append(p[:len(p):len(p)], latestName)...)
		add(ForgetHeld, append(p[:len(p):len(p)], cwdName)...)
	}
	return out
}

// NoticesReady signals that PendingNotices has something to give.
func (v *View) NoticesReady() <-chan struct{} { return v.out.signal }

// SignalNotices signals NoticesReady: the layer that answers the kernel has something of
// its own to deliver.
func (v *View) SignalNotices() { v.out.wake() }

// PendingNotices returns what the kernel must be told of what pifs changed itself
// (as Notices does for the watcher's changes) and of the sessions dropped
// from the cache: the kernel is to forget the names below their entries/,
// branches/ and tree/ folders, so that what pifs holds for a walk of the
// store (a node per name the kernel looked up) follows its cache, not
// everything the walk passed. done says it was told.
func (v *View) PendingNotices() (notices []Notice, done func()) {
	changes, evicted, own, done := v.out.take()
	v.Publish(changes)
	notices = append(v.Notices(changes), own...)
	for _, k := range evicted {
		if v.cache.IsParsed(k.path) {
			continue // parsed again since: in use
		}
		for _, name := range heavyFolders {
			notices = append(notices, Notice{[]string{k.project, k.name, name}, Shed})
		}
	}
	return notices, done
}

// Notifying tells the view that a goroutine takes and delivers its
// notices whenever Work signals: from then on a write through a control
// returns once the kernel was told what it changed.
func (v *View) Notifying() { v.notifying.Store(true) }
