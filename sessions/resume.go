package sessions

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrUnresumable is a session file pi opens but cannot resume (see
// resumeWalk). errors.Is(err, ErrNotSession) holds for it too: it is not a
// session pi can use.
var ErrUnresumable = errors.New("pi opens the file but cannot resume it")

// resumeError is ErrUnresumable with its reason.
type resumeError struct{ reason string }

func (e *resumeError) Error() string { return e.reason }

func (e *resumeError) Is(target error) bool {
	return target == ErrUnresumable || target == ErrNotSession
}

// resumeWalk follows what pi's buildSessionContext follows when it resumes
// a session: from the last entry (of any type but a header's), up each
// entry's parentId, to the last entry of that id (pi's byId keeps the
// last). With a parent cycle on that way pi's walk never ends (it fills
// its heap until V8 aborts), although SessionManager.open takes the file.
// It keeps 16 bytes an entry: the hashes of its id and of its parent's.
type resumeWalk struct {
	parent map[uint64]uint64 // by an entry's id, its parent id (0: none)
	// leaf is the last entry's id and parent id.
	leaf, leafParent string
	seen             bool
}

// idHash hashes an id (FNV-1a, 64 bits); never 0, which means none.
func idHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	if h == 0 {
		h = 1
	}
	return h
}

func (w *resumeWalk) add(e *Entry) {
	if e.Type == "session" {
		return
	}
	if w.parent == nil {
		w.parent = map[uint64]uint64{}
	}
	if e.ID != "" {
		p := uint64(0)
		if e.ParentID != "" {
			p = idHash(e.ParentID)
		}
		w.parent[idHash(e.ID)] = p
	}
	w.leaf, w.leafParent, w.seen = e.ID, e.ParentID, true
}

// cycle tells whether the walk up from the leaf comes back to an entry it
// passed: ErrUnresumable with the reason, else nil.
func (w *resumeWalk) cycle() error {
	if !w.seen || w.leafParent == "" {
		return nil
	}
	passed := map[uint64]bool{}
	if w.leaf != "" {
		passed[idHash(w.leaf)] = true
	}
	for p := idHash(w.leafParent); p != 0; {
		if passed[p] {
			leaf := fmt.Sprintf("%q", w.leaf)
			if w.leaf == "" {
				leaf = "without an id"
			}
			return &resumeError{fmt.Sprintf("pi cannot resume this session: the way up from its last entry (%s, where pi resumes) through its parent %q comes back to an entry it passed (a parent cycle, after %d entries); pi opens the file, but building its context walks the cycle until it runs out of memory", leaf, w.leafParent, len(passed))}
		}
		passed[p] = true
		next, ok := w.parent[p]
		if !ok {
			return nil
		}
		p = next
	}
	return nil
}

// checkResume is resumeWalk's check over the lines of data, a session of
// version 2 or later (whose ids are the file's own).
func checkResume(data []byte) error {
	var w resumeWalk
	seq := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		if e, ok := parseLine(data[off:off+end], seq, int64(off)); ok {
			if seq > 0 {
				w.add(e)
			}
			seq++
		}
		off += end + 1
	}
	return w.cycle()
}

// checkResumeFile is checkResume of the session file at path, read once
// and kept nothing of but the walk's hashes.
func checkResumeFile(path string) error {
	var w resumeWalk
	if _, err := Scan(path, nil, w.add); err != nil {
		return err
	}
	return w.cycle()
}
