package search

import (
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
)

// Progress is where the builder stands.
type Progress struct {
	// Listed tells that the store was listed: Sessions and Bytes are
	// known (until then they grow as projects are listed).
	Listed bool
	// Sessions and Bytes are what this build has to index: new and
	// changed session files, and their bytes not indexed yet (an append
	// counts its own bytes); Done are those indexed so far.
	Sessions, SessionsDone int
	Bytes, BytesDone       int64
	// Rate is bytes a second over the time the builder worked; Left is
	// the time the bytes left take at that rate (0 when not known).
	Rate float64
	Left time.Duration
	// Complete tells that every session of the store as last listed, and
	// every change told, is indexed.
	Complete bool
}

// item is a session file to index again (or to remove).
type item struct {
	path, project, name string
	header              *sessions.Header
	remove              bool
	told                bool // a change told (Changed), shown as soon as done
}

type builder struct {
	x     *Index
	store *sessions.Index

	mu       sync.Mutex
	queue    []item         // changes told, in order
	queued   map[string]int // path → position in queue
	sweep    []item         // the store's sessions not looked at yet
	working  string         // the path being indexed
	listed   bool
	idle     chan struct{} // closed while complete
	progress Progress
	busy     time.Duration // time spent indexing
	batch    *batch        // the transaction under way (the builder's goroutine's)
	merging  merging       // the builder's goroutine's

	wake, quit, done chan struct{}
}

// Start starts the builder: it lists the store (in the background, so
// that it never delays a mount), removes what the index holds of files
// that are gone, and indexes what is new or changed since the index last
// saw it, then follows what Changed tells. It runs on one thread at a
// lower priority, one session file at a time.
func (x *Index) Start(store *sessions.Index) {
	b := x.builder()
	b.mu.Lock()
	if b.store != nil {
		b.mu.Unlock()
		return
	}
	b.store = store
	b.mu.Unlock()
	go b.run()
}

