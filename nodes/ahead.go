package nodes

import (
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/pifs/pifs/sessions"
)

// ahead makes views of sessions ready ahead of a walk, as the kernel reads
// a file ahead of a sequential reader.
//
// A walk over a project (ls -l MNT/p/*/, grep NEEDLE MNT/p/*/context.json,
// find -size) asks for the same views of one session after the other, in
// the project's order or its reverse (bash's glob tests the names it
// matched last to first), and sends one request at a time: the session
// asked for is parsed and counted or rendered on one core while the others
// wait. When a view is asked for in two sessions that follow each other,
// the walk's views of the next window sessions are made in the background,
// one session per goroutine and at most window at once, so that the walk
// finds them ready: sizes are recorded with the file as stat records them,
// renderings kept as a read keeps them. A walk that stops leaves at most
// window sessions made for nothing; a session looked at alone starts
// nothing. Sessions larger than the cache can hold window of are left to
// the walk.
type ahead struct {
	r      *Root
	window int
	max    int64 // the largest file read ahead, in bytes

	mu sync.Mutex
	// last is the session each view was asked for last, by project.
	last map[aheadKey]string
	// walked are the views asked for in sequence, by project.
	walked map[string]map[aheadView]aheadWork
	queue  []aheadJob
	queued map[aheadJob]bool
	// running are the goroutines counting, busy those of them that
	// took a job.
	running, busy int

	ran atomic.Int64 // sessions made ready ahead (for tests that guard a cost)
}

// aheadWork is a view to make ready in any session of the store: its
// size, counted by count, as stat asks for it; or, when make is set, its
// rendering, as a read asks for it.
type aheadWork struct {
	key   string
	count func(*session) int64
	make  func(*session) []byte
}

// view names the work in a project's walk: a view's size and its
// rendering are walked apart.
func (w aheadWork) view() aheadView { return aheadView{w.key, w.make != nil} }

// ready tells that the work needs no session: the size is recorded (a
// rendering cannot be told without the session's lock).
func (w aheadWork) ready(f *sessions.File) bool {
	if w.make != nil {
		return false
	}
	_, ok := f.Size(w.key)
	return ok
}

// do makes the view ready in ss, as renderSize or render would. ss.mu is
// held.
func (w aheadWork) do(st *store, ss *session) {
	if w.make == nil {
		sizeOf(ss, w.key, w.count)
		return
	}
	data := rendered(st, ss, w.key, bytesSize, func() []byte { return w.make(ss) })
	ss.file.SetSize(w.key, int64(len(data)))
}

// idle tells that no session is being made ready.
func (a *ahead) idle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running == 0
}

type aheadKey struct {
	project string
	view    aheadView
}

type aheadView struct {
	key  string
	read bool
}

// aheadJob is a session to count the walked views of.
type aheadJob struct{ project, name string }

func newAhead(r *Root, budget int64) *ahead {
	window := 4 * runtime.GOMAXPROCS(0)
	return &ahead{r: r, window: window, max: budget / 2 / int64(window),
		last: map[aheadKey]string{}, walked: map[string]map[aheadView]aheadWork{},
		queued: map[aheadJob]bool{}}
}

// saw is told that a session was asked for work's view.
func (a *ahead) saw(s sessionRef, work aheadWork) {
	view := work.view()
	k := aheadKey{s.project, view}
	a.mu.Lock()
	prev := a.last[k]
	a.last[k] = s.name
	a.mu.Unlock()
	if prev == "" || prev == s.name {
		return
	}
	files, ok := a.r.st.x.Listed(s.project)
	if !ok {
		return // a project not listed yet is not read for this
	}
	// A walk goes either way: bash's glob tests the names it matched
	// last to first.
	i := sort.Search(len(files), func(i int) bool { return files[i].Name >= s.name })
	step := 0
	if i < len(files) && files[i].Name == s.name {
		if i > 0 && files[i-1].Name == prev {
			step = 1
		} else if i+1 < len(files) && files[i+1].Name == prev {
			step = -1
		}
	}
	walking := step != 0
	a.mu.Lock()
	defer a.mu.Unlock()
	views := a.walked[s.project]
	if !walking {
		delete(views, view)
		return
	}
	if views == nil {
		views = map[aheadView]aheadWork{}
		a.walked[s.project] = views
	}
	views[view] = work
	for n := 1; n <= a.window && i+n*step >= 0 && i+n*step < len(files); n++ {
		f := files[i+n*step]
		j := aheadJob{s.project, f.Name}
		if a.queued[j] || !validSessionName(f.Name) || f.Sig.Size > a.max {
			continue
		}
		if work.ready(f) {
			continue
		}
		a.queued[j] = true
		a.queue = append(a.queue, j)
	}
	for a.running < a.window && a.running < a.busy+len(a.queue) {
		a.running++
		go a.run()
	}
}

// run counts queued sessions until none is left.
func (a *ahead) run() {
	for {
		a.mu.Lock()
		if len(a.queue) == 0 {
			a.running--
			a.mu.Unlock()
			return
		}
		j := a.queue[0]
		a.queue = a.queue[1:]
		a.busy++
		a.mu.Unlock()
		a.make(j)
		a.mu.Lock()
		a.busy--
		delete(a.queued, j)
		a.mu.Unlock()
	}
}

// make makes the views walked in a session's project ready in that session.
func (a *ahead) make(j aheadJob) {
	s := sessionRef{r: a.r, project: j.project, name: j.name}
	f, err := s.meta()
	if err != nil {
		return
	}
	a.mu.Lock()
	var todo []aheadWork
	for _, w := range a.walked[j.project] {
		if !w.ready(f) {
			todo = append(todo, w)
		}
	}
	a.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	a.ran.Add(1)
	s.with(func(ss *session) error {
		for _, w := range todo {
			w.do(a.r.st, ss)
		}
		return nil
	})
}
