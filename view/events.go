package view

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/names"
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

const eventsName = "events"

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

// MaxBlockedReads is how many reads of events files one user may have
// waiting for a line at once in a mount. Each holds a FUSE request and its
// buffer; past the bound that user's read that finds nothing returns at
// once with nothing (end of file), so that readers can never take the
// server's memory or threads, and one user's readers never end another's.
const MaxBlockedReads = 32

// Event kinds (the "event" member of a line).
const (
	EventOpen      = "open"
	EventCreated   = "created"
	EventForked    = "forked"
	EventAppend    = "append"
	EventNamed     = "named"
	EventLeaf      = "leaf"
	EventRemoved   = "removed"
	EventTrashed   = "trashed"
	EventRestored  = "restored"
	EventRewritten = "rewritten"
	EventMissed    = "missed"
)

// eventLine is one line of an events file. The session's members come
// first; an entry's follow in pi's names.
type eventLine struct {
	Time      string `json:"time"`
	Event     string `json:"event"`
	Project   string `json:"project,omitempty"`
	Session   string `json:"session,omitempty"`
	Path      string `json:"path,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Count     int    `json:"count,omitempty"`

	Cwd     string  `json:"cwd,omitempty"`
	Parent  *string `json:"parent,omitempty"`
	Entries *int    `json:"entries,omitempty"`
	Name    *string `json:"name,omitempty"`
	Leaf    *string `json:"leaf,omitempty"`

	ID         string          `json:"id,omitempty"`
	ParentID   *string         `json:"parentId,omitempty"`
	Type       string          `json:"type,omitempty"`
	Role       string          `json:"role,omitempty"`
	Status     string          `json:"status,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Provider   string          `json:"provider,omitempty"`
	Model      string          `json:"model,omitempty"`
	Tokens     *eventTokens    `json:"tokens,omitempty"`
	Cost       *float64        `json:"cost,omitempty"`
	Tools      []string        `json:"tools,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	IsError    *bool           `json:"isError,omitempty"`
	Timestamp  json.RawMessage `json:"timestamp,omitempty"`
}

type eventTokens struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// encode is the line's bytes, with its newline.
func (l *eventLine) encode() []byte {
	b, err := json.Marshal(l)
	if err != nil {
		// Only a number that is not finite fails: a damaged usage.
		l.Tokens, l.Cost = nil, nil
		b, _ = json.Marshal(l)
	}
	return append(b, '\n')
}

// hub hands the lines of each change to the open events files.
type hub struct {
	mu      sync.Mutex
	readers map[*EventReader]bool
	// seen is, per session file, where its lines were taken up to, while
	// someone reads.
	seen map[string]*seenFile
	// moved are the session files pifs itself has just moved to the trash
	// or back (EventTrashed, EventRestored), by path: the index sees them
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

func newHub() *hub {
	return &hub{readers: map[*EventReader]bool{}, seen: map[string]*seenFile{}, moved: map[string]string{}, done: make(chan struct{})}
}

// EventStats are counts of the events files' work, for tests that guard a
// cost and for a look at a running mount.
type EventStats struct {
	// Readers is the open events files, Blocked the reads waiting now.
	Readers, Blocked int
	// Queued is the lines waiting in all queues, MaxQueued the most that
	// ever waited in one, Missed the lines dropped for readers behind.
	Queued, MaxQueued, Missed int
	// Lines is the lines made, Scanned the bytes of session files read
	// to make them.
	Lines, Scanned int64
}

// EventStats returns the counts.
func (v *View) EventStats() EventStats {
	h := v.events
	h.mu.Lock()
	defer h.mu.Unlock()
	s := EventStats{Readers: len(h.readers), Blocked: int(h.blocked.Load()), Lines: h.lines.Load(), Scanned: h.scanned.Load()}
	for r := range h.readers {
		r.mu.Lock()
		s.Queued += len(r.queue)
		s.MaxQueued = max(s.MaxQueued, r.maxQueued)
		s.Missed += r.missedAll
		r.mu.Unlock()
	}
	return s
}

// CloseEvents ends every read of an events file: the mount goes away.
func (v *View) CloseEvents() {
	v.events.doneOnce.Do(func() { close(v.events.done) })
}

// movedBy records that pifs moved the session file at path to the trash or
// back (kind EventTrashed or EventRestored; "" takes it back: the move
// failed), so that the change the index finds for it is told as that.
func (h *hub) movedBy(path, kind string) {
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
// itself, for the open events files. It runs where the kernel is told of
// them (one goroutine at a time); it reads nothing while no events file
// is open.
func (v *View) Publish(changes []sessions.Change) {
	h := v.events
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.readers) == 0 {
		clear(h.seen)
		clear(h.moved)
		return
	}
	now := time.Now()
	sights := map[string]*sight{} // per identity of a reader, once needed
	for _, c := range changes {
		if c.Name == "" || !validProject(c.Project) || !validSessionName(c.Name) {
			continue
		}
		lines := v.linesOf(c, now)
		if len(lines) == 0 {
			continue
		}
		h.lines.Add(int64(len(lines)))
		for r := range h.readers {
			if (r.project == "" || r.project == c.Project) && (r.who == nil || v.seesChange(*r.who, c, sights)) {
				r.push(lines)
			}
		}
	}
}

// seesChange tells whether w may see the session a change is about: by
// w's sight of the index as it is now (worked out once per identity and
// version, kept in seen for the rest of the changes told together); a
// session gone from the index (removed, trashed) by the owner and mode
// its file had and the folder it was in.
func (v *View) seesChange(w who, c sessions.Change, seen map[string]*sight) bool {
	if c.New == nil {
		if c.Old == nil {
			return false
		}
		return w.allows(Owner{c.Old.Uid, c.Old.Gid, uint32(c.Old.Mode.Perm())}, mayRead) &&
			v.searchDown(w, filepath.Dir(c.Old.Path)) == nil
	}
	k := w.key()
	s := seen[k]
	if s == nil {
		s = v.sightFor(w)
		seen[k] = s
	}
	return s.sees(c.New)
}

// linesOf makes the lines of one change. h.mu is held.
func (v *View) linesOf(c sessions.Change, now time.Time) [][]byte {
	h := v.events
	f := c.New
	if f == nil {
		delete(h.seen, c.Old.Path)
		kind := EventRemoved
		if h.moved[c.Old.Path] == EventTrashed {
			kind = EventTrashed
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
		if h.moved[f.Path] == EventRestored {
			// Back from the trash: its entries were told when written.
			delete(h.moved, f.Path)
			h.seen[f.Path] = &seenFile{off: f.Sig.Size}
			l := sessionLine(EventRestored, c.Project, c.Name, f, now)
			return [][]byte{l.encode()}
		}
		l := sessionLine(EventCreated, c.Project, c.Name, f, now)
		l.Cwd = f.Header.Cwd
		if jsjson.KindOf(f.Header.ParentSession) == jsjson.String {
			l.Event = EventForked
			parent := ""
			if p, err := v.st.x.Parent(f); err == nil {
				parent = p.Project + "/" + p.Name
			}
			l.Parent = &parent
			n := 0
			end := v.scanEntries(f, 0, func(e *sessions.Entry) { n++ })
			l.Entries = &n
			h.seen[f.Path] = &seenFile{off: end}
			return [][]byte{l.encode()}
		}
		out = append(out, l.encode())
	case !f.Sig.Grew(c.Old.Sig) || (s == nil && f.Sig.Size < c.Old.Sig.Size):
		l := sessionLine(EventRewritten, c.Project, c.Name, f, now)
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
		l := sessionLine(EventRewritten, c.Project, c.Name, f, now)
		return append(out, l.encode())
	}
	end := v.scanEntries(f, from, func(e *sessions.Entry) {
		l := entryLine(e)
		l.Time, l.Project, l.Session, l.Path, l.SessionID = isoTime(now), c.Project, c.Name, c.Project+"/"+c.Name, f.Header.ID
		out = append(out, l.encode())
	})
	h.seen[f.Path] = &seenFile{off: end}
	return out
}

// scanEntries calls fn with each complete entry of f from offset from and
// returns where the next scan goes on.
func (v *View) scanEntries(f *sessions.File, from int64, fn func(e *sessions.Entry)) int64 {
	_, end, err := sessions.ScanFrom(f.Path, from, nil, func(e *sessions.Entry, complete bool) {
		if complete {
			fn(e)
		}
	})
	if err != nil || end < 0 {
		return max(from, f.Sig.Size)
	}
	v.events.scanned.Add(end - from)
	return end
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// sessionLine is a line about a session as a whole.
func sessionLine(event, project, name string, f *sessions.File, now time.Time) eventLine {
	l := eventLine{Time: isoTime(now), Event: event, Project: project, Session: name, Path: project + "/" + name}
	if f != nil && f.Header != nil {
		l.SessionID = f.Header.ID
	}
	return l
}

// entryLine is the line of one entry appended: what it is in pi's words,
// and for a message what a script watching agents wants of it.
func entryLine(e *sessions.Entry) eventLine {
	l := eventLine{Event: EventAppend, ID: e.ID, Type: e.Type, Role: e.Role, Timestamp: json.RawMessage(e.Timestamp)}
	parent := e.ParentID
	l.ParentID = &parent
	if jsjson.KindOf(e.Timestamp) == jsjson.Invalid {
		l.Timestamp = nil
	}
	switch e.Type {
	case "session_info":
		l.Event = EventNamed
		name, _ := e.Str("name")
		name = jsjson.Trim(name)
		l.Name = &name
	case "custom":
		if ct, _ := e.Str("customType"); ct == tree.LeafRecordType {
			l.Event = EventLeaf
			leaf := e.ParentID
			l.Leaf = &leaf
		}
	case "message":
		l.Status, _ = tree.EntryStatus(e)
		switch e.Role {
		case "assistant":
			l.StopReason = tree.StopReason(e)
			jsjson.Elements(e.MsgContent, func(b []byte) bool {
				if typ, _ := jsjson.Str(b, "type"); typ == "toolCall" {
					name, _ := jsjson.Str(b, "name")
					l.Tools = append(l.Tools, name)
				}
				return true
			})
		case "toolResult":
			l.Tool, _ = jsjson.Str(e.Msg, "toolName")
			if b := jsjson.Get(e.Msg, "isError"); jsjson.KindOf(b) == jsjson.Bool {
				isErr := string(b) == "true"
				l.IsError = &isErr
			}
		}
	}
	if recs := usage.Records([]*sessions.Entry{e}); len(recs) == 1 {
		r := recs[0]
		l.Provider, l.Model = r.Provider, r.Model
		l.Tokens = &eventTokens{r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Total}
		l.Cost = &r.Cost
	}
	return l
}

// EventReader is one open events file: a stream of lines with offsets, so
// that a reader that seeks (tail reads back from the end it was told) finds
// the same bytes again.
type EventReader struct {
	h       *hub
	project string
	// who is whom the reader shows what they may see (see sight), nil
	// for one who sees all.
	who *who
	// uid is whose reads count against MaxBlockedReads.
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

// OpenEvents opens the events of the store (project "") or of a project.
// Every folder of what it shows is read now, so that the watcher follows
// all of it.
func (v *View) OpenEvents(project string) (*EventReader, error) {
	return v.openEvents(project, nil)
}

// openEvents opens events for identity w (nil: one who sees all).
func (v *View) openEvents(project string, w *who) (*EventReader, error) {
	if project == "" {
		v.st.x.All()
	} else if _, err := v.st.sessionFiles(project); err != nil {
		return nil, err
	}
	r := &EventReader{h: v.events, project: project, who: w, wake: make(chan struct{}, 1)}
	if w != nil {
		r.uid = w.uid
	}
	// The stream starts with a line that says so: a file that is empty
	// when opened would be read to its end by tail before it follows it
	// (as it reads /proc files), and the end never comes.
	l := eventLine{Time: isoTime(time.Now()), Event: EventOpen, Project: project}
	r.log = l.encode()
	v.events.mu.Lock()
	v.events.readers[r] = true
	v.events.mu.Unlock()
	return r, nil
}

// Close closes the file: its queue goes.
func (r *EventReader) Close() {
	r.h.mu.Lock()
	delete(r.h.readers, r)
	r.h.mu.Unlock()
	r.mu.Lock()
	r.closed, r.queue, r.log = true, nil, nil
	r.mu.Unlock()
	r.signal()
}

func (r *EventReader) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// push queues lines, dropping the oldest beyond the bounds.
func (r *EventReader) push(lines [][]byte) {
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

func (r *EventReader) end() int64 { return r.base + int64(len(r.log)) }

// assign gives offsets to the queued lines, as far as the bound of unread
// bytes lets: first a "missed" line when lines were dropped. r.mu is held.
func (r *EventReader) assign() {
	if r.missed > 0 && r.end()-r.readTo < eventUnread {
		l := eventLine{Time: isoTime(time.Now()), Event: EventMissed, Project: r.project, Count: r.missed}
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
func (r *EventReader) trim() {
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
func (r *EventReader) Size() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.assign()
	return r.end()
}

// Read reads up to n bytes at off. With nothing there yet it waits for
// the next line, until ctx ends (the reader was interrupted: ctx.Err()) or
// the mount goes away; with MaxBlockedReads waiting already, it returns
// nothing at once.
func (r *EventReader) Read(ctx context.Context, off int64, n int) ([]byte, error) {
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

// block counts a read of uid that waits, unless uid has MaxBlockedReads
// waiting already (false).
func (h *hub) block(uid uint32) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.blockedBy[uid] >= MaxBlockedReads {
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
func (h *hub) unblock(uid uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.blockedBy[uid]--; h.blockedBy[uid] <= 0 {
		delete(h.blockedBy, uid)
	}
	h.blocked.Add(-1)
}

// eventsFile is events, at the root or in a project. Its size to stat is
// 0; to the process reading it, what it was given (see EventReader.Size).
type eventsFile struct{ inProject }

// Streamer is a file whose reads are a stream from the moment it is opened
// (events): the layer that answers the kernel opens it with Events.
type Streamer interface {
	File
	streams() string
}

func (f *eventsFile) streams() string { return f.project }

// content is empty, dated as new is: the store's or the project's folder.
func (f *eventsFile) content() ([]byte, time.Time, error) {
	return (&newFile{f.inProject}).content()
}

// Events opens a Streamer's stream for caller c: on a mount other users
// may enter, it tells of the sessions c may see only (see sight), as they
// are when each change is told.
func (v *View) Events(s Streamer, c Caller) (*EventReader, error) {
	if !v.opts.Shared {
		return v.openEvents(s.streams(), nil)
	}
	w := c.who()
	if w.root() {
		return v.openEvents(s.streams(), nil)
	}
	return v.openEvents(s.streams(), &w)
}

func eventsChild(v *View, project string) Child {
	ino := names.Ino(eventsName)
	if project != "" {
		ino = names.Ino("p", project, eventsName)
	}
	return Child{eventsName, syscall.S_IFREG, ino, func() Node { return &eventsFile{inProject{v, project}} }}
}
