package search

import (
	"bytes"
	"container/heap"
	"context"
	"database/sql"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
)

// Scope limits an answer: to one project's sessions (Project "" is the
// whole store) and to the sessions whose file Visible lets through (nil:
// all), as a caller under --allow-other may read only some.
type Scope struct {
	Project string
	Visible func(path string) bool
}

// Hit is an entry that matches a query.
type Hit struct {
	// Project and Session name the session's folder under the mount
	// (Session is the file's name without .jsonl); Path is the file.
	Project, Session, Path string
	Entry                  string  // the entry's id
	Role                   string  // one of the Role constants
	Time                   float64 // the entry's time, ms since the epoch (NaN: none)
	// Excerpt is a line of the entry's text around the first match, as
	// it was written, newlines made spaces.
	Excerpt string
	// Score is higher for a better hit: the text index's relevance
	// (BM25) when the answer is ranked (Result.Ranked), else 0 (then
	// newer entries come first).
	Score float64
}

// SessionHits is a session with hits: its best (which gives the link's
// time), and how many.
type SessionHits struct {
	Best Hit
	Hits int
}

// Result is a query's answer.
type Result struct {
	// Hits are the matching entries, best first (at most the limit).
	Hits []Hit
	// Total counts the matching entries.
	Total int
	// Sessions are every session with a match, best first.
	Sessions []SessionHits
	// Complete tells that the index held the whole store when asked;
	// else the answer is from what was indexed so far.
	Complete bool
	// Ranked tells that the hits are ranked by relevance; else they come
	// newest first (a query of filters alone, one matching more than
	// MaxRanked entries, or one whose few sessions in scope were read one
	// at a time).
	Ranked bool
	// More tells that the query matches more than MaxRanked entries in
	// scope: the answer (hits, Total, Sessions) is of the MaxRanked of
	// the newest sessions (by when they began), each from its end.
	More bool
	// Visited, when not 0, tells that the query has words to exclude and
	// that the words it looks for are in more than Visited entries: the
	// answer is of the newest Visited of those (More is then set too).
	Visited int
}

// DefaultLimit is how many hits Search gives when not told.
const DefaultLimit = 1000

// ExcerptWidth is about how long an excerpt is, in bytes.
const ExcerptWidth = 160

// SearchString parses and runs a query (see Parse and Search).
func (x *Index) SearchString(ctx context.Context, q string, loc *time.Location, scope Scope, limit int) (*Result, error) {
	pq, err := Parse(q, loc)
	if err != nil {
		return nil, err
	}
	return x.Search(ctx, pq, scope, limit)
}

// MaxRanked is how many matching entries a query reads: at most that
// many are ranked by relevance; past it, the answer is of the newest
// sessions' MaxRanked matches, newest first (Result.More).
const MaxRanked = 5000

// Search runs a query: every entry that matches, in scope, counted; the
// limit best of them (DefaultLimit when limit <= 0) with their excerpts;
// and every session with a match, with its best hit. Hits are ranked by
// relevance (FTS5's BM25) when the query has words to find and matches
// at most MaxRanked entries, else they come newest first. A query that
// matches more is answered from the newest MaxRanked (Result.More). Its
// cost is in the entries the text index (or, for a query of filters
// alone, the filters' rows) gives, up to MaxRanked, not in the store.
func (x *Index) Search(ctx context.Context, q *Query, scope Scope, limit int) (*Result, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	res := &Result{Complete: x.complete()}
	files := x.filter(q, scope)
	// Every match, with its time, newest first.
	prefixes := map[string][]string{}
	c, err := x.compile(ctx, q, scope, false, prefixes)
	if err != nil {
		return nil, err
	}
	if c.empty {
		return res, nil
	}
	// The newest matches, up to maxRanked: a query that matches more is
	// answered from those (ranking more, or even going through all of
	// them, costs more than the answer is worth: a word in every entry).
	var all []cand
	pass, err := x.pass(ctx, c, files, limit, x.maxRanked, func(cd cand) { all = append(all, cd) })
	if err != nil {
		return nil, err
	}
	res.More, res.Visited = pass.more, pass.visited
	if !pass.more && !pass.byFile {
		// Few enough to rank: the same rows again, with their rank (not
		// when the files were read one at a time: FTS5 works out BM25's
		// weights from every row of the words, once a statement).
		rc, err := x.compile(ctx, q, scope, true, prefixes)
		if err != nil {
			return nil, err
		}
		if rc.ranked {
			times := make(map[int64]float64, len(all))
			for _, cd := range all {
				times[cd.id] = cd.time
			}
			ranked, err := x.pass(ctx, rc, files, limit, 0, func(cand) {}, times)
			if err != nil {
				return nil, err
			}
			ranked.total = pass.total
			pass = ranked
			res.Ranked = true
		}
	}
	res.Total = pass.total
	hits := pass.sorted()
	// What the hits and each session's best need from their entries.
	want := map[int64]*entryInfo{}
	for _, h := range hits {
		want[h.id] = nil
	}
	for _, b := range pass.best {
		want[b.id] = nil
	}
	if err := x.entryInfos(ctx, want); err != nil {
		return nil, err
	}
	excerpts := excerpts(hits, files, want, q.Highlights())
	for i, h := range hits {
		hit, ok := files.hit(h, want[h.id])
		if !ok {
			continue
		}
		hit.Excerpt = excerpts[i]
		res.Hits = append(res.Hits, hit)
	}
	for file, b := range pass.best {
		hit, ok := files.hit(*b, want[b.id])
		if !ok {
			continue
		}
		res.Sessions = append(res.Sessions, SessionHits{Best: hit, Hits: pass.counts[file]})
	}
	sort.Slice(res.Sessions, func(i, j int) bool {
		a, b := res.Sessions[i].Best, res.Sessions[j].Best
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if newer(a.Time, b.Time) != newer(b.Time, a.Time) {
			return newer(a.Time, b.Time)
		}
		return a.Path < b.Path
	})
	return res, nil
}

