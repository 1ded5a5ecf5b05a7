// Package events makes the lines of the store's events files: one JSON
// line per change in the store (a session created, forked, appended to,
// named, moved, trashed…), made once per change from the bytes the file
// grew by and handed to each open reader's bounded queue. It knows nothing
// of the mount: what a reader may see is a function it is given.
package events

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
	"github.com/pifs/pifs/usage"
)

// MOUNT/events and MOUNT/<project>/events: reading one gives a JSON line
// per change in the store (or the project) from the moment it was opened,
// for as long as it stays open (see docs/reference.md for the lines).
//
// The lines are made once per change, in the goroutine that tells the
// kernel of it (Publish), from the bytes the file grew by, read once for
// every reader, and only while someone reads; each open file then takes
// its share into a bounded queue. Nothing runs while nothing changes: a
// reader waiting for a line sleeps on a channel, never on a timer.

// Bounds of one open events file.
const (
	// eventQueueLines and eventQueueBytes bound the lines that wait for a
	// reader that is behind: past them the oldest are dropped, and the
	// reader is told how many with a "missed" line.
	eventQueueLines = 2048
	eventQueueBytes = 1 << 20
	// eventUnread bounds the bytes given offsets (by a read or by fstat)
	// and not read yet; eventBehind is how much of what was read is kept
	// for a reader that reads it again (tail reads back from the end).
	eventUnread = 256 << 10
	eventBehind = 64 << 10
)

// maxBlockedReads is how many reads of events files one user may have
// waiting for a line at once in a mount. Each holds a FUSE request and its
// buffer; past the bound that user's read that finds nothing returns at
// once with nothing (end of file), so that readers can never take the
// server's memory or threads, and one user's readers never end another's.
const maxBlockedReads = 32

// Event kinds (the "event" member of a line).
const (
	Open      = "open"
	Created   = "created"
	Forked    = "forked"
	Append    = "append"
	Named     = "named"
	Leaf      = "leaf"
	Removed   = "removed"
	Trashed   = "trashed"
	Restored  = "restored"
	Rewritten = "rewritten"
	Missed    = "missed"
)

// line is one line of an events file. The session's members come first;
// an entry's follow in pi's names.
type line struct {
	time      string
	event     string
	project   string
	session   string
	path      string
	sessionID string
	count     int

	cwd     string
	parent  *string
	entries *int
	name    *string
	leaf    *string

	id         string
	parentID   *string
	typ        string
	role       string
	status     string
	stopReason string
	provider   string
	model      string
	tokens     *tokens
	cost       *float64
	tools      []string
	tool       string
	isError    *bool
	timestamp  []byte // the entry's, as JSON
}

type tokens struct{ input, output, cacheRead, cacheWrite, total float64 }

// encode is the line's bytes, with its newline: empty strings and nil
// pointers are left out.
func (l *line) encode() []byte {
	var o jsjson.Builder
	str := func(k, v string) {
		if v != "" {
			o.String(k, v)
		}
	}
	ptr := func(k string, v *string) {
		if v != nil {
			o.String(k, *v)
		}
	}
	str("time", l.time)
	str("event", l.event)
	str("project", l.project)
	str("session", l.session)
	str("path", l.path)
	str("sessionId", l.sessionID)
	if l.count != 0 {
		o.Number("count", float64(l.count))
	}
	str("cwd", l.cwd)
	ptr("parent", l.parent)
	if l.entries != nil {
		o.Number("entries", float64(*l.entries))
	}
	ptr("name", l.name)
	ptr("leaf", l.leaf)
	str("id", l.id)
	ptr("parentId", l.parentID)
	str("type", l.typ)
	str("role", l.role)
	str("status", l.status)
	str("stopReason", l.stopReason)
	str("provider", l.provider)
	str("model", l.model)
	if t := l.tokens; t != nil {
		var b jsjson.Builder
		b.Number("input", t.input)
		b.Number("output", t.output)
		b.Number("cacheRead", t.cacheRead)
		b.Number("cacheWrite", t.cacheWrite)
		b.Number("total", t.total)
		o.Raw("tokens", b.Bytes())
	}
	if l.cost != nil {
		o.Number("cost", *l.cost)
	}
	if len(l.tools) > 0 {
		arr := []byte{'['}
		for i, t := range l.tools {
			if i > 0 {
				arr = append(arr, ',')
			}
			arr = jsjson.Quote(arr, t)
		}
		o.Raw("tools", append(arr, ']'))
	}
	str("tool", l.tool)
	if l.isError != nil {
		o.Raw("isError", []byte(strconv.FormatBool(*l.isError)))
	}
	o.Raw("timestamp", l.timestamp)
	return append(o.Bytes(), '\n')
}