func (x *Index) builder() *builder {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.b == nil {
		b := &builder{x: x, queued: map[string]int{}, idle: make(chan struct{}), batch: &batch{x: x},
			wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
		b.batch.onCommit = b.done1
		x.b = b
	}
	return x.b
}

// Changed tells the builder what the store's watcher found changed: a
// session added, changed or gone. The builder takes them before what is
// left of its first pass, within a batch (BatchBytes of text) of what it
// is doing.
func (x *Index) Changed(changes []sessions.Change) {
	b := x.builder()
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range changes {
		if c.Name == "" {
			continue // a project folder: its sessions come as changes of their own
		}
		if c.Old != nil && (c.New == nil || c.New.Path != c.Old.Path) {
			b.enqueue(item{path: c.Old.Path, remove: true, told: true})
			n++
		}
		if c.New != nil {
			b.enqueue(item{path: c.New.Path, project: c.Project, name: c.Name, header: c.New.Header, told: true})
			n++
		}
	}
	if n > 0 {
		b.busyNow()
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

func (b *builder) enqueue(it item) {
	if i, ok := b.queued[it.path]; ok {
		b.queue[i] = it
		return
	}
	b.queued[it.path] = len(b.queue)
	b.queue = append(b.queue, it)
	b.progress.Sessions++
}

// busyNow marks the builder as having work (b.mu held).
func (b *builder) busyNow() {
	select {
	case <-b.idle:
		b.idle = make(chan struct{})
	default:
	}
	b.progress.Complete = false
}

// Idle returns a channel closed once the builder has indexed everything
// it was given (the store as listed, and every change told until then)
// and merged the segments it had to (see merge.go).
func (x *Index) Idle() <-chan struct{} {
	b := x.builder()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.idle
}

// Progress tells where the builder stands.
func (x *Index) Progress() Progress {
	b := x.builder()
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.progress
	p.Listed = b.listed
	if s := b.busy.Seconds(); s > 0 {
		p.Rate = float64(p.BytesDone) / s
		if p.Rate > 0 && p.Bytes > p.BytesDone {
			p.Left = time.Duration(float64(p.Bytes-p.BytesDone) / p.Rate * float64(time.Second))
		}
	}
	return p
}

// complete tells whether the index holds the store as last told.
func (x *Index) complete() bool {
	b := x.builder()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.progress.Complete
}

func (b *builder) stop() {
	b.mu.Lock()
	started := b.store != nil
	b.mu.Unlock()
	select {
	case <-b.quit:
	default:
		close(b.quit)
	}
	if started {
		<-b.done
	}
}

func (b *builder) stopped() bool {
	select {
	case <-b.quit:
		return true
	default:
		return false
	}
}

func (b *builder) run() {
	defer close(b.done)
	defer b.commit() // what was done before a stop is kept
	lowerPriority()
	b.list()
	for !b.stopped() {
		it, ok := b.next(false)
		if !ok {
			b.mu.Lock()
			b.progress.Complete = len(b.queue) == 0 && len(b.sweep) == 0
			b.mu.Unlock()
			var settle <-chan time.Time
			if !b.x.noMerge {
				if wait := b.mergeWait(); wait > 0 {
					settle = time.After(wait)
				} else if b.merge() {
					continue
				}
			}
			b.mu.Lock()
			if settle == nil && len(b.queue) == 0 && len(b.sweep) == 0 {
				select {
				case <-b.idle:
				default:
					close(b.idle)
				}
			}
			b.mu.Unlock()
			select {
			case <-b.wake:
			case <-settle:
			case <-b.quit:
				return
			}
			continue
		}
		b.do(it, true)
	}
}

// next takes the next item: a change told, else the first pass's next
// file. nested: only changes, and none of the file being indexed.
func (b *builder) next(nested bool) (item, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, it := range b.queue {
		if nested && it.path == b.working {
			continue
		}
		b.queue = append(b.queue[:i:i], b.queue[i+1:]...)
		delete(b.queued, it.path)
		for j := i; j < len(b.queue); j++ {
			b.queued[b.queue[j].path] = j
		}
		return it, true
	}
	if nested || len(b.sweep) == 0 {
		return item{}, false
	}
	it := b.sweep[0]
	b.sweep = b.sweep[1:]
	return it, true
}

// do indexes (or removes) one file, in the batch under way; top: it may
// take changes told meanwhile between the batches of a large file. The
// batch is committed after it when it was a change told, when changes
// wait, when the batch is full or a second old, or when nothing is left
// to do.
func (b *builder) do(it item, top bool) {
	x := b.x
	start := time.Now()
	var service func()
	if top {
		b.mu.Lock()
		b.working = it.path
		b.mu.Unlock()
		service = func() {
			for !b.stopped() {
				next, ok := b.next(true)
				if !ok {
					return
				}
				b.do(next, false)
			}
		}
	}
	var err error
	if it.remove {
		err = x.removeFile(b.batch, it.path)
	} else {
		err = x.indexFile(b.batch, it, service, b.stopped)
	}
	if err != nil {
		// The batch goes: the other files it held are looked at again.
		again := b.batch.rollback()
		x.log(fmt.Sprintf("search index: %s: %v", it.path, err))
		b.mu.Lock()
		for _, p := range again {
			if p != it.path {
				b.sweep = append([]item{{path: p}}, b.sweep...)
			}
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	if top {
		b.working = ""
	}
	waiting := len(b.queue) > 0
	left := len(b.sweep) > 0
	b.mu.Unlock()
	if !top || it.told || waiting || !left || b.batch.full() {
		b.commit()
	}
	b.mu.Lock()
	b.busy += time.Since(start)
	b.progress.SessionsDone++
	b.mu.Unlock()
}

// commit commits the batch; when it fails, the files it held are looked
// at again.
func (b *builder) commit() {
	if err := b.batch.commit(); err != nil {
		b.x.log(fmt.Sprintf("search index: %v", err))
		again := b.batch.rollback()
		b.mu.Lock()
		for _, p := range again {
			b.sweep = append([]item{{path: p}}, b.sweep...)
		}
		b.mu.Unlock()
	}
}

// done1 counts bytes indexed.
func (b *builder) done1(n int64) {
	b.mu.Lock()
	b.progress.BytesDone += n
	b.mu.Unlock()
}

// list lists the store, removes the files the index holds that are gone,
// and makes the first pass's list of files to look at.
func (b *builder) list() {
	x := b.x
	seen := map[string]bool{}
	for _, p := range b.store.Projects() {
		if b.stopped() {
			return
		}
		files, err := b.store.Sessions(p)
		if err != nil {
			continue
		}
		var work []item
		var bytes int64
		for _, f := range files {
			seen[f.Path] = true
			x.mu.Lock()
			r := x.paths[f.Path]
			x.mu.Unlock()
			if r != nil && r.complete && !r.racy && r.sig == f.Sig && r.project == f.Project && r.name == f.Name {
				x.stats.unchanged.Add(1)
				continue
			}
			work = append(work, item{path: f.Path, project: f.Project, name: f.Name, header: f.Header})
			if r != nil && r.off >= 0 && f.Sig.Size >= r.off && f.Sig.Ino == r.sig.Ino {
				bytes += f.Sig.Size - r.off
			} else {
				bytes += f.Sig.Size
			}
		}
		b.mu.Lock()
		b.sweep = append(b.sweep, work...)
		b.progress.Sessions += len(work)
		b.progress.Bytes += bytes
		b.mu.Unlock()
	}
	x.mu.Lock()
	var gone []string
	for p := range x.paths {
		if !seen[p] {
			gone = append(gone, p)
		}
	}
	x.mu.Unlock()
	b.mu.Lock()
	for _, p := range gone {
		if _, ok := b.queued[p]; !ok {
			b.enqueue(item{path: p, remove: true})
		}
	}
	b.listed = true
	b.mu.Unlock()
}

// indexFile brings the index up to date with one session file, in batch
// b: the lines appended since it was last indexed, or the whole file when
// it was replaced, shrunk or rewritten, or is new. When b fills up in the
// middle of the file, it is committed (the file's row saying where the
// next batch starts), service (when set) takes the changes told meanwhile,
// and the file goes on in a new batch; stop ends it early, keeping what
// was committed.
func (x *Index) indexFile(b *batch, it item, service func(), stop func() bool) error {
	f, err := sessions.OpenRegular(it.path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, sessions.ErrNotSession) {
		return x.removeFile(b, it.path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	sig := sessions.SigOf(fi)
	old := b.row(it.path)
	r := &fileRow{path: it.path, project: it.project, name: it.name}
	full := true
	if old != nil {
		*r = *old
		if it.project != "" {
			r.project, r.name = it.project, it.name
		}
		if old.complete && !old.racy && old.sig == sig {
			x.stats.unchanged.Add(1)
			if r.project != old.project || r.name != old.name {
				return b.save(r)
			}
			return nil
		}
		full = rewritten(f, old, sig)
		if !full && old.off < 0 {
			// A migrated file found unchanged by its bytes.
			x.stats.unchanged.Add(1)
			r.racy = x.isRacy(sig)
			return b.save(r)
		}
	}
	header := it.header
	if full || header == nil {
		if header, err = sessions.ReadHeader(it.path); err != nil {
			if errors.Is(err, sessions.ErrNotSession) {
				return x.removeFile(b, it.path)
			}
			return err
		}
		r.cwd = header.Cwd
	}
	migrated := header.Version < sessions.CurrentVersion
	if err := b.begin(); err != nil {
		return err
	}
	w := &writer{b: b, r: r, f: f}
	from := int64(0)
	if full {
		if old != nil {
			if err := w.deleteRows(0); err != nil {
				return err
			}
		}
		x.stats.full.Add(1)
		r.seq, r.prov, r.sum, r.tail, r.title, r.off = 0, 0, 0, nil, "", 0
	} else {
		from = r.off
		if r.prov > 0 {
			if err := w.deleteRows(r.prov); err != nil {
				return err
			}
			r.seq = r.prov - 1
			r.prov = 0
		}
	}
	w.sumOff, w.sum, w.lastOff = from, r.sum, from
	if from == 0 {
		w.sum = 0
	}
	r.racy = x.isRacy(sig)
	r.sig = sig
	r.complete = false
	if r.id == 0 {
		// A new file gets its id, from when the session began.
		r.born = jsjson.DateValue(header.Timestamp)
		if math.IsNaN(r.born) {
			r.born = float64(sig.Mtime / 1e6)
		}
		if err := b.save(r); err != nil {
			return err
		}
	}
	var failed error
	// Long lines are read in pieces, their long strings cut to what
	// Extract keeps of them and more: the build never holds a line whole.
	_, end, err := sessions.ScanCut(it.path, from, MaxPart, func(e *sessions.Entry, complete bool, cut int64) {
		if failed != nil {
			return
		}
		if b.full() {
			// The batch is full: commit it, the file's row saying where
			// the next one starts, and take the changes told meanwhile.
			off := e.Offset
			if migrated {
				off = -1
			}
			if failed = w.checkpoint(off); failed != nil {
				return
			}
			if failed = b.commit(); failed != nil {
				return
			}
			if stop() {
				failed = errStopped
				return
			}
			if service != nil {
				service()
			}
			if failed = b.begin(); failed != nil {
				return
			}
		}
		failed = w.add(e, complete, cut)
	})
	if failed == nil && err != nil {
		failed = err
	}
	if errors.Is(failed, errStopped) {
		return nil
	}
	if errors.Is(failed, sessions.ErrNotSession) || errors.Is(failed, fs.ErrNotExist) {
		return x.removeFile(b, it.path)
	}
	if failed != nil {
		return failed
	}
	if migrated {
		end = -1
	}
	r.complete = true
	if !full {
		if end > from || w.added > 0 {
			x.stats.appended.Add(1)
		} else {
			x.stats.unchanged.Add(1)
		}
	}
	return w.checkpoint(end)
}

var errStopped = errors.New("stopped")

// rewritten tells that what was indexed of the file may have changed, not
// only grown (as sessions.Log tells it): another file, a shorter one, one
// of the same size with other times, other bytes before where the last
// read stopped, or, when it was indexed within the racy window, other
// bytes anywhere before that.
func rewritten(f *os.File, r *fileRow, sig sessions.Sig) bool {
	old := r.sig
	switch {
	case r.off < 0:
		// A migrated file is indexed whole: only the same file, as it
		// was, is not indexed again.
		if sig != old || !r.complete {
			return true
		}
		if r.racy {
			sum, err := checksum(f, 0, sig.Size, 0)
			return err != nil || sum != r.sum
		}
		return false
	case sig.Ino != old.Ino || sig.Dev != old.Dev || sig.Size < old.Size || sig.Size < r.off:
		return true
	case sig.Size == old.Size && (sig.Mtime != old.Mtime || sig.Ctime != old.Ctime):
		return true
	}
	if len(r.tail) > 0 {
		buf := make([]byte, len(r.tail))
		if _, err := f.ReadAt(buf, r.off-int64(len(buf))); err != nil || string(buf) != string(r.tail) {
			return true
		}
	}
	if sig.Size == old.Size && r.racy {
		sum, err := checksum(f, 0, r.off, 0)
		if err != nil || sum != r.sum {
			return true
		}
	}
	return false
}

// racyWindow is how long after a file's change its timestamps cannot
// tell a rewrite of the same size (as sessions reads them).
const racyWindow = 2 * time.Second

func (x *Index) isRacy(s sessions.Sig) bool {
	now := time.Now().UnixNano()
	return now-s.Mtime < int64(x.racyWindow) || now-s.Ctime < int64(x.racyWindow)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum extends sum with the CRC-32C of the file's bytes from..to.
func checksum(f *os.File, from, to int64, sum uint32) (uint32, error) {
	buf := make([]byte, min(to-from, 1<<20))
	for from < to {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), to-from)], from)
		sum = crc32.Update(sum, castagnoli, buf[:n])
		from += int64(n)
		if err != nil && from < to {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
	return sum, nil
}

// batch is the builder's transaction: the entries of one or more files,
// committed together (a commit flushes FTS5's pending terms as a segment
// of its own, which later merges must read again: a commit per small
// session would make thousands).
type batch struct {
	x  *Index
	tx *sql.Tx
	// pending is the text added since the last commit; started is when
	// the transaction began.
	pending int
	started time.Time
	// rows are the file rows saved in it (a copy each), gone the paths
	// removed, done the bytes of session files indexed: the readers see
	// them once committed.
	rows []*fileRow
	gone []string
	done int64
	// onCommit is told the bytes a commit made indexed.
	onCommit func(int64)
	// commits counts the commits, committed is when the last was made.
	commits   int
	committed time.Time

	insEntry, insTri, insWords, insTool, insLabel, insName, insTouch, insModel, delTri, delWords *sql.Stmt
}

// maxBatchAge is how long a transaction stays open while the builder goes
// from file to file.
const maxBatchAge = time.Second

func (b *batch) begin() error {
	if b.tx != nil {
		return nil
	}
	tx, err := b.x.w.Begin()
	if err != nil {
		return err
	}
	b.tx, b.pending, b.started = tx, 0, time.Now()
	b.insEntry, b.insTri, b.insWords, b.insTool, b.insLabel, b.insName, b.insTouch, b.insModel, b.delTri, b.delWords =
		nil, nil, nil, nil, nil, nil, nil, nil, nil, nil
	return nil
}

// full tells that the batch should be committed: its text is past
// BatchBytes, or it is a second old.
func (b *batch) full() bool {
	return b.tx != nil && (b.pending >= b.x.o.BatchBytes || time.Since(b.started) >= maxBatchAge)
}

// rollback drops the batch, after an error, and returns the paths of the
// files it held, to be looked at again.
func (b *batch) rollback() []string {
	if b.tx != nil {
		b.tx.Rollback()
		b.tx = nil
	}
	var paths []string
	for _, r := range b.rows {
		paths = append(paths, r.path)
	}
	paths = append(paths, b.gone...)
	b.rows, b.gone, b.done = nil, nil, 0
	return paths
}

// commit commits the batch and shows what it changed to the readers.
func (b *batch) commit() error {
	if b.tx == nil {
		return nil
	}
	if err := b.tx.Commit(); err != nil {
		return err
	}
	b.tx = nil
	b.commits++
	b.committed = time.Now()
	x := b.x
	defer x.gen.Add(1)
	defer x.updated.Store(max(time.Now().UnixNano(), x.updated.Load()+1))
	x.mu.Lock()
	for _, p := range b.gone {
		if r := x.paths[p]; r != nil {
			delete(x.files, r.id)
			delete(x.paths, p)
		}
	}
	var paths []string
	for i, r := range b.rows {
		if o := x.paths[r.path]; o != nil && o.id != r.id {
			delete(x.files, o.id)
		}
		x.files[r.id] = r
		x.paths[r.path] = r
		if i == 0 || b.rows[i-1].path != r.path {
			paths = append(paths, r.path)
		}
	}
	x.mu.Unlock()
	x.stats.read.Add(b.done)
	if b.onCommit != nil {
		b.onCommit(b.done)
	}
	if x.testHook != nil {
		for _, p := range paths {
			x.testHook(p, b.commits)
		}
	}
	b.rows, b.gone, b.done = nil, nil, 0
	return nil
}

// row is a file's row as the batch leaves it (nil: not indexed).
func (b *batch) row(path string) *fileRow {
	for i := len(b.rows) - 1; i >= 0; i-- {
		if b.rows[i].path == path {
			return b.rows[i]
		}
	}
	for _, p := range b.gone {
		if p == path {
			return nil
		}
	}
	b.x.mu.Lock()
	defer b.x.mu.Unlock()
	return b.x.paths[path]
}

func (b *batch) stmt(p **sql.Stmt, q string) (*sql.Stmt, error) {
	if *p == nil {
		s, err := b.tx.Prepare(q)
		if err != nil {
			return nil, err
		}
		*p = s
	}
	return *p, nil
}

func (b *batch) exec(p **sql.Stmt, q string, args ...any) error {
	s, err := b.stmt(p, q)
	if err != nil {
		return err
	}
	_, err = s.Exec(args...)
	return err
}

// save writes a file's row in the batch (a new file gets its id).
func (b *batch) save(r *fileRow) error {
	if err := b.begin(); err != nil {
		return err
	}
	racy, complete := 0, 0
	if r.racy {
		racy = 1
	}
	if r.complete {
		complete = 1
	}
	args := []any{r.path, r.project, r.name, r.cwd, r.title, r.sig.Dev, r.sig.Ino, r.sig.Size, r.sig.Mtime, r.sig.Ctime,
		r.off, r.seq, r.prov, r.tail, int64(r.sum), racy, complete}
	if r.id == 0 {
		id, err := b.newID(r.born)
		if err != nil {
			return err
		}
		if _, err := b.tx.Exec(`INSERT INTO files(id, path, project, name, cwd, title, dev, ino, size, mtime, ctime,
			off, seq, prov, tail, sum, racy, complete) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, append([]any{id}, args...)...); err != nil {
			return err
		}
		r.id = id
	} else if _, err := b.tx.Exec(`UPDATE files SET path=?, project=?, name=?, cwd=?, title=?, dev=?, ino=?, size=?, mtime=?, ctime=?,
		off=?, seq=?, prov=?, tail=?, sum=?, racy=?, complete=? WHERE id=?`, append(args, r.id)...); err != nil {
		return err
	}
	c := *r
	b.rows = append(b.rows, &c)
	return nil
}

// Files' ids follow when their sessions began, so that the text index's
// rows, in rowid order, go through the sessions from the newest back (a
// query that matches more than it reads answers from the newest): a
// session's id is the second it began counted from idEpoch, or the next
// free one after it. An index made when ids were given in turn keeps its
// ids, all below idEpoch's.
const (
	idEpoch = 1577836800 // 2020-01-01T00:00:00Z
	maxID   = 1<<31 - 1  // rowid's file part
)

// newID is the id of a new file of a session that began at born (ms
// since the epoch; before idEpoch: before every id; NaN or past 2054:
// after every id).
func (b *batch) newID(born float64) (int64, error) {
	want := int64(0)
	switch s := born / 1000; {
	case s < idEpoch:
		want = 1
	case s-idEpoch < maxID/2:
		want = int64(s) - idEpoch + 1
	}
	if want == 0 {
		var last sql.NullInt64
		if err := b.tx.QueryRow(`SELECT max(id) FROM files`).Scan(&last); err != nil {
			return 0, err
		}
		want = max(last.Int64+1, maxID/2)
	}
	// The first id at or after want that no file has.
	rows, err := b.tx.Query(`SELECT id FROM files WHERE id >= ? ORDER BY id`, want)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		if id != want {
			break
		}
		want++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if want > maxID {
		return 0, errors.New("search index: no file id left")
	}
	return want, nil
}

// writer indexes one file's entries into a batch.
type writer struct {
	b *batch
	r *fileRow
	f *os.File
	// sum is the CRC of the file's bytes before sumOff; lastOff is where
	// the bytes counted as done end.
	sumOff, lastOff int64
	sum             uint32
	added           int // entries indexed
}

// add indexes one entry.
func (w *writer) add(e *sessions.Entry, complete bool, cut int64) error {
	b, x, r := w.b, w.b.x, w.r
	d := Extract(e.Raw)
	d.Cut += int(cut)
	var touches []Touch
	if x.o.Touches != nil && e.ID != "" {
		touches = x.o.Touches(e, r.cwd)
	}
	if d.Role == "" && len(touches) == 0 {
		return nil
	}
	r.seq++
	w.added++
	id := rowid(r.id, r.seq)
	if !complete && r.prov == 0 {
		r.prov = r.seq
	}
	x.stats.entries.Add(1)
	switch d.Role {
	case RoleLabel:
		if err := b.exec(&b.insLabel, `INSERT INTO labels(entry, target, label) VALUES(?, ?, ?)`, id, d.Target, d.Label); err != nil {
			return err
		}
	case RoleName:
		if err := b.exec(&b.insName, `INSERT INTO names(entry, name) VALUES(?, ?)`, id, d.Name); err != nil {
			return err
		}
	}
	if e.ID == "" {
		return nil // it cannot be named: only its label or name counts
	}
	txt := d.Text != ""
	var t any
	if !math.IsNaN(e.Time) {
		t = int64(e.Time)
	}
	if err := b.exec(&b.insEntry, `INSERT INTO entries(rowid, eid, off, role, time, model, txt, cut) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
		id, e.ID, e.Offset, d.Role, t, nullString(d.Model), txt, d.Cut); err != nil {
		return err
	}
	if d.Model != "" {
		if err := b.exec(&b.insModel, `INSERT OR IGNORE INTO models(model) VALUES(?)`, d.Model); err != nil {
			return err
		}
	}
	if txt {
		if err := b.exec(&b.insTri, `INSERT INTO tri(rowid, text) VALUES(?, ?)`, id, d.Text); err != nil {
			return err
		}
		if err := b.exec(&b.insWords, `INSERT INTO words(rowid, text) VALUES(?, ?)`, id, d.Text); err != nil {
			return err
		}
	}
	for i, name := range d.Tools {
		if slices.Contains(d.Tools[:i], name) {
			continue
		}
		if err := b.exec(&b.insTool, `INSERT INTO tools(entry, name) VALUES(?, ?)`, id, name); err != nil {
			return err
		}
	}
	for _, tc := range touches {
		op, ok := opCodes[tc.Op]
		if !ok || tc.Path == "" {
			continue
		}
		if err := b.exec(&b.insTouch, `INSERT OR IGNORE INTO touches(entry, path, op) VALUES(?, ?, ?)`, id, tc.Path, op); err != nil {
			return err
		}
	}
	b.pending += len(d.Text) + 256
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

var opCodes = map[string]int{OpRead: 1, OpWrite: 2, OpEdit: 3}
var opNames = []string{1: OpRead, 2: OpWrite, 3: OpEdit}

// deleteRows deletes the file's entries from number seq on (0: all).
func (w *writer) deleteRows(seq int64) error {
	b := w.b
	lo, hi := rowid(w.r.id, max(seq, 0)), rowid(w.r.id, 1<<32-1)
	rows, err := b.tx.Query(`SELECT rowid FROM entries WHERE rowid BETWEEN ? AND ? AND txt`, lo, hi)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if err := b.exec(&b.delTri, `DELETE FROM tri WHERE rowid = ?`, id); err != nil {
			return err
		}
		if err := b.exec(&b.delWords, `DELETE FROM words WHERE rowid = ?`, id); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`DELETE FROM entries WHERE rowid BETWEEN ? AND ?`,
		`DELETE FROM tools WHERE entry BETWEEN ? AND ?`,
		`DELETE FROM labels WHERE entry BETWEEN ? AND ?`,
		`DELETE FROM names WHERE entry BETWEEN ? AND ?`,
		`DELETE FROM touches WHERE entry BETWEEN ? AND ?`,
	} {
		if _, err := b.tx.Exec(q, lo, hi); err != nil {
			return err
		}
	}
	return nil
}

// checkpoint saves the file's row in the batch, saying that the file is
// indexed up to off (-1: a migrated file, which is indexed whole), with
// the sum and the tail of the bytes before it.
func (w *writer) checkpoint(off int64) error {
	r := w.r
	if off >= 0 {
		sum, err := checksum(w.f, w.sumOff, off, w.sum)
		if err != nil {
			return err
		}
		w.sum, w.sumOff = sum, off
		tail := make([]byte, min(off, 32))
		if _, err := w.f.ReadAt(tail, off-int64(len(tail))); err != nil {
			return err
		}
		r.tail, r.sum = tail, sum
	} else {
		// A migrated file: the sum of the whole file, as it was when
		// its reading started.
		sum, err := checksum(w.f, 0, r.sig.Size, 0)
		if err != nil {
			return err
		}
		r.tail, r.sum = nil, sum
	}
	r.off = off
	if off < 0 && r.sig.Size > w.lastOff {
		// A migrated file counts its size as done.
		w.b.done += r.sig.Size - w.lastOff
		w.lastOff = r.sig.Size
	}
	var title sql.NullString
	lo, hi := rowid(r.id, 0), rowid(r.id, 1<<32-1)
	if err := w.b.tx.QueryRow(`SELECT name FROM names WHERE entry BETWEEN ? AND ? ORDER BY entry DESC LIMIT 1`, lo, hi).Scan(&title); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	r.title = title.String
	if off > w.lastOff {
		w.b.done += off - w.lastOff
		w.lastOff = off
	}
	return w.b.save(r)
}

// removeFile removes what the index holds of a file, in batch b.
func (x *Index) removeFile(b *batch, path string) error {
	r := b.row(path)
	if r == nil {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	w := &writer{b: b, r: r}
	if err := w.deleteRows(0); err != nil {
		return err
	}
	if _, err := b.tx.Exec(`DELETE FROM files WHERE id = ?`, r.id); err != nil {
		return err
	}
	b.gone = append(b.gone, path)
	for i := 0; i < len(b.rows); i++ {
		if b.rows[i].path == path {
			b.rows = append(b.rows[:i], b.rows[i+1:]...)
			i--
		}
	}
	x.stats.removed.Add(1)
	return nil
}
