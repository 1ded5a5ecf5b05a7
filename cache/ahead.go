package cache

import (
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/internal/par"
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
	c      *Cache
	window int
	max    int64 // the largest file read ahead, in bytes

	mu sync.Mutex
	// last is the session each view was asked for last, by project.
	last map[aheadKey]string
	// walked are the views asked for in sequence, by project.
	walked map[string]map[aheadView]Work
	queue  []aheadJob
	queued map[aheadJob]bool
	// running are the goroutines counting, busy those of them that
	// took a job.
	running, busy int
	// cur is the walk seen last, which idle cores read further ahead.
	cur aheadWalk
	// listed is when the kernel last listed each project's folder.
	listed map[string]time.Time
	// far is how many sessions ahead of a walk cores that would idle go
	// on, and farBytes how much of the sessions' files that may be.
	far      int
	farBytes int64

	ran atomic.Int64 // sessions made ready ahead (see Stats)
	// gaveUp counts the sessions not made ahead for want of room in the
	// budget (see Cache.room).
	gaveUp atomic.Int64
}

// Work is a view to make ready in any session of the store: its size,
// counted by Count, as stat asks for it; or, when Make is set, its
// rendering, as a read asks for it. Key names the view (its size is
// recorded under it, its rendering kept under it).
type Work struct {
	Key   string
	Count func(*Session) int64
	Make  func(*Session) []byte
	// Planned tells that the rendering can be made from the version's
	// plan, without a parse (see FromPlan).
	Planned bool
}

// view names the work in a project's walk: a view's size and its
// rendering are walked apart.
func (w Work) view() aheadView { return aheadView{w.Key, w.Make != nil} }

// fromPlan makes the rendering from the session's plan, when the work
// can be made so and the session's version f has one.
func (w Work) fromPlan(c *Cache, project, name string, f *sessions.File) bool {
	if !w.Planned || w.Make == nil {
		return false
	}
	_, ok := c.fromPlan(project, name, f, w.Key, false)
	return ok
}

// ready tells that the work needs no session: the size is recorded (a
// rendering cannot be told without the session's lock).
func (w Work) ready(f *sessions.File) bool {
	if w.Make != nil {
		return false
	}
	_, ok := RecordedSize(f, w.Key)
	return ok
}

// do makes the view ready in s, as a stat or a read would. s.mu is held.
func (w Work) do(c *Cache, s *Session) {
	if w.Make == nil {
		SizeOf(s, w.Key, w.Count)
		return
	}
	data := Rendered(c, s, w.Key, BytesSize, func() []byte { return w.Make(s) })
	RecordSize(s.File, w.Key, int64(len(data)))
}

// busyNow is how many goroutines make sessions ready now.
func (a *ahead) busyNow() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return int64(a.running)
}

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

// aheadWalk is where a walk is: the session it asked for last, files[at],
// of its project's sessions, and the way it goes (step 1 or -1); reach is
// the furthest session queued for it; seen is when it asked.
type aheadWalk struct {
	project string
	files   []*sessions.File
	at      int
	step    int
	reach   int
	seen    time.Time
}

func newAhead(c *Cache, budget int64) *ahead {
	window := 4 * runtime.GOMAXPROCS(0)
	return &ahead{c: c, window: window, max: budget / 2 / int64(window), far: 4 * window, farBytes: budget / 8,
		last: map[aheadKey]string{}, walked: map[string]map[aheadView]Work{},
		queued: map[aheadJob]bool{}, listed: map[string]time.Time{}}
}

// Saw is told that a session (of project, named name) was asked for a
// view: when the one asked for it before was the session next to it in
// the project's order, a walk is under way, and the view is made ready in
// the sessions it comes to next.
func (c *Cache) Saw(project, name string, work Work) { c.ahead.saw(project, name, work) }

