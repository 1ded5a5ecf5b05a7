package search

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pifs/pifs/sessions"
)

// The readers' connections: queries beyond them wait their turn. A
// search's pass holds one of them for all its statements (SQLite steps
// several on one connection), so that no search waits for a connection
// while it holds one; the files of a project read ahead of a pass have
// connections of their own (Index.rf), whose holders wait for nothing.
const (
	readerConns    = 2
	readerCacheKiB = 2 << 10
	// filesCacheKiB: a project's sessions, read one at a time, seek in
	// the text index's pages of the query's words again and again (a
	// common word in 200 sessions of store B: 180 ms with 2 MiB, 111-150
	// with 8).
	filesCacheKiB = 8 << 10
)

// Format names the layout of an index file and what is indexed: a file of
// another format is made again.
const Format = "pifs-search 1"

// Options configure an Index.
type Options struct {
	// Dir is the folder of the index file (FileName(Dir, Store)).
	Dir string
	// Store is the sessions directory, absolute: it names the file, and a
	// file made for another store is made again.
	Store string
	// Touches, when set, tells which files an entry's tool calls touched
	// (read, wrote, edited), for TouchedBy and TouchedUnder. cwd is the
	// session header's.
	Touches func(e *sessions.Entry, cwd string) []Touch
	// Log is told what the index could not do, Info what it did of note
	// (both optional).
	Log, Info func(msg string)
	// CacheKiB bounds SQLite's page cache of the builder's connection
	// (default 8 MiB); the two connections of queries have 2 MiB each,
	// the two reading a project's sessions ahead of a pass 8 MiB.
	CacheKiB int
	// hashSize, when set, is how much of the pending terms FTS5 holds
	// before writing them out (its default is 1 MiB), for tests.
	hashSize int
	// BatchBytes is how much text the builder indexes between commits
	// (default 4 MiB): it bounds the builder's memory and how long a
	// change waits behind a large session.
	BatchBytes int
}

// Touch is a file an entry's tool call touched.
type Touch struct {
	Path string // absolute, cleaned, resolved against the session's cwd
	Op   string // OpRead, OpWrite or OpEdit
}

// Touch operations.
const (
	OpRead  = "read"
	OpWrite = "write"
	OpEdit  = "edit"
)

// FileName is the index file of a store in dir, beside the persistent
// cache's (named as internal/persist names its file, by a hash of the
// store's path).
func FileName(dir, store string) string {
	sum := sha256.Sum256([]byte(store))
	return filepath.Join(dir, "search-"+hex.EncodeToString(sum[:8])+".db")
}

// Index is a store's full-text index: one SQLite file with two FTS5
// indexes of every entry's text (trigram, for substrings; unicode61, for
// words, phrases and prefixes), the entries' fields the filters take, and
// the files each entry's tool calls touched. A builder (Start) keeps it
// current in the background; queries (Search, TouchedBy, TouchedUnder)
// answer from what is indexed so far.
type Index struct {
	o    Options
	path string
	// w is the builder's connection (the only writer), r the readers',
	// rf those that read a project's files ahead of a pass.
	w, r, rf *sql.DB
	// unstable counts connections without the planner's stability
	// guarantee (see planner.go).
	unstable atomic.Int64
	// lock is held while the index is open (see ErrInUse).
	lock *os.File

	mu    sync.Mutex
	files map[int64]*fileRow
	paths map[string]*fileRow

	b *builder
	// racyWindow is how long after a file's change its signature cannot
	// tell a rewrite of the same size (racyWindow; tests shorten it).
	racyWindow time.Duration
	// maxRanked is MaxRanked, byFileAfter fileByFile (tests lower them).
	maxRanked, byFileAfter int
	// fts5Prefixes leaves every prefix to FTS5 (tests compare).
	fts5Prefixes bool
	// noMerge leaves the segments as FTS5's automerge leaves them,
	// noTidy merges them only into one (tests compare; set before Start).
	noMerge, noTidy bool
	// mergeSettle is mergeSettle (tests set 0).
	mergeSettle time.Duration
	// testHook, when set, is told of each batch committed.
	testHook func(path string, batch int)

	// gen counts the commits (see Gen); updated is when the last one was
	// made (ns since the epoch; 0: none since Open, see Updated).
	gen     atomic.Uint64
	updated atomic.Int64
	opened  time.Time

	stats struct {
		statements, rows                                  atomic.Int64
		full, appended, unchanged, removed, entries, read atomic.Int64
		merges, mergeSteps                                atomic.Int64
	}
}