// excerpts reads the hits' lines and makes their excerpts. The lines are
// read in the files' order (each file opened once, read forward), in
// parts on up to as many goroutines as there are cores: a thousand
// excerpts take about as long as reading the matches.
func excerpts(hits []cand, files *fileFilter, want map[int64]*entryInfo, words []string) []string {
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return hits[order[i]].id < hits[order[j]].id })
	out := make([]string, len(hits))
	parts := min(runtime.GOMAXPROCS(0), 4, max(len(hits)/100, 1))
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func(part []int) {
			defer wg.Done()
			lines := &lineReader{}
			defer lines.close()
			for _, i := range part {
				out[i] = lines.excerpt(files.rows[fileOf(hits[i].id)], want[hits[i].id], words)
			}
		}(order[p*len(order)/parts : (p+1)*len(order)/parts])
	}
	wg.Wait()
	return out
}

// passResult is what a pass over a query's rows keeps: the count, the
// best hits, each session's best and count.
type passResult struct {
	total int
	more  bool // it stopped with rows in scope left
	// visited, when it stopped on notsFactor, is how many rows of what
	// the query looks for it read.
	visited int
	// byFile tells that it read the files in scope one at a time.
	byFile bool
	top    hitHeap
	best   map[int64]*cand
	counts map[int64]int
}

// sorted are the best hits, best first.
func (p *passResult) sorted() []cand {
	hits := make([]cand, p.top.Len())
	for i := len(hits) - 1; i >= 0; i-- {
		hits[i] = heap.Pop(&p.top).(cand)
	}
	return hits
}

// pass runs a compiled query and goes through its rows in scope, keeping
// the limit best; each is also given to each. It takes at most most rows
// in scope (0: all). times, when given, are the rows' times (a ranked statement's
// rows carry none).
func (x *Index) pass(ctx context.Context, c *compiled, files *fileFilter, limit, most int, each func(cand), times ...map[int64]float64) (*passResult, error) {
	// Its statements share one connection (see readerConns).
	conn, err := x.r.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := x.queryOn(ctx, conn, c.sql, c.args...)
	if err != nil {
		return nil, err
	}
	src := &passRows{x: x, ctx: ctx, c: c, rows: rows}
	defer src.close()
	// When the scope holds few files and the rows read so far are mostly
	// of others, the rest is read a file at a time: each file's rows are
	// a seek away in the text index (a common word in one project of 50
	// would otherwise be read in all 50).
	outside := 0
	var nots []*notReader
	for _, n := range c.nots {
		nr := &notReader{x: x, ctx: ctx, on: conn, stmt: n, head: math.MaxInt64}
		defer nr.close()
		nots = append(nots, nr)
	}
	// Rows that excluded words may take out are read up to notsFactor
	// times most: past that, the answer is of those.
	visit := 0
	if len(nots) > 0 && most > 0 {
		visit = most * notsFactor
	}
	p := &passResult{best: map[int64]*cand{}, counts: map[int64]int{}}
	read := 0
scan:
	for {
		r, ok, err := src.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if visit > 0 && read == visit {
			p.more, p.visited = true, read
			break
		}
		read++
		cd := cand{id: r.id, score: r.score}
		file := fileOf(cd.id)
		if !files.ok(file) {
			if outside++; outside == x.byFileAfter && !p.byFile && c.inFile != "" {
				if in := files.before(file); in != nil {
					p.byFile = true
					src.byFile(in)
				}
			}
			continue
		}
		for _, n := range nots {
			out, err := n.excludes(cd.id)
			if err != nil {
				return nil, err
			}
			if out {
				continue scan
			}
		}
		if most > 0 && p.total == most {
			p.more = true
			break
		}
		cd.time = math.NaN()
		switch {
		case r.time.Valid:
			cd.time = float64(r.time.Int64)
		case len(times) > 0:
			if tm, ok := times[0][cd.id]; ok {
				cd.time = tm
			}
		}
		// FTS5's rank is BM25 negated: lower is better.
		cd.score = -cd.score
		if cd.score == 0 {
			cd.score = 0 // not -0
		}
		each(cd)
		p.total++
		p.counts[file]++
		if b := p.best[file]; b == nil || cd.better(b) {
			c := cd
			p.best[file] = &c
		}
		if p.top.Len() < limit {
			heap.Push(&p.top, cd)
		} else if cd.better(&p.top[0]) {
			p.top[0] = cd
			heap.Fix(&p.top, 0)
		}
	}
	return p, nil
}

