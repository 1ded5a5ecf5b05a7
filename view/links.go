package view

import (
	"time"

	"github.com/pifs/pifs/sessions"
)

// fixedLink is a symlink whose target is known when it is made, in a
// project's folder or ("") at the top of the mount.
type fixedLink struct {
	inProject
	to string
	mt time.Time
	// of is the session it leads to, when it does: it is shown only to
	// whoever sees that session (see sight).
	of *sessions.File
}

func newFixedLink(in inProject, to string, mt time.Time) *fixedLink {
	return &fixedLink{inProject: in, to: to, mt: mt}
}

// newSessionLink is a fixed link to the folder of the session of f.
func newSessionLink(in inProject, to string, mt time.Time, f *sessions.File) *fixedLink {
	l := newFixedLink(in, to, mt)
	l.of = f
	return l
}

func (l *fixedLink) target() (string, time.Time, error) { return l.to, l.mt, nil }

func (l *fixedLink) seenBy(s *sight, c Child) (Child, bool) {
	return c, l.of == nil || s.sees(l.of)
}