// fileRow is what the index holds of a session file (a row of files).
type fileRow struct {
	id                  int64
	path, project, name string
	cwd, title          string
	sig                 sessions.Sig
	// off is where the next read starts: past the last complete line
	// indexed (-1: a migrated file, indexed whole). seq numbers its
	// entries; prov is the first entry of a final line without a newline
	// (0: none), which is indexed again when the file grows.
	off, seq, prov int64
	tail           []byte // the bytes before off
	sum            uint32 // CRC-32C of the bytes before off
	racy           bool   // indexed within 2 s of the file's change
	complete       bool   // indexed to the end of the file as sig saw it
	// born is when the session began (ms since the epoch: its header's
	// timestamp, else the file's mtime), read for a new file's id only.
	born float64
}

// rowid of an entry: its file's id and its number in the file.
func rowid(file, seq int64) int64 { return file<<32 | seq }

func fileOf(rowid int64) int64 { return rowid >> 32 }

var tables = []string{
	`CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL,
		project TEXT NOT NULL, name TEXT NOT NULL, cwd TEXT NOT NULL, title TEXT NOT NULL,
		dev INT, ino INT, size INT, mtime INT, ctime INT,
		off INT, seq INT, prov INT, tail BLOB, sum INT, racy INT, complete INT)`,
	// An entry: its id, where its line starts, its role, time (ms) and
	// model, whether its text is in the FTS tables and how much of it was
	// cut (of long parts, and of the long strings of a line read in
	// pieces: sessions.ScanCut).
	`CREATE TABLE IF NOT EXISTS entries(rowid INTEGER PRIMARY KEY, eid TEXT NOT NULL, off INT NOT NULL,
		role TEXT NOT NULL, time INT, model TEXT, txt INT NOT NULL, cut INT NOT NULL)`,
	// The entries of an id (a label's target), and of a time range (a
	// query of since: or until: alone).
	`CREATE INDEX IF NOT EXISTS entries_eid ON entries(eid)`,
	`CREATE INDEX IF NOT EXISTS entries_time ON entries(time)`,
	`CREATE TABLE IF NOT EXISTS models(model TEXT PRIMARY KEY) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS tools(entry INT NOT NULL, name TEXT NOT NULL, PRIMARY KEY(entry, name)) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS tools_name ON tools(name, entry)`,
	`CREATE TABLE IF NOT EXISTS labels(entry INTEGER PRIMARY KEY, target TEXT NOT NULL, label TEXT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS names(entry INTEGER PRIMARY KEY, name TEXT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS touches(entry INT NOT NULL, path TEXT NOT NULL, op INT NOT NULL, PRIMARY KEY(entry, path, op)) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS touches_path ON touches(path, entry)`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS tri USING fts5(text, tokenize='trigram remove_diacritics 1', content='', contentless_delete=1)`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(text, tokenize='unicode61 remove_diacritics 2', content='', contentless_delete=1)`,
}

