package view

import (
	"errors"
	"syscall"

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
	f, err := d.v.st.x.ByIDPrefix(prefix)
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
	f, err := l.v.st.x.ByIDPrefixFor(l.prefix, s.sees)
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
