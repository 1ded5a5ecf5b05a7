package view

import (
	"errors"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// by-id/<prefix>: a unique prefix of a session id resolves to that
// session, as `pi --session <partial>` takes one (a case-sensitive prefix
// of the header's id). Prefixes are looked up, never listed. A prefix that
// starts several ids is not found; the log names the candidates.

// prefix is the link a prefix of an id names (spelled name).
func (d *byIDDir) prefix(name, prefix string) (Child, error) {
	if names.Encode(prefix) != name {
		return Child{}, ErrNotFound
	}
	if d.v.opts.Shared {
		// Which session a prefix names depends on who asks (seenBy).
		return Child{name, syscall.S_IFLNK, names.Ino(byIDName, "prefix", name), func() Node { return &byIDPrefixLink{newByIDLink(d.v, ""), name, prefix} }}, nil
	}
	f, err := d.v.x.ByIDPrefix(prefix)
	var amb *sessions.PrefixError
	if errors.As(err, &amb) {
		d.v.log.Warn("by-id: " + amb.Error())
		return Child{}, ErrNotFound
	}
	if err != nil || !validProject(f.Project) || !validSessionName(f.Name) {
		return Child{}, ErrNotFound
	}
	id := f.Header.ID
	// The number names the session it resolves to: a prefix that comes
	// to name another is a new link to the kernel.
	return Child{name, syscall.S_IFLNK, names.Ino(byIDName, "prefix", name, id), func() Node { return newByIDLink(d.v, id) }}, nil
}

// byIDPrefixLink is a prefix on a shared mount: it resolves among the
// sessions the caller sees, so that a session they may not see neither
// answers nor makes the prefix ambiguous.
type byIDPrefixLink struct {
	*byIDLink    // resolves to nothing until seen by a caller
	name, prefix string
}

func (l *byIDPrefixLink) seenBy(s *sight, c Child) (Child, bool) {
	f, err := l.v.x.ByIDPrefixFor(l.prefix, s.sees)
	if err != nil || !validProject(f.Project) || !validSessionName(f.Name) {
		return Child{}, false
	}
	id := f.Header.ID
	return Child{l.name, syscall.S_IFLNK, names.Ino(byIDName, "prefix", l.name, id), func() Node { return newByIDLink(l.v, id) }}, true
}

// prefixNotices: a new session may make a prefix the kernel holds
// ambiguous; the kernel forgets every prefix of its id it holds.
func prefixNotices(id string) []Notice {
	var out []Notice
	for n := 1; n < len(id); n++ {
		out = append(out, Notice{[]string{byIDName, names.Encode(id[:n])}, ForgetHeld})
	}
	return out
}

// byIDDir lists every session by its id, as a symlink to its folder.
type byIDDir struct{ inRoot }

func newByIDDir(v *View) *byIDDir { return &byIDDir{inRoot{v}} }

func (d *byIDDir) mtime() (time.Time, error) { return dirMtime(d.v.opts.SessionsDir) }

func (d *byIDDir) list() ([]Child, error) {
	var out []Child
	seen := map[string]bool{}
	for _, f := range d.v.x.All() {
		if !seen[f.Header.ID] && validProject(f.Project) && validSessionName(f.Name) {
			seen[f.Header.ID] = true
			out = append(out, d.link(f.Header.ID))
		}
	}
	return out, nil
}

func (d *byIDDir) lookup(name string) (Child, error) {
	id, ok := names.Decode(name)
	if !ok {
		// A hashed name: compare with every session's spelling.
		for _, f := range d.v.x.All() {
			if names.Encode(f.Header.ID) == name {
				id, ok = f.Header.ID, true
				break
			}
		}
	}
	if !ok {
		return Child{}, ErrNotFound
	}
	if _, found := d.v.sessionByID(id); found && names.Encode(id) == name {
		return d.link(id), nil
	}
	return d.prefix(name, id)
}

func (d *byIDDir) link(id string) Child {
	return Child{names.Encode(id), syscall.S_IFLNK, names.Ino(byIDName, id), func() Node { return newByIDLink(d.v, id) }}
}

// byIDLink points at a session's folder: ../<project>/<session>.
type byIDLink struct {
	inRoot
	id string
}

func newByIDLink(v *View, id string) *byIDLink { return &byIDLink{inRoot{v}, id} }

// target is the session's folder; a link's mtime is its session file's, so
// that listing links reads no session.
func (l *byIDLink) target() (string, time.Time, error) {
	f, ok := l.v.sessionByID(l.id)
	if !ok {
		return "", time.Time{}, ErrNotFound
	}
	return "../" + f.Project + "/" + f.Name, time.Unix(0, f.Sig.Mtime), nil
}
func (*byIDDir) gathers() bool { return true }

func (l *byIDLink) seenBy(s *sight, c Child) (Child, bool) {
	f, ok := l.v.sessionByID(l.id)
	return c, ok && s.sees(f)
}