// Open opens (or makes) the index of o.Store in o.Dir. A file that is not
// an index of this format for this store is made again.
func Open(o Options) (*Index, error) {
	if o.CacheKiB <= 0 {
		o.CacheKiB = 8 << 10
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 4 << 20
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	x := &Index{o: o, path: FileName(o.Dir, o.Store), files: map[int64]*fileRow{}, paths: map[string]*fileRow{}, racyWindow: racyWindow, maxRanked: MaxRanked, byFileAfter: fileByFile, mergeSettle: mergeSettle, opened: time.Now()}
	// One mount at a time builds and reads an index.
	lock, err := os.OpenFile(x.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrInUse
		}
		return nil, err
	}
	x.lock = lock
	// The text it holds is the sessions': its owner's alone (SQLite gives
	// its journal files the file's mode).
	if f, err := os.OpenFile(x.path, os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		f.Close()
	}
	err = x.open()
	if err != nil && !errors.Is(err, errNotOurs) {
		x.log(fmt.Sprintf("search index %s: %v: making it again", x.path, err))
	}
	if err != nil {
		x.close()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(x.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				lock.Close()
				return nil, err
			}
		}
		if f, err := os.OpenFile(x.path, os.O_CREATE|os.O_RDWR, 0o600); err == nil {
			f.Close()
		}
		if err := x.open(); err != nil {
			x.close()
			lock.Close()
			return nil, err
		}
	}
	return x, nil
}

// connected counts a connection of the index, and one without the planner's
// stability guarantee (logged once: the index works, more slowly).
func (x *Index) connected(stable bool) {
	if !stable && x.unstable.Add(1) == 1 {
		x.log("search index: SQLite's planner could not be told to keep its plans (the driver's connection is not as pifs knows it): searches cost about a third more")
	}
}

// ErrInUse is Open's error when another process (another mount of the
// same store with the same cache folder) has the index open.
var ErrInUse = errors.New("search index in use by another mount")

var errNotOurs = errors.New("another format or store")