// fileByFile is how many rows of files out of scope a pass reads before
// it reads the files in scope one at a time, when they are few (see
// fileFilter.before): about what a seek for each of them costs.
const fileByFile = 2000

// passRows gives a pass its rows, newest first: a statement's, then, once
// told to (byFile), each of some files' (read oldest first, given
// newest first).
type passRows struct {
	x     *Index
	ctx   context.Context
	c     *compiled
	rows  *sql.Rows
	files *fileRows
	buf   []passRow
}

// passRow is a row of a query: its rowid, rank and time.
type passRow struct {
	id    int64
	score float64
	time  sql.NullInt64
}

func (s *passRows) next() (passRow, bool, error) {
	for {
		if n := len(s.buf); n > 0 {
			r := s.buf[n-1]
			s.buf = s.buf[:n-1]
			return r, true, nil
		}
		if s.rows != nil {
			if s.rows.Next() {
				var r passRow
				err := s.rows.Scan(&r.id, &r.score, &r.time)
				s.x.stats.rows.Add(1)
				return r, err == nil, err
			}
			err := s.rows.Err()
			s.close()
			if err != nil {
				return passRow{}, false, err
			}
		}
		if s.files == nil {
			return passRow{}, false, nil
		}
		buf, ok, err := s.files.next()
		if err != nil || !ok {
			return passRow{}, false, err
		}
		s.buf = buf
	}
}

// byFile ends the statement's rows: the rest are files', newest first.
func (s *passRows) byFile(files []int64) {
	s.close()
	s.files = s.readFiles(files)
}

func (s *passRows) close() {
	if s.rows != nil {
		s.rows.Close()
		s.rows = nil
	}
	if s.files != nil {
		s.files.stop()
	}
}

// fileRows reads files' rows ahead, each file's whole (oldest first), on
// as many goroutines as the index has connections for it (a seek in
// the text index is the processor's work: a project of 200 sessions is
// read in about half the time on two), and gives them in the files'
// order.
type fileRows struct {
	results []chan fileResult // one a file
	ahead   chan struct{}     // a token a file read and not yet taken
	stop    context.CancelFunc
	taken   int
}

type fileResult struct {
	rows []passRow
	err  error
}

// filesAhead bounds the files read ahead of the pass.
const filesAhead = 8

