package tree

// Plan is where the messages of a Context are in the session file it was
// built from, so that the context of the same, unchanged file can be put
// together again from the file's bytes without parsing it: a session read
// for context.json's size alone (a shell glob stats every session) is
// rendered later, once its parse has been dropped from the cache, from a
// read of the file. Messages that are not bytes of the file (pi's
// conversions of custom messages, summaries, migrated entries) are kept.
type Plan struct {
	// Size is the size of the file the plan was made from.
	Size          int64
	thinkingLevel []byte
	model         []byte
	msgs          []planMsg
	kept          []byte // the messages that are not the file's bytes
}

// planMsg is one message: n bytes at off in the file, or in kept.
type planMsg struct {
	off  int64
	n    int32
	kept bool
}

// maxPlanMessage is the largest message a plan locates (a planMsg holds
// its length in 31 bits); a context holding a larger one has no plan.
const maxPlanMessage = 1<<31 - 1

// NewPlan makes the plan of c, built from a file of size bytes; where
// tells where bytes of the file's entries are in it (sessions.Log's
// FileOffset). It returns nil when more than maxKept bytes of messages
// would have to be kept: such a context is cheaper to build again.
func NewPlan(c *Context, size int64, where func([]byte) (int64, bool), maxKept int) *Plan {
	p := &Plan{Size: size, thinkingLevel: clone(c.ThinkingLevel), model: clone(c.Model),
		msgs: make([]planMsg, len(c.Messages))}
	for i, m := range c.Messages {
		if len(m) > maxPlanMessage {
			return nil
		}
		if off, ok := where(m); ok && off+int64(len(m)) <= size {
			p.msgs[i] = planMsg{off: off, n: int32(len(m))}
			continue
		}
		if len(p.kept)+len(m) > maxKept {
			return nil
		}
		p.msgs[i] = planMsg{off: int64(len(p.kept)), n: int32(len(m)), kept: true}
		p.kept = append(p.kept, m...)
	}
	return p
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Bytes is about what the plan holds in memory.
func (p *Plan) Bytes() int64 {
	return int64(cap(p.msgs))*16 + int64(cap(p.kept)+len(p.thinkingLevel)+len(p.model)) + 96
}

// Span is the part of the file the plan reads: [from, to).
func (p *Plan) Span() (from, to int64) {
	from, to = p.Size, 0
	for _, m := range p.msgs {
		if !m.kept {
			from, to = min(from, m.off), max(to, m.off+int64(m.n))
		}
	}
	if from > to {
		return 0, 0
	}
	return from, to
}

// Context puts the context together from data, the file's bytes from
// offset from (as Span gives it); its messages are slices of data and of
// the plan.
func (p *Plan) Context(data []byte, from int64) (*Context, bool) {
	c := &Context{ThinkingLevel: p.thinkingLevel, Model: p.model, Messages: make([][]byte, len(p.msgs))}
	for i, m := range p.msgs {
		if m.kept {
			c.Messages[i] = p.kept[m.off : m.off+int64(m.n) : m.off+int64(m.n)]
			continue
		}
		lo, hi := m.off-from, m.off-from+int64(m.n)
		if lo < 0 || hi > int64(len(data)) {
			return nil, false
		}
		c.Messages[i] = data[lo:hi:hi]
	}
	return c, true
}