func (x *Index) open() error {
	u := url.URL{Scheme: "file", Path: x.path}
	dsn := u.String() + "?_busy_timeout=10000"
	var err error
	x.w = stableDB(fmt.Sprintf("%s&_pragma=cache_size(-%d)&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate", dsn, x.o.CacheKiB), x.connected)
	x.w.SetMaxOpenConns(1)
	// Queries share readerConns connections, each with a smaller cache
	// (the kernel's page cache holds the file too).
	x.r = stableDB(fmt.Sprintf("%s&_pragma=cache_size(-%d)&_query_only=1", dsn, readerCacheKiB), x.connected)
	x.r.SetMaxOpenConns(readerConns)
	x.r.SetMaxIdleConns(readerConns)
	x.rf = stableDB(fmt.Sprintf("%s&_pragma=cache_size(-%d)&_query_only=1", dsn, filesCacheKiB), x.connected)
	x.rf.SetMaxOpenConns(readerConns)
	x.rf.SetMaxIdleConns(readerConns)
	ctx := context.Background()
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var format, store sql.NullString
	if _, err := tx.Exec(tables[0]); err != nil {
		return err
	}
	tx.QueryRow(`SELECT value FROM meta WHERE key='format'`).Scan(&format)
	tx.QueryRow(`SELECT value FROM meta WHERE key='store'`).Scan(&store)
	switch {
	case !format.Valid:
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
			return err
		}
		if n > 1 {
			return errNotOurs
		}
		for _, s := range tables[1:] {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(`INSERT INTO meta VALUES('format', ?), ('store', ?)`, Format, x.o.Store); err != nil {
			return err
		}
	case format.String != Format || store.String != x.o.Store:
		return errNotOurs
	}
	// The vocabulary's table holds nothing (its rows are read from the
	// words table): an index made without it gets it as it is.
	if _, err := tx.Exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ` + tableTerms + ` USING fts5vocab(` + tableWords + `, row)`); err != nil {
		return err
	}
	// The builder's 'merge' commands merge a level of two segments (see
	// tidy.go); FTS5's own merges keep their settings.
	for _, t := range []string{tableTri, tableWords} {
		if _, err := tx.Exec(`INSERT INTO ` + t + `(` + t + `, rank) VALUES('usermerge', 2)`); err != nil {
			return err
		}
	}
	if x.o.hashSize > 0 {
		for _, t := range []string{"tri", "words"} {
			if _, err := tx.Exec(fmt.Sprintf(`INSERT INTO %s(%s, rank) VALUES('hashsize', %d)`, t, t, x.o.hashSize)); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return x.loadFiles()
}

// loadFiles reads the files table into memory.
func (x *Index) loadFiles() error {
	rows, err := x.w.Query(`SELECT id, path, project, name, cwd, title, dev, ino, size, mtime, ctime,
		off, seq, prov, tail, sum, racy, complete FROM files`)
	if err != nil {
		return err
	}
	defer rows.Close()
	x.mu.Lock()
	defer x.mu.Unlock()
	for rows.Next() {
		f := &fileRow{}
		var racy, complete int
		var sum int64
		if err := rows.Scan(&f.id, &f.path, &f.project, &f.name, &f.cwd, &f.title, &f.sig.Dev, &f.sig.Ino, &f.sig.Size,
			&f.sig.Mtime, &f.sig.Ctime, &f.off, &f.seq, &f.prov, &f.tail, &sum, &racy, &complete); err != nil {
			return err
		}
		f.sum, f.racy, f.complete = uint32(sum), racy != 0, complete != 0
		x.files[f.id] = f
		x.paths[f.path] = f
	}
	return rows.Err()
}

func (x *Index) log(msg string) {
	if x.o.Log != nil {
		x.o.Log(msg)
	}
}

func (x *Index) info(msg string) {
	if x.o.Info != nil {
		x.o.Info(msg)
	}
}

// Gen changes whenever what the index holds changes (each batch the
// builder commits): an answer may be kept while it is the same.
func (x *Index) Gen() uint64 { return x.gen.Load() }

// Updated is when what the index holds last changed: its last commit, or
// when it was opened. The mount dates by-file/'s folders so, so that the
// kernel lists one again once the index changed.
func (x *Index) Updated() time.Time {
	if ns := x.updated.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return x.opened
}

// Path is the index file.
func (x *Index) Path() string { return x.path }

func (x *Index) close() {
	if x.w != nil {
		x.w.Close()
	}
	if x.r != nil {
		x.r.Close()
	}
	if x.rf != nil {
		x.rf.Close()
	}
}

// Close stops the builder (what it indexed is kept) and closes the file.
func (x *Index) Close() error {
	if x.b != nil {
		x.b.stop()
	}
	var err error
	if x.w != nil {
		// Leave the file whole, without its write-ahead log.
		x.w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		err = x.w.Close()
	}
	for _, db := range []*sql.DB{x.r, x.rf} {
		if db == nil {
			continue
		}
		if e := db.Close(); err == nil {
			err = e
		}
	}
	if x.lock != nil {
		x.lock.Close()
	}
	return err
}

// Stats count what the index did, for tests that guard a cost: the
// statements its queries ran and the rows they read; the files the
// builder indexed whole, the files it indexed the appended part of, the
// files it found unchanged and those it removed; the entries it indexed
// and the bytes of session files it read; Complete is 1 while the index
// holds the store as last told, committed (see Idle).
type Stats struct {
	Statements, Rows                                       int64
	Full, Appended, Unchanged, Removed, Entries, BytesRead int64
	Complete                                               int64
	// Merges counts the text tables' merges done (all of them merged
	// into one segment each), MergeSteps their transactions.
	Merges, MergeSteps int64
}

// Stats returns the counts.
func (x *Index) Stats() Stats {
	s := &x.stats
	var complete int64
	if x.complete() {
		complete = 1
	}
	return Stats{s.statements.Load(), s.rows.Load(), s.full.Load(), s.appended.Load(), s.unchanged.Load(),
		s.removed.Load(), s.entries.Load(), s.read.Load(), complete, s.merges.Load(), s.mergeSteps.Load()}
}

// Size is the index's size on disk: its file and write-ahead log.
func (x *Index) Size() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(x.path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// file returns the file row of an id.
func (x *Index) file(id int64) *fileRow {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.files[id]
}

// query runs a reading statement, counted.
func (x *Index) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return x.queryOn(ctx, x.r, q, args...)
}

// querier is a pool of connections (*sql.DB) or one (*sql.Conn).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryOn runs a reading statement on on, counted.
func (x *Index) queryOn(ctx context.Context, on querier, q string, args ...any) (*sql.Rows, error) {
	x.stats.statements.Add(1)
	return on.QueryContext(ctx, q, args...)
}