func (a *ahead) saw(project, name string, work Work) {
	view := work.view()
	k := aheadKey{project, view}
	a.mu.Lock()
	prev := a.last[k]
	a.last[k] = name
	a.mu.Unlock()
	if prev == "" || prev == name {
		return
	}
	files, ok := a.c.x.Listed(project)
	if !ok {
		return // a project not listed yet is not read for this
	}
	// A walk goes either way: bash's glob tests the names it matched
	// last to first.
	i := sort.Search(len(files), func(i int) bool { return files[i].Name >= name })
	step := 0
	if i < len(files) && files[i].Name == name {
		if i > 0 && files[i-1].Name == prev {
			step = 1
		} else if i+1 < len(files) && files[i+1].Name == prev {
			step = -1
		}
	}
	walking := step != 0
	a.mu.Lock()
	defer a.mu.Unlock()
	views := a.walked[project]
	if !walking {
		delete(views, view)
		return
	}
	if views == nil {
		views = map[aheadView]Work{}
		a.walked[project] = views
	}
	views[view] = work
	a.c.passed(project, name, step)
	reach := i + a.window*step
	if c := a.cur; c.project == project && c.step == step && (reach-c.reach)*step < 0 {
		reach = c.reach // read further ahead already
	}
	a.cur = aheadWalk{project: project, files: files, at: i, step: step, reach: reach, seen: time.Now()}
	for n := 1; n <= a.window; n++ {
		if k := i + n*step; k >= 0 && k < len(files) {
			a.queueFile(project, files[k], func(f *sessions.File) bool { return work.ready(f) })
		}
	}
	a.further()
	a.spawn()
}

// queueFile queues a session of project, unless it is queued, ready by
// ready, or not to be read ahead. a.mu is held.
func (a *ahead) queueFile(project string, f *sessions.File, ready func(*sessions.File) bool) {
	j := aheadJob{project, f.Name}
	if a.queued[j] || !a.c.o.Shown(f.Name) || f.Sig.Size > a.max || ready(f) {
		return
	}
	a.queued[j] = true
	a.queue = append(a.queue, j)
}

// spawn starts goroutines for the queue, up to window. a.mu is held.
func (a *ahead) spawn() {
	for a.running < a.window && a.running < a.busy+len(a.queue) {
		a.running++
		go a.run()
	}
}

// further queues the next session of the current walk past those
// queued, when the queue is empty and a core would idle: sessions of a
// walk differ in size, and the walk waits for the largest of its window
// while the others are done. It goes at most far sessions ahead of the
// walk, and farBytes of their files, which the cache keeps until the walk
// comes. a.mu is held.
func (a *ahead) further() {
	w := &a.cur
	if len(a.queue) > 0 || a.busy >= runtime.GOMAXPROCS(0) || w.step == 0 {
		return
	}
	views := a.walked[w.project]
	ready := func(f *sessions.File) bool {
		for _, v := range views {
			if !v.ready(f) {
				return false
			}
		}
		return true
	}
	// The files between the walk and its reach, then each one past it.
	var bytes int64
	for i := w.at + w.step; i != w.reach+w.step && i >= 0 && i < len(w.files); i += w.step {
		bytes += w.files[i].Sig.Size
	}
	for len(a.queue) == 0 {
		k := w.reach + w.step
		if k < 0 || k >= len(w.files) || (k-w.at)*w.step > a.far {
			return
		}
		if bytes += w.files[k].Sig.Size; bytes > a.farBytes {
			return
		}
		w.reach = k
		a.queueFile(w.project, w.files[k], ready)
	}
	a.spawn()
}

// listedSpan is how long after the kernel listed a project's folder a
// walk under way is taken to come to its sessions.
const listedSpan = 30 * time.Second

// Listing is told that the kernel lists a project's folder.
func (c *Cache) Listing(project string) { c.ahead.listing(project, time.Now()) }

func (a *ahead) listing(project string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listed[project] = now
}

// statWalk returns the sizes a walk under way asks each session for, when
// it asked within walkGap (or the gap SetWalkTimes set), and the projects it is taken to come to: those
// whose folders the kernel listed within listedSpan, as the shell does to
// expand MNT/*/*/ before ls -l starts (ls -l asks the same of every
// project's sessions). It returns nothing for a walk that reads.
func (a *ahead) statWalk(now time.Time) (views []Work, projects map[string]bool) {
	gap := a.c.o.WalkGap()
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.cur
	if w.step == 0 || now.Sub(w.seen) > gap {
		return nil, nil
	}
	for _, v := range a.walked[w.project] {
		if v.Make == nil {
			views = append(views, v)
		}
	}
	projects = map[string]bool{}
	for p, t := range a.listed {
		if now.Sub(t) <= listedSpan {
			projects[p] = true
		}
	}
	return views, projects
}

