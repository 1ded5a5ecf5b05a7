package view

import (
	"context"
	"errors"
	"math"
	"strconv"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/search"
)

// MOUNT/search/ and MOUNT/<project>/search/: a query is a folder looked up
// by name (never listed), holding a link to each matching session, hits
// and hits.json, as package search answers and formats them. A query that
// cannot be read is no folder (ENOENT): why is in the log and in
// search/errors, each caller's own. What a query folder shows depends on
// the index's version and on who asks: its inode number carries both, and
// the kernel keeps its name no longer than a request (volatile), so that
// the next lookup after the index changed, or by another caller, answers
// again. One answer is kept per scope, query, sight and version (see
// search.Answers), so that ls then cat runs the query once.

const (
	searchName   = "search"
	hitsName     = "hits"
	hitsJSONName = "hits.json"
	statusName   = "status"
	readmeName   = "README"
)

// volatile is a value the kernel must not keep: it changes with no notice.
type volatile interface{ volatile() }

// searchChild is search/ at the root (project "") or in a project, looked
// up, never listed; absent when the mount was told to keep no index.
func searchChild(v *View, project string) []Child {
	if v.opts.Search == nil && v.opts.SearchOff == "" {
		return nil
	}
	return []Child{{searchName, syscall.S_IFDIR, names.Ino(searchName, project), func() Node { return &searchDir{inProject{v, project}} }}}
}

type searchDir struct{ inProject }

func (d *searchDir) mtime() (time.Time, error) { return dirMtime(d.v.opts.SessionsDir) }

func (d *searchDir) list() ([]Child, error) {
	in := d.inProject
	return []Child{
		{readmeName, syscall.S_IFREG, names.Ino(searchName, d.project, readmeName), func() Node { return &searchFile{in, []byte(search.FolderNote + search.README)} }},
		{statusName, syscall.S_IFREG, names.Ino(searchName, d.project, statusName), func() Node { return &searchStatus{in} }},
		{errorsName, syscall.S_IFREG, names.Ino(searchName, d.project, errorsName), func() Node { return &searchErrors{in, ""} }},
	}, nil
}

func (d *searchDir) lookup(name string) (Child, error) {
	kids, _ := d.list()
	for _, k := range kids {
		if k.Name == name {
			return k, nil
		}
	}
	if d.v.opts.Search == nil {
		return Child{}, ErrNotFound
	}
	q, ok := names.Decode(name)
	if !ok {
		q = name // a name not spelled as names spell them is the query as it is
	}
	var syn *search.SyntaxError
	parsed, err := search.Parse(q, d.v.opts.TimeZone)
	if errors.As(err, &syn) {
		bad := &badQuery{d.inProject, q, syn.Msg}
		if !d.v.opts.Shared {
			bad.refuse("")
			return Child{}, ErrNotFound
		}
		// Who asked is known once the caller's sight is (seenBy).
		return Child{name, syscall.S_IFDIR, names.Ino(searchName, d.project, name), func() Node { return bad }}, nil
	}
	if err != nil {
		return Child{}, err
	}
	gen := [2]uint64{d.v.opts.Search.Gen(), d.v.x.Gen()}
	key := []string{searchName, d.project, name, strconv.FormatUint(gen[0], 16), strconv.FormatUint(gen[1], 16)}
	qd := &queryDir{d.inProject, q, parsed, gen, key, everything}
	return Child{name, syscall.S_IFDIR, names.Ino(key...), func() Node { return qd }}, nil
}

// searchStatus is search/status: how far the index is built.
type searchStatus struct{ inProject }

func (*searchStatus) volatile() {}

func (f *searchStatus) content() ([]byte, time.Time, error) {
	if f.v.opts.Search == nil {
		return []byte(search.StatusOff(f.v.opts.SearchOff)), time.Now(), nil
	}
	return []byte(search.StatusText(f.v.opts.Search.Progress())), time.Now(), nil
}

// queryDir is search/<query>/ as one sight sees it at one version.
type queryDir struct {
	inProject
	query  string
	parsed *search.Query // read once, at the lookup
	gen    [2]uint64     // the versions of the full-text index and the store's it answers from
	key    []string      // what its inode number and its children's are made of
	sees   *sight
}

func (*queryDir) volatile() {}

// seenBy: each sight has a folder of its own.
func (d *queryDir) seenBy(s *sight, c Child) (Child, bool) {
	qd := *d
	qd.key, qd.sees = append(d.key[:len(d.key):len(d.key)], s.tag()...), s
	c.Ino, c.make = names.Ino(qd.key...), func() Node { return &qd }
	return c, true
}

func (d *queryDir) mtime() (time.Time, error) {
	a, err := d.v.searchFor(d.project, d.query, d.parsed, d.gen, d.sees)
	if err != nil || len(a.Result.Sessions) == 0 {
		return dirMtime(d.v.opts.SessionsDir)
	}
	return hitTime(a.Result.Sessions[0].Best, time.Time{}), nil
}