func (s *passRows) readFiles(files []int64) *fileRows {
	ctx, stop := context.WithCancel(s.ctx)
	fr := &fileRows{results: make([]chan fileResult, len(files)), ahead: make(chan struct{}, filesAhead), stop: stop}
	for i := range fr.results {
		fr.results[i] = make(chan fileResult, 1)
	}
	var next atomic.Int64
	for range min(readerConns, runtime.GOMAXPROCS(0)) {
		go func() {
			// Each reader prepares the statement once for all its files
			// (compiling it again for each cost a tenth of a project's
			// search).
			var stmt *sql.Stmt
			defer func() {
				if stmt != nil {
					stmt.Close()
				}
			}()
			for {
				// The token first, then the file: the files read ahead are
				// always the next ones the pass takes.
				select {
				case fr.ahead <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				if stmt == nil {
					var err error
					if stmt, err = s.x.rf.PrepareContext(ctx, s.c.inFile); err != nil {
						fr.results[i] <- fileResult{nil, err}
						return
					}
				}
				rows, err := s.readFile(ctx, stmt, files[i])
				fr.results[i] <- fileResult{rows, err}
			}
		}()
	}
	return fr
}

// next is the next file's rows (false: no more files).
func (fr *fileRows) next() ([]passRow, bool, error) {
	if fr.taken == len(fr.results) {
		return nil, false, nil
	}
	r := <-fr.results[fr.taken]
	<-fr.ahead
	fr.taken++
	return r.rows, r.err == nil, r.err
}

// readFile reads one file's rows, oldest first, with stmt (c.inFile).
func (s *passRows) readFile(ctx context.Context, stmt *sql.Stmt, f int64) ([]passRow, error) {
	s.x.stats.statements.Add(1)
	rows, err := stmt.QueryContext(ctx, append(s.c.args[:len(s.c.args):len(s.c.args)], rowid(f, 0), rowid(f, 1<<32-1))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []passRow
	for rows.Next() {
		var r passRow
		if err := rows.Scan(&r.id, &r.score, &r.time); err != nil {
			return nil, err
		}
		s.x.stats.rows.Add(1)
		out = append(out, r)
	}
	return out, rows.Err()
}

// notsFactor bounds the rows a pass reads of a query with excluded words:
// that many times the most it takes.
const notsFactor = 2

// notReader reads the rows excluded words take out, newest first, as far
// as the pass's rows have gone: read on while they are near, asked again
// from the pass's row when they are far behind it (a seek in the text
// index costs about as much as reading notsNear rows).
type notReader struct {
	x    *Index
	ctx  context.Context
	on   querier
	stmt notStmt
	rows *sql.Rows
	head int64 // the row read last (MaxInt64: none yet)
	done bool
}

// notsNear is how many excluded rows are read on before they are asked
// for again from the row a pass is at.
const notsNear = 32

// excludes tells whether row id is one of the excluded; ids come newest
// (highest) first.
func (n *notReader) excludes(id int64) (bool, error) {
	for read := 0; !n.done && n.head > id; read++ {
		if n.rows == nil || read == notsNear {
			n.close()
			rows, err := n.x.queryOn(n.ctx, n.on, n.stmt.sql, n.stmt.match, id)
			if err != nil {
				return false, err
			}
			n.rows = rows
		}
		if !n.rows.Next() {
			n.done = true
			return false, n.rows.Err()
		}
		if err := n.rows.Scan(&n.head); err != nil {
			return false, err
		}
		n.x.stats.rows.Add(1)
	}
	return !n.done && n.head == id, nil
}

func (n *notReader) close() {
	if n.rows != nil {
		n.rows.Close()
		n.rows = nil
	}
}

// newer tells that time a is after b (a known time is after none).
func newer(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	return math.IsNaN(b) || a > b
}

// cand is a matching entry as the query's rows give it.
type cand struct {
	id    int64
	score float64
	time  float64
}

// better orders hits: higher score, then newer, then later in the file.
func (c *cand) better(o *cand) bool {
	if c.score != o.score {
		return c.score > o.score
	}
	if newer(c.time, o.time) != newer(o.time, c.time) {
		return newer(c.time, o.time)
	}
	return c.id > o.id
}

// hitHeap keeps the best hits, the worst of them on top.
type hitHeap []cand

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return h[j].better(&h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(v any)        { *h = append(*h, v.(cand)) }
func (h *hitHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// entryInfo is what a hit needs of its entry.
type entryInfo struct {
	eid, role string
	time      float64
	off       int64
}

// entryInfos fills in the entries of want, a few hundred a statement.
func (x *Index) entryInfos(ctx context.Context, want map[int64]*entryInfo) error {
	ids := make([]int64, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := make([]any, n)
		for i := range n {
			args[i] = ids[i]
		}
		rows, err := x.query(ctx, `SELECT rowid, eid, role, time, off FROM entries WHERE rowid IN (`+marks(n)+`)`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			var e entryInfo
			var t sql.NullInt64
			if err := rows.Scan(&id, &e.eid, &e.role, &t, &e.off); err != nil {
				rows.Close()
				return err
			}
			x.stats.rows.Add(1)
			e.time = math.NaN()
			if t.Valid {
				e.time = float64(t.Int64)
			}
			want[id] = &e
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// marks is n question marks for a list of arguments.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// fileFilter tells which files an answer may hold: in scope, visible, and
// of a name the query's name: filters take. It asks Visible once a file.
type fileFilter struct {
	x     *Index
	scope Scope
	names *Filter
	nots  *Filter
	rows  map[int64]*fileRow
	okay  map[int64]bool
}

func (x *Index) filter(q *Query, scope Scope) *fileFilter {
	f := &fileFilter{x: x, scope: scope, rows: map[int64]*fileRow{}, okay: map[int64]bool{}}
	for i := range q.Filters {
		if q.Filters[i].Key == KeyName {
			if q.Filters[i].Not {
				f.nots = &q.Filters[i]
			} else {
				f.names = &q.Filters[i]
			}
		}
	}
	return f
}

func (f *fileFilter) ok(id int64) bool {
	if ok, seen := f.okay[id]; seen {
		return ok
	}
	r := f.x.file(id)
	ok := r != nil && (f.scope.Project == "" || r.project == f.scope.Project) &&
		(f.names == nil || anyIn(Fold(r.title), f.names.Values)) &&
		(f.nots == nil || !anyIn(Fold(r.title), f.nots.Values)) &&
		(f.scope.Visible == nil || f.scope.Visible(r.path))
	f.okay[id] = ok
	if ok {
		f.rows[id] = r
	}
	return ok
}

// before are the files in scope with ids below id, newest first, when
// there are at most maxRanges of them in all (nil: more).
func (f *fileFilter) before(id int64) []int64 {
	f.x.mu.Lock()
	ids := make([]int64, 0, len(f.x.files))
	for i := range f.x.files {
		ids = append(ids, i)
	}
	f.x.mu.Unlock()
	var in, out []int64
	for _, i := range ids {
		if f.ok(i) {
			if in = append(in, i); len(in) > maxRanges {
				return nil
			}
		}
	}
	for _, i := range in {
		if i < id {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] > out[j] })
	if out == nil {
		out = []int64{}
	}
	return out
}

// anyIn tells whether one of values is in s.
func anyIn(s string, values []string) bool {
	for _, v := range values {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

func (f *fileFilter) hit(c cand, e *entryInfo) (Hit, bool) {
	r := f.rows[fileOf(c.id)]
	if r == nil || e == nil {
		return Hit{}, false // removed since
	}
	return Hit{Project: r.project, Session: r.name, Path: r.path, Entry: e.eid, Role: e.role, Time: e.time, Score: c.score}, true
}

// lineReader reads the lines of hits from their session files, keeping
// one file open at a time, through a buffer: a file's hits are read in
// order, and the newest are often next to each other.
type lineReader struct {
	path string
	f    *os.File
	buf  []byte // the file's bytes from at
	at   int64
}

// readAhead is how much of a file a lineReader reads at once.
const readAhead = 64 << 10

func (l *lineReader) close() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	l.buf = l.buf[:0]
}

// line is readLine(l.f, off), from the buffer when it holds the line.
func (l *lineReader) line(off int64) []byte {
	in := func() []byte {
		if off < l.at || off >= l.at+int64(len(l.buf)) {
			return nil
		}
		rest := l.buf[off-l.at:]
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			return rest[:i]
		}
		return nil
	}
	b := in()
	if b == nil {
		if cap(l.buf) == 0 {
			l.buf = make([]byte, readAhead)
		}
		n, err := l.f.ReadAt(l.buf[:cap(l.buf)], off)
		if err != nil && err != io.EOF {
			n = 0
		}
		l.buf, l.at = l.buf[:n], off
		if b = in(); b == nil {
			// Longer than the buffer, or the last line without its
			// newline.
			return readLine(l.f, off)
		}
	}
	v, err := jsjson.Parse(b)
	if err != nil {
		return nil
	}
	return v
}

// excerpt reads an entry's line and makes its excerpt; "" when the line
// is not that entry's any more (the file changed since it was indexed).
func (l *lineReader) excerpt(r *fileRow, e *entryInfo, words []string) string {
	if r == nil || e == nil {
		return ""
	}
	if l.path != r.path {
		l.close()
		f, err := sessions.OpenRegular(r.path)
		if err != nil {
			return ""
		}
		l.f, l.path = f, r.path
	}
	if l.f == nil {
		return ""
	}
	line := l.line(e.off)
	if line == nil {
		return ""
	}
	if r.off >= 0 {
		// A migrated file's ids are not in its lines; a current one's
		// must be this entry's.
		if id, _ := jsjson.Str(line, "id"); id != e.eid {
			return ""
		}
	}
	d := Extract(line)
	return Excerpt(d.Text, words, ExcerptWidth)
}

// readLine reads the line at off, without its newline, its long strings
// cut as the build reads them (the excerpt is of what Extract keeps, and a
// long line is never held whole); nil when it is not valid JSON.
func readLine(f *os.File, off int64) []byte {
	buf, err := sessions.ReadLineCut(f, off, MaxPart)
	if buf == nil || err != nil {
		return nil
	}
	v, err := jsjson.Parse(buf)
	if err != nil {
		return nil
	}
	return v
}