// ReadForWalk reads the files of sessions that a walk statting session
// folders will come to as the walk will read them: parsed, their walked
// views counted, each then given to took (when set); it returns the
// others. A view that needs a whole session file (the store's usage
// report, a project's by-name/) asked for during such a walk reads its
// sessions this way, so that each file is read once, and on every core
// rather than one request at a time. Without a walk, for the projects a
// walk is not taken to come to (see statWalk: ls -l MNT/p/*/ comes to no
// other), and for sessions whose walked views are counted already or too
// large to read ahead, the caller reads them as it would.
func (c *Cache) ReadForWalk(files []*sessions.File, took func(*Session)) (rest []*sessions.File) {
	if len(files) == 0 {
		return files
	}
	a := c.ahead
	views, projects := a.statWalk(time.Now())
	if len(views) == 0 {
		return files
	}
	var parse []*sessions.File
	for _, f := range files {
		ready := true
		for _, v := range views {
			ready = ready && v.ready(f)
		}
		if ready || !projects[f.Project] || f.Sig.Size > a.max {
			rest = append(rest, f)
		} else {
			parse = append(parse, f)
		}
	}
	var mu sync.Mutex
	par.Each(len(parse), func(i int) {
		f := parse[i]
		err := c.withCurrent(f.Project, f.Name, false, func(s *Session) error {
			for _, v := range views {
				v.do(c, s)
			}
			if took != nil {
				took(s)
			}
			return nil
		})
		if err != nil {
			mu.Lock()
			rest = append(rest, f)
			mu.Unlock()
		}
	})
	return rest
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
		a.further()
		a.mu.Unlock()
	}
}

// make makes the views walked in a session's project ready in that session.
func (a *ahead) make(j aheadJob) {
	f, err := a.c.x.Lookup(j.project, j.name)
	if err != nil {
		return
	}
	a.mu.Lock()
	if w := a.cur; w.project == j.project && w.step != 0 && strings.Compare(j.name, w.files[w.at].Name)*w.step <= 0 {
		a.mu.Unlock()
		return // the walk came to it first
	}
	var todo []Work
	for _, w := range a.walked[j.project] {
		if !w.ready(f) {
			todo = append(todo, w)
		}
	}
	a.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	// What it makes holds a share of the budget until the walk reads it
	// (see Cache.room): a session that would take more is left to the walk.
	c, renders := a.c, false
	for _, w := range todo {
		renders = renders || w.Make != nil
	}
	taken := aheadCost(f.Sig.Size, renders)
	if !c.room(taken) {
		a.gaveUp.Add(1)
		return
	}
	// A plan makes a rendering without a parse, when every view to make
	// has one: a parse for the others would replace what it made.
	planned := true
	for _, w := range todo {
		planned = planned && w.Planned && w.Make != nil
	}
	if planned {
		var made []string
		for _, w := range todo {
			had := c.holds(f, w.Key)
			if !w.fromPlan(c, j.project, j.name, f) {
				planned = false
				break
			}
			if !had {
				made = append(made, w.Key)
			}
		}
		c.pinPlanned(f, made)
		if planned {
			c.giveBack(taken)
			return
		}
	}
	a.ran.Add(1)
	// A session that cannot be read now is left to the walk, which says
	// why when it gets there.
	_ = c.with(j.project, j.name, f, false, func(ss *Session) error {
		// The session is pinned while it is made, and each rendering as
		// it is made: neither the walk's nor the session's own bound on
		// its renderings drops them (see Rendered).
		if !c.pinning(ss) {
			return nil // dropped meanwhile
		}
		defer c.pinned(ss, nil)
		for _, w := range todo {
			_, had := ss.renders[w.Key]
			if had && w.Make != nil {
				// Made already: taking it again would count as the
				// walk's read of it, and unpin the session.
				continue
			}
			w.do(c, ss)
			if w.Make != nil {
				c.pinned(ss, []string{w.Key})
			}
		}
		return nil
	})
	c.giveBack(taken)
}

// withCurrent is with for the index's current version of a session file.
func (c *Cache) withCurrent(project, name string, asked bool, fn func(s *Session) error) error {
	f, err := c.x.Lookup(project, name)
	if err != nil {
		return err
	}
	return c.with(project, name, f, asked, fn)
}
