package cache

import (
	"testing"

	"github.com/pifs/pifs/sessions"
)

// TestStepsSince: the watcher tells an append from a rewrite by the steps
// a parsed session took from version to version, also for versions the
// index took that the session was never brought to.
func TestStepsSince(t *testing.T) {
	v := func(size, mtime int64) *sessions.File {
		return &sessions.File{Sig: sessions.Sig{Ino: 7, Dev: 1, Size: size, Mtime: mtime}}
	}
	a, b, c := v(100, 1), v(200, 2), v(300, 3)
	var s steps
	s.add(nil, a, true)
	s.add(a, b, false)
	s.add(b, c, false)
	relook := v(200, 2)  // b looked at again: the same signature
	between := v(250, 5) // taken by the index, skipped by the session
	other := v(50, 9)    // older than the session's first read
	moved := &sessions.File{Sig: sessions.Sig{Ino: 8, Dev: 1, Size: 250}}
	for _, tc := range []struct {
		name string
		old  *sessions.File
		want Growth
	}{
		{"the last step", b, Appended},
		{"two steps", a, Appended},
		{"a look again with the same signature", relook, Appended},
		{"a version the session skipped", between, Appended},
		{"before the first read", other, Unknown},
		{"another file", moved, Unknown},
	} {
		if got := s.since(tc.old, c); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	d := v(300, 4)
	s.add(c, d, true) // read again from the start: rewritten
	if got := s.since(c, d); got != Rebuilt {
		t.Errorf("after a rewrite: %v, want rebuilt", got)
	}
	// A rewrite in the same clock tick: the version before it has the
	// signature of the one after.
	if got := s.since(v(300, 4), d); got != Rebuilt {
		t.Errorf("after a rewrite in the same tick: %v, want rebuilt", got)
	}
	for range 10 {
		s.add(d, d, false)
	}
	if got := s.since(a, d); got != Unknown {
		t.Errorf("steps forgotten: %v, want unknown", got)
	}
}
