package view

import (
	"path/filepath"
	"syscall"
	"time"

	"github.com/pifs/pifs/events"
	"github.com/pifs/pifs/internal/access"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// MOUNT/events and MOUNT/<project>/events (package events makes their
// lines): what each reader is shown is what its caller may see.

// eventsFile is events, at the root or in a project. Its size to stat is
// 0; to the process reading it, what it was given (see events.Reader.Size).
type eventsFile struct{ inProject }

// Streamer is a file whose reads are a stream from the moment it is opened
// (events): the layer that answers the kernel opens it with Events.
type Streamer interface {
	File
	streams() string
}

func (f *eventsFile) streams() string { return f.project }

// content is empty, dated as new is: the store's or the project's folder.
func (f *eventsFile) content() ([]byte, time.Time, error) {
	return (&newFile{f.inProject}).content()
}

// Events opens a Streamer's stream for caller c: on a mount other users
// may enter, it tells of the sessions c may see only (see sight), as they
// are when each change is told. Every folder of what it shows is read
// first, so that the watcher follows all of it.
func (v *View) Events(s Streamer, c Caller) (*events.Reader, error) {
	project := s.streams()
	if project == "" {
		v.x.All()
	} else if _, err := v.sessionFiles(project); err != nil {
		return nil, err
	}
	var sees func(sessions.Change) bool
	if v.opts.Shared {
		if w := c.Who(); !w.Root() {
			sees = func(ch sessions.Change) bool { return v.seesChange(w, ch) }
		}
	}
	return v.events.Open(project, c.Uid, sees), nil
}

// Publish makes the lines of changes for the open events files (those of
// the session folders the mount shows), and tells the full-text index of
// them: the watcher's and those pifs made itself.
func (v *View) Publish(changes []sessions.Change) {
	if v.opts.Search != nil && len(changes) > 0 {
		v.opts.Search.Changed(changes)
	}
	shown := changes[:0:0]
	for _, c := range changes {
		if c.Name != "" && validProject(c.Project) && validSessionName(c.Name) {
			shown = append(shown, c)
		}
	}
	v.events.Publish(shown)
}

// CloseEvents ends every read of an events file: the mount goes away.
func (v *View) CloseEvents() { v.events.Close() }

// seesChange tells whether w may see the session a change is about: by
// w's sight of the index as it is now (worked out once per identity and
// version of the index); a session gone from the index (removed, trashed)
// by the owner and mode its file had and the folder it was in.
func (v *View) seesChange(w access.Who, c sessions.Change) bool {
	if c.New == nil {
		if c.Old == nil {
			return false
		}
		return w.Allows(Owner{Uid: c.Old.Uid, Gid: c.Old.Gid, Perm: uint32(c.Old.Mode.Perm())}, access.Read) &&
			v.searchDown(w, filepath.Dir(c.Old.Path)) == nil
	}
	return v.sightFor(w).sees(c.New)
}

func eventsChild(v *View, project string) Child {
	ino := names.Ino(eventsName)
	if project != "" {
		ino = names.Ino("p", project, eventsName)
	}
	return Child{eventsName, syscall.S_IFREG, ino, func() Node { return &eventsFile{inProject{v, project}} }}
}

// EventStats are counts of the events files' work.
func (v *View) EventStats() events.Stats { return v.events.Stats() }