// Hub hands the lines of each change to the open events files of a store.
type Hub struct {
	x *sessions.Index

	mu      sync.Mutex
	readers map[*Reader]bool
	// seen is, per session file, where its lines were taken up to, while
	// someone reads.
	seen map[string]*seenFile
	// moved are the session files pifs itself has just moved to the trash
	// or back (Trashed, Restored), by path: the index sees them
	// go or come like any other.
	moved map[string]string
	// done is closed when the mount goes away: waiting reads return.
	done     chan struct{}
	doneOnce sync.Once

	blocked atomic.Int32
	// blockedBy counts the waiting reads of each user (by uid). Guarded
	// by mu.
	blockedBy map[uint32]int
	// lines counts the lines made, scanned the bytes of session files
	// read to make them.
	lines, scanned atomic.Int64
}

// seenFile is where a session's lines were taken up to.
type seenFile struct {
	off int64 // past the last complete line
}

// NewHub makes the hub of the store x indexes.
func NewHub(x *sessions.Index) *Hub {
	return &Hub{x: x, readers: map[*Reader]bool{}, seen: map[string]*seenFile{}, moved: map[string]string{}, done: make(chan struct{})}
}

// Stats are counts of the events files' work, for a look at a running
// mount (and tests that guard a cost).
type Stats struct {
	// Readers is the open events files, Blocked the reads waiting now.
	Readers, Blocked int
	// Queued is the lines waiting in all queues, MaxQueued the most that
	// ever waited in one, Missed the lines dropped for readers behind.
	Queued, MaxQueued, Missed int
	// Lines is the lines made, Scanned the bytes of session files read
	// to make them.
	Lines, Scanned int64
}

// Stats returns the counts.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Stats{Readers: len(h.readers), Blocked: int(h.blocked.Load()), Lines: h.lines.Load(), Scanned: h.scanned.Load()}
	for r := range h.readers {
		r.mu.Lock()
		s.Queued += len(r.queue)
		s.MaxQueued = max(s.MaxQueued, r.maxQueued)
		s.Missed += r.missedAll
		r.mu.Unlock()
	}
	return s
}

// Close ends every read of an events file: the mount goes away.
func (h *Hub) Close() {
	h.doneOnce.Do(func() { close(h.done) })
}

// MovedBy records that pifs moved the session file at path to the trash or
// back (kind Trashed or Restored; "" takes it back: the move
// failed), so that the change the index finds for it is told as that.
func (h *Hub) MovedBy(path, kind string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case kind == "":
		delete(h.moved, path)
	case len(h.readers) > 0:
		h.moved[path] = kind
	}
}

// Publish makes the lines of changes the index found, or that pifs made
// itself, for the open events files: changes of sessions, each of a
// session folder the mount shows. It runs where the kernel is told of
// them (one goroutine at a time); it reads nothing while no events file
// is open.
func (h *Hub) Publish(changes []sessions.Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.readers) == 0 {
		clear(h.seen)
		clear(h.moved)
		return
	}
	now := time.Now()
	for _, c := range changes {
		lines := h.linesOf(c, now)
		if len(lines) == 0 {
			continue
		}
		h.lines.Add(int64(len(lines)))
		for r := range h.readers {
			if (r.project == "" || r.project == c.Project) && (r.sees == nil || r.sees(c)) {
				r.push(lines)
			}
		}
	}
}

// linesOf makes the lines of one change. h.mu is held.
func (h *Hub) linesOf(c sessions.Change, now time.Time) [][]byte {
	f := c.New
	if f == nil {
		delete(h.seen, c.Old.Path)
		kind := Removed
		if h.moved[c.Old.Path] == Trashed {
			kind = Trashed
			delete(h.moved, c.Old.Path)
		}
		l := sessionLine(kind, c.Project, c.Name, c.Old, now)
		return [][]byte{l.encode()}
	}
	var out [][]byte
	from := int64(0)
	switch s := h.seen[f.Path]; {
	case c.Old == nil:
		// A new session: the lines of its entries are its first turn
		// (pi writes a session's file at its first answer), but for a
		// fork or a clone, whose entries were copied.
		delete(h.seen, f.Path)
		if h.moved[f.Path] == Restored {
			// Back from the trash: its entries were told when written.
			delete(h.moved, f.Path)
			h.seen[f.Path] = &seenFile{off: f.Sig.Size}
			l := sessionLine(Restored, c.Project, c.Name, f, now)
			return [][]byte{l.encode()}
		}
		l := sessionLine(Created, c.Project, c.Name, f, now)
		l.cwd = f.Header.Cwd
		if jsjson.KindOf(f.Header.ParentSession) == jsjson.String {
			l.event = Forked
			parent := ""
			if p, err := h.x.Parent(f); err == nil {
				parent = p.Project + "/" + p.Name
			}
			l.parent = &parent
			n := 0
			end := h.scanEntries(f, 0, func(e *sessions.Entry) { n++ })
			l.entries = &n
			h.seen[f.Path] = &seenFile{off: end}
			return [][]byte{l.encode()}
		}
		out = append(out, l.encode())
	case !f.Sig.Grew(c.Old.Sig) || (s == nil && f.Sig.Size < c.Old.Sig.Size):
		l := sessionLine(Rewritten, c.Project, c.Name, f, now)
		h.seen[f.Path] = &seenFile{off: f.Sig.Size}
		return [][]byte{l.encode()}
	case s != nil:
		from = s.off
	default:
		from = c.Old.Sig.Size
	}
	if f.Header.Version < sessions.CurrentVersion {
		// Ids are assigned when the whole file is read: what changed is
		// told, not its entries.
		h.seen[f.Path] = &seenFile{off: f.Sig.Size}
		l := sessionLine(Rewritten, c.Project, c.Name, f, now)
		return append(out, l.encode())
	}
	end := h.scanEntries(f, from, func(e *sessions.Entry) {
		l := entryLine(e)
		l.time, l.project, l.session, l.path, l.sessionID = isoTime(now), c.Project, c.Name, c.Project+"/"+c.Name, f.Header.ID
		out = append(out, l.encode())
	})
	h.seen[f.Path] = &seenFile{off: end}
	return out
}

