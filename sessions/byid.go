package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
)

// ErrAmbiguous is returned by ByIDPrefix for a prefix that starts the ids
// of several sessions (see PrefixError).
var ErrAmbiguous = errors.New("ambiguous session id prefix")

// PrefixError is a prefix that starts several sessions' ids: the first
// few of them, in id order, and how many there are.
type PrefixError struct {
	Prefix  string
	Matches []*File
	Count   int
}

// shownMatches is how many sessions a PrefixError names.
const shownMatches = 5

func (e *PrefixError) Error() string {
	var names []string
	for _, f := range e.Matches {
		names = append(names, fmt.Sprintf("%s (%s/%s)", f.Header.ID, f.Project, f.Name))
	}
	more := ""
	if e.Count > len(e.Matches) {
		more = fmt.Sprintf(" and %d more", e.Count-len(e.Matches))
	}
	return fmt.Sprintf("session id prefix %q matches %d sessions: %s%s; give more of the id", e.Prefix, e.Count, strings.Join(names, ", "), more)
}

func (e *PrefixError) Unwrap() error { return ErrAmbiguous }

// ByIDPrefix finds the session whose id is id, or else the one whose id
// starts with it, as `pi --session` and `pi --fork` take a partial id: a
// case-sensitive prefix of the session id in the header (not of the file
// name), an exact id first. Where pi takes the first match of its list
// (sessions of the current project first, then the most recently
// modified), pifs, which has no current project, refuses a prefix that
// starts several ids with a *PrefixError naming them (ErrAmbiguous); none
// is fs.ErrNotExist. The first call reads every project, as ByID does;
// each lookup after is a binary search of the sorted ids.
func (x *Index) ByIDPrefix(prefix string) (*File, error) {
	return x.ByIDPrefixFor(prefix, nil)
}

// ByIDPrefixFor is ByIDPrefix among the sessions sees accepts (nil: all):
// a caller who may not see a session neither finds it nor has a prefix
// made ambiguous by it.
func (x *Index) ByIDPrefixFor(prefix string, sees func(*File) bool) (*File, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.loadAll()
	if prefix == "" {
		return nil, fmt.Errorf("%w: an empty session id", fs.ErrNotExist)
	}
	seen := func(id string) *File {
		for _, f := range x.byID[id] {
			if sees == nil || sees(f) {
				return f
			}
		}
		return nil
	}
	if f := seen(prefix); f != nil {
		return f, nil
	}
	var e PrefixError
	for _, id := range x.ids.starting(prefix, x.byID) {
		f := seen(id)
		if f == nil {
			continue // gone since it was listed, or not the caller's to see
		}
		if e.Count < shownMatches {
			e.Matches = append(e.Matches, f)
		}
		e.Count++
	}
	switch e.Count {
	case 0:
		return nil, fmt.Errorf("%w: no session id starts with %q", fs.ErrNotExist, prefix)
	case 1:
		return e.Matches[0], nil
	}
	e.Prefix = prefix
	return nil, &e
}

// prefixIndex holds the session ids of an index sorted, for lookups by
// prefix. Ids come in as sessions are read; they are not taken out when
// their last session goes (an append replaces a session's File, taking
// its id out and in again), only skipped until the list is rebuilt. pi's
// session ids are UUIDv7s, which grow with time: a new session's id
// usually sorts last and is appended; any other makes the list be sorted
// again at the next lookup, as after the first reading of the store.
type prefixIndex struct {
	ids      []string
	unsorted bool
}

// add records an id that came into the index.
func (p *prefixIndex) add(id string) {
	n := len(p.ids)
	switch {
	case p.unsorted:
		p.ids = append(p.ids, id)
	case n == 0 || id > p.ids[n-1]:
		p.ids = append(p.ids, id)
	default:
		if _, found := slices.BinarySearch(p.ids, id); !found {
			p.ids = append(p.ids, id)
			p.unsorted = true
		}
	}
}

// starting returns the ids that start with prefix, some perhaps gone from
// live (the index's ids), which it rebuilds the list from when needed.
func (p *prefixIndex) starting(prefix string, live map[string][]*File) []string {
	if p.unsorted || len(p.ids) > 2*len(live)+64 {
		p.ids = p.ids[:0]
		for id := range live {
			p.ids = append(p.ids, id)
		}
		sort.Strings(p.ids)
		p.unsorted = false
	}
	lo := sort.SearchStrings(p.ids, prefix)
	hi := lo + sort.Search(len(p.ids)-lo, func(i int) bool { return !strings.HasPrefix(p.ids[lo+i], prefix) })
	return p.ids[lo:hi]
}
