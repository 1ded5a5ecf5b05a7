package cache

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// A shell glob over the store (grep NEEDLE MNT/*/*/context.json) stats
// every session's context.json before grep reads the first: each session
// is parsed for the size, and by the time grep reads it, the cache, which
// holds a fraction of a large store, has dropped the parse. Parsing it again
// for the read is most of the read's cost. So when context.json is counted
// or rendered from a parse, where its messages are in the file is kept
// with the file's version (a tree.Plan, 16 bytes a message); a read of an
// unchanged session whose parse was dropped reads those bytes and renders
// them, without a parse.

// plans keeps the plans of file versions, the least recently used dropped
// first beyond max bytes; what they hold counts against the store's budget.
type plans struct {
	mu     sync.Mutex
	lru    *list.List // of *planOf, most recent first
	byFile map[*sessions.File]*list.Element
	max    int64
	held   atomic.Int64
	// rendered counts the contexts rendered from a plan (see Stats).
	rendered atomic.Int64
}

type planOf struct {
	f *sessions.File
	p *tree.Plan
}

func newPlans(max int64) *plans {
	return &plans{lru: list.New(), byFile: map[*sessions.File]*list.Element{}, max: max}
}

func (c *plans) get(f *sessions.File) *tree.Plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.byFile[f]
	if el == nil {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*planOf).p
}

func (c *plans) put(f *sessions.File, p *tree.Plan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byFile[f]; el != nil {
		c.held.Add(-el.Value.(*planOf).p.Bytes())
		c.lru.Remove(el)
	}
	c.byFile[f] = c.lru.PushFront(&planOf{f, p})
	c.held.Add(p.Bytes())
	for c.held.Load() > c.max && c.lru.Len() > 1 {
		el := c.lru.Back()
		old := el.Value.(*planOf)
		c.lru.Remove(el)
		delete(c.byFile, old.f)
		c.held.Add(-old.p.Bytes())
	}
}

// KeepPlan keeps the plan of the context at ss's leaf, ctx, unless the
// version has one. ss.mu is held.
func (c *Cache) KeepPlan(ss *Session, ctx *tree.Context) {
	size := ss.Log.Size()
	if size != ss.File.Sig.Size || ss.File.Racy() || c.plans.get(ss.File) != nil {
		// The parse is not of the index's version; or the version is
		// one fromPlan never serves (a live session makes one per
		// append); or it is kept.
		return
	}
	// Messages that are not the file's bytes are kept whole, up to a
	// bound: a migrated session is cheaper to parse again.
	if p := tree.NewPlan(ctx, size, ss.Log.FileOffset, 64<<10+int(size/16)); p != nil {
		c.plans.put(ss.File, p)
	}
}

// FromPlan returns the rendering key (context.json at its leaf) of
// version f of a session (in project, as name) made from the version's
// plan, and holds it as a parse's rendering is held, without the parse.
// ok is false when the session is held parsed at this version (the parse
// serves), when the version has no plan, or when the file is not as the
// plan found it.
func (c *Cache) FromPlan(project, name string, f *sessions.File, key string) (data []byte, ok bool) {
	return c.fromPlan(project, name, f, key, true)
}

// fromPlan is FromPlan; asked tells that a request asks (see with).
func (c *Cache) fromPlan(project, name string, f *sessions.File, key string, asked bool) (data []byte, ok bool) {
	// A racy version (changed just before it was taken) could be
	// rewritten in place with the same signature: the parse checks the
	// bytes, the plan would not.
	want, sized := RecordedSize(f, key)
	if !sized || f.Racy() {
		return nil, false
	}
	p := c.plans.get(f)
	if p == nil || p.Size != f.Sig.Size {
		return nil, false
	}
	s := c.slot(project, name, f, asked)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.File == f {
		if data, ok := s.renders[key].([]byte); ok {
			c.read(s, key)
			return data, true
		}
	}
	if s.Log != nil {
		return nil, false // parsed: the parse, brought up to date, serves
	}
	data, ok = renderPlan(f, p)
	if !ok || int64(len(data)) != want {
		if s.renders == nil {
			c.Drop(s)
		}
		return nil, false
	}
	c.plans.rendered.Add(1)
	s.File, s.renders = f, map[string]any{key: data}
	c.account(s, int64(len(data)+len(key))+64)
	return data, true
}

// renderPlan reads the bytes of the file that plan p locates, when the
// file is still the version f, and renders context.json from them.
func renderPlan(f *sessions.File, p *tree.Plan) ([]byte, bool) {
	fd, err := sessions.OpenRegular(f.Path)
	if err != nil {
		return nil, false
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil || sessions.SigOf(fi) != f.Sig {
		return nil, false
	}
	from, to := p.Span()
	buf := hugemem.Bytes(int(to-from), int(to-from))
	if n, _ := fd.ReadAt(buf, from); n != len(buf) {
		return nil, false
	}
	c, ok := p.Context(buf, from)
	if !ok {
		return nil, false
	}
	return render.ContextJSON(c), true
}