// scanEntries calls fn with each complete entry of f from offset from and
// returns where the next scan goes on.
func (h *Hub) scanEntries(f *sessions.File, from int64, fn func(e *sessions.Entry)) int64 {
	_, end, err := sessions.ScanFrom(f.Path, from, nil, func(e *sessions.Entry, complete bool) {
		if complete {
			fn(e)
		}
	})
	if err != nil || end < 0 {
		return max(from, f.Sig.Size)
	}
	h.scanned.Add(end - from)
	return end
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// sessionLine is a line about a session as a whole.
func sessionLine(event, project, name string, f *sessions.File, now time.Time) line {
	l := line{time: isoTime(now), event: event, project: project, session: name, path: project + "/" + name}
	if f != nil && f.Header != nil {
		l.sessionID = f.Header.ID
	}
	return l
}

// entryLine is the line of one entry appended: what it is in pi's words,
// and for a message what a script watching agents wants of it.
func entryLine(e *sessions.Entry) line {
	l := line{event: Append, id: e.ID, typ: e.Type, role: e.Role}
	parent := e.ParentID
	l.parentID = &parent
	if jsjson.KindOf(e.Timestamp) != jsjson.Invalid {
		l.timestamp = jsjson.AppendCanonical(nil, e.Timestamp)
	}
	switch e.Type {
	case "session_info":
		l.event = Named
		name, _ := e.Str("name")
		name = jsjson.Trim(name)
		l.name = &name
	case "custom":
		if ct, _ := e.Str("customType"); ct == tree.LeafRecordType {
			l.event = Leaf
			leaf := e.ParentID
			l.leaf = &leaf
		}
	case "message":
		l.status, _ = tree.EntryStatus(e)
		switch e.Role {
		case "assistant":
			l.stopReason = tree.StopReason(e)
			jsjson.Elements(e.MsgContent, func(b []byte) bool {
				if typ, _ := jsjson.Str(b, "type"); typ == "toolCall" {
					name, _ := jsjson.Str(b, "name")
					l.tools = append(l.tools, name)
				}
				return true
			})
		case "toolResult":
			l.tool, _ = jsjson.Str(e.Msg, "toolName")
			if b := jsjson.Get(e.Msg, "isError"); jsjson.KindOf(b) == jsjson.Bool {
				isErr := string(b) == "true"
				l.isError = &isErr
			}
		}
	}
	if recs := usage.Records([]*sessions.Entry{e}); len(recs) == 1 {
		r := recs[0]
		l.provider, l.model = r.Provider, r.Model
		l.tokens = &tokens{r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Total}
		l.cost = &r.Cost
	}
	return l
}

// Reader is one open events file: a stream of lines with offsets, so
// that a reader that seeks (tail reads back from the end it was told) finds
// the same bytes again.
type Reader struct {
	h       *Hub
	project string
	// sees tells whether the reader may see the session a change is
	// about (nil: it sees all).
	sees func(sessions.Change) bool
	// uid is whose reads count against maxBlockedReads.
	uid uint32

	mu sync.Mutex
	// queue are lines that have no offset yet; missed counts those
	// dropped from it since the last "missed" line.
	queue     [][]byte
	queued    int // bytes in queue
	missed    int
	missedAll int
	maxQueued int
	// log holds the bytes at offsets [base, base+len(log)).
	log    []byte
	base   int64
	readTo int64 // the furthest byte read
	closed bool
	wake   chan struct{}
}

// Open opens the events of the store (project "") or of a project, for
// user uid, who sees what sees lets through (nil: everything). The caller
// has the index read every folder of what it shows first, so that the
// watcher follows all of it.
func (h *Hub) Open(project string, uid uint32, sees func(sessions.Change) bool) *Reader {
	r := &Reader{h: h, project: project, uid: uid, sees: sees, wake: make(chan struct{}, 1)}
	// The stream starts with a line that says so: a file that is empty
	// when opened would be read to its end by tail before it follows it
	// (as it reads /proc files), and the end never comes.
	l := line{time: isoTime(time.Now()), event: Open, project: project}
	r.log = l.encode()
	h.mu.Lock()
	h.readers[r] = true
	h.mu.Unlock()
	return r
}

// Close closes the file: its queue goes.
func (r *Reader) Close() {
	r.h.mu.Lock()
	delete(r.h.readers, r)
	r.h.mu.Unlock()
	r.mu.Lock()
	r.closed, r.queue, r.log = true, nil, nil
	r.mu.Unlock()
	r.signal()
}

func (r *Reader) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// push queues lines, dropping the oldest beyond the bounds.
func (r *Reader) push(lines [][]byte) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	for _, l := range lines {
		r.queue = append(r.queue, l)
		r.queued += len(l)
	}
	for len(r.queue) > eventQueueLines || (r.queued > eventQueueBytes && len(r.queue) > 1) {
		r.queued -= len(r.queue[0])
		r.queue[0] = nil
		r.queue = r.queue[1:]
		r.missed++
		r.missedAll++
	}
	r.maxQueued = max(r.maxQueued, len(r.queue))
	r.mu.Unlock()
	r.signal()
}