func (d *queryDir) list() ([]Child, error) {
	a, err := d.v.searchFor(d.project, d.query, d.parsed, d.gen, d.sees)
	if err != nil {
		return nil, err
	}
	file := func(name string, data []byte) Child {
		return Child{name, syscall.S_IFREG, names.Ino(append(d.key, name)...), func() Node { return &searchFile{d.inProject, data} }}
	}
	out := []Child{file(hitsName, a.Hits), file(hitsJSONName, a.HitsJSON)}
	for _, s := range a.Result.Sessions {
		out = append(out, Child{s.Best.Session, syscall.S_IFLNK, names.Ino(append(d.key, s.Best.Project, s.Best.Session)...),
			func() Node { return &searchLink{d.inProject, s.Best} }})
	}
	return out, nil
}

func (d *queryDir) lookup(name string) (Child, error) {
	kids, err := d.list()
	for _, k := range kids {
		if k.Name == name {
			return k, nil
		}
	}
	if err == nil {
		err = ErrNotFound
	}
	return Child{}, err
}

// searchFile is README, or hits or hits.json of one answer.
type searchFile struct {
	inProject
	data []byte
}

func (f *searchFile) content() ([]byte, time.Time, error) {
	mt, _ := dirMtime(f.v.opts.SessionsDir)
	return f.data, mt, nil
}

// searchLink points at a session with hits; its time is its best hit's.
type searchLink struct {
	inProject
	best search.Hit
}

func (l *searchLink) target() (string, time.Time, error) {
	f, err := l.v.meta(l.best.Project, l.best.Session)
	if err != nil {
		return "", time.Time{}, err
	}
	t := "../../" + l.best.Session
	if l.project == "" {
		t = "../../" + l.best.Project + "/" + l.best.Session
	}
	return t, hitTime(l.best, time.Unix(0, f.Sig.Mtime)), nil
}

// hitTime is a hit's time, or else when it has none.
func hitTime(h search.Hit, or time.Time) time.Time {
	if math.IsNaN(h.Time) {
		return or
	}
	return time.UnixMilli(int64(h.Time))
}

// badQuery is a query that cannot be read, as a caller looks it up: it is
// refused (ENOENT), and why goes to the log and to that caller's
// search/errors.
type badQuery struct {
	inProject
	query, why string
}

func (q *badQuery) seenBy(s *sight, c Child) (Child, bool) {
	q.refuse(s.uid())
	return c, false
}

func (q *badQuery) refuse(uid string) {
	// The kernel keeps no ENOENT and looks a name up again at once (ls
	// asks twice): one refusal a second is told.
	if q.v.refused.AddOnce(searchErrorsKey(q.project, uid), strconv.Quote(q.query)+": "+q.why, time.Second) {
		q.v.log.Info("search/" + q.query + ": " + q.why)
	}
}

// searchErrorsKey is where the refusals of a caller's queries in a
// project's search/ ("": the root's) are kept (uid "": root's, or
// everyone's on a mount only its user may enter).
func searchErrorsKey(project, uid string) string {
	return searchName + "/" + project + "/" + uid
}

// searchErrors is search/errors: why the caller's queries could not be
// read, newest last.
type searchErrors struct {
	inProject
	uid string
}

func (*searchErrors) volatile() {}

// seenBy: each caller reads their own.
func (f *searchErrors) seenBy(s *sight, c Child) (Child, bool) {
	in := *f
	in.uid = s.uid()
	c.Ino = names.Ino(searchName, f.project, errorsName, in.uid)
	c.make = func() Node { n := in; return &n }
	return c, true
}

func (f *searchErrors) content() ([]byte, time.Time, error) {
	data, t := f.v.refused.Get(searchErrorsKey(f.project, f.uid))
	if t.IsZero() {
		return data, time.Unix(0, 0), nil
	}
	return data, t, nil
}

// searchFor answers a query (q, read from query) in a project ("": the
// store) as sight s sees it, as kept for versions gen of the full-text
// index and of the store (else as they are now): a session gone from the
// store leaves at once.
func (v *View) searchFor(project, query string, q *search.Query, gen [2]uint64, s *sight) (*search.Answer, error) {
	idx := v.opts.Search
	return v.searches.Get(search.AnswerKey{Project: project, Query: query, Sight: s.key, Gen: gen[0], Store: gen[1]}, func() (*search.Answer, error) {
		scope := search.Scope{Project: project}
		if !s.all {
			scope.Visible = func(path string) bool { return !s.hidden[path] }
		}
		res, err := idx.Search(context.Background(), q, scope, 0)
		if err != nil {
			return nil, err
		}
		res = res.Keep(func(project, session string) bool {
			f, err := v.meta(project, session)
			return validProject(project) && err == nil && s.sees(f)
		})
		return search.NewAnswer(res, v.opts.TimeZone), nil
	})
}