func (r *Reader) end() int64 { return r.base + int64(len(r.log)) }

// assign gives offsets to the queued lines, as far as the bound of unread
// bytes lets: first a "missed" line when lines were dropped. r.mu is held.
func (r *Reader) assign() {
	if r.missed > 0 && r.end()-r.readTo < eventUnread {
		l := line{time: isoTime(time.Now()), event: Missed, project: r.project, count: r.missed}
		r.log = append(r.log, l.encode()...)
		r.missed = 0
	}
	n := 0
	for n < len(r.queue) && r.end()-r.readTo < eventUnread {
		r.log = append(r.log, r.queue[n]...)
		r.queued -= len(r.queue[n])
		r.queue[n] = nil
		n++
	}
	r.queue = r.queue[n:]
	if len(r.queue) == 0 {
		r.queue = nil // let the array go
	}
}

// trim lets go of what was read, but the last eventBehind bytes. r.mu is
// held. The bytes are copied, never moved: a read may still hold them.
func (r *Reader) trim() {
	drop := r.readTo - eventBehind - r.base
	if drop < eventBehind {
		return
	}
	r.log = append([]byte(nil), r.log[drop:]...)
	r.base += drop
}

// Size is the file's size to its reader: the bytes it read and those
// waiting for it, all given offsets now (tail -f polls the size with fstat,
// and reads when it grows).
func (r *Reader) Size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.assign()
	return r.end()
}

// Read reads up to n bytes at off. With nothing there yet it waits for
// the next line, until ctx ends (the reader was interrupted: ctx.Err()) or
// the mount goes away; with maxBlockedReads of its user's waiting already,
// it returns nothing at once.
func (r *Reader) Read(ctx context.Context, off int64, n int) ([]byte, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, nil
		}
		r.assign()
		if off < r.end() {
			from := max(off, r.base) - r.base
			data := r.log[from:min(int64(len(r.log)), from+int64(n))]
			r.readTo = max(r.readTo, r.base+from+int64(len(data)))
			r.trim()
			r.mu.Unlock()
			return data, nil
		}
		r.mu.Unlock()
		if !r.h.block(r.uid) {
			return nil, nil
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			r.h.unblock(r.uid)
			return nil, ctx.Err()
		case <-r.h.done:
			r.h.unblock(r.uid)
			return nil, nil
		}
		r.h.unblock(r.uid)
	}
}

// block counts a read of uid that waits, unless uid has maxBlockedReads
// waiting already (false).
func (h *Hub) block(uid uint32) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.blockedBy[uid] >= maxBlockedReads {
		return false
	}
	if h.blockedBy == nil {
		h.blockedBy = map[uint32]int{}
	}
	h.blockedBy[uid]++
	h.blocked.Add(1)
	return true
}

// unblock counts a read of uid that waits no more.
func (h *Hub) unblock(uid uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.blockedBy[uid]--; h.blockedBy[uid] <= 0 {
		delete(h.blockedBy, uid)
	}
	h.blocked.Add(-1)
}
