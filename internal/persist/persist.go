// Package persist keeps what pifs learns of a store's files on disk, so
// that a new mount of an unchanged store answers from it instead of
// reading every file again: one cache file per sessions directory, an
// embedded B+tree (bbolt) holding, per file path, the version of the file
// the facts are of and the facts themselves as opaque blobs by name.
//
// A fact is only ever given back for the very version it was taken of:
// the caller compares the stored Version with the file's (identity, size,
// mtime, ctime) and decides. The cache never trusts itself either: a file
// that is not a cache, is truncated, was made by another build of pifs or
// for another store is discarded with one log line; a cache that cannot be
// written (a read-only folder, a full disk) is read or left alone, with
// one log line, and answers stay correct since a miss only costs a read of
// the store. Writes are queued and made in batches by a goroutine of the
// cache's own, never on the caller's path.
package persist

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Format names the layout of a cache file; a file of another layout is
// discarded.
const Format = "pifs-cache 2"

// Version is a version of a file: its identity and what changes when it is
// written to.
type Version struct {
	Dev, Ino           uint64
	Size, Mtime, Ctime int64
}

// Record is what the cache holds for one path: the version the facts were
// taken of and the facts, by name.
type Record struct {
	Version Version
	Facts   map[string][]byte
}

// Options configure a cache.
type Options struct {
	// Dir is the folder of the cache files (one per store).
	Dir string
	// Store is the sessions directory, absolute: it names the cache file,
	// and a file made for another store is not used.
	Store string
	// Build names the pifs build: facts taken by another build (whose
	// parser or renderings may differ) are not used.
	Build string
	// MaxBytes bounds the cache file: beyond it, the records used least
	// recently are dropped. 0 means DefaultMaxBytes.
	MaxBytes int64
	// Log is told, once per cause, why the cache is not used or not
	// written (optional).
	Log func(msg string)
	// FlushAfter is how long a write waits to be batched with the next
	// ones (default one second).
	FlushAfter time.Duration
}

// DefaultMaxBytes bounds a cache file when Options.MaxBytes is 0.
const DefaultMaxBytes = 32 << 20

// Buckets of a cache file.
var (
	metaBucket  = []byte("meta")
	filesBucket = []byte("files")
	usedBucket  = []byte("used")
)

// Cache is one store's cache file. The zero of its use is a disabled
// cache: a nil *Cache answers nothing and keeps nothing.
type Cache struct {
	o    Options
	path string

	mu      sync.Mutex
	db      *bolt.DB // nil: disabled
	write   bool     // the file may be written
	pending map[string]*Record
	touched map[string]bool // paths answered or written this session, to mark as used
	timer   *time.Timer
	closed  bool
	logged  map[string]bool

	// flushing serialises flushes (the timer's and Close's).
	flushing sync.Mutex

	// mapped is about how many bytes of the file's mapping reads brought
	// into memory since its pages were last handed back, release how many
	// it may be (see passed).
	mapped  atomic.Int64
	release int64

	stats Stats
}

// Stats count what a cache did (for tests that guard a cost).
type Stats struct {
	// Gets and Hits count Get's lookups; Folders counts Folder's scans
	// and FolderRecords the records they gave. Released counts the times
	// the mapping's pages were handed back (see passed).
	Gets, Hits, Folders, FolderRecords, Puts, Flushes, Pruned, Released atomic.Int64
}

// FileName is the cache file of a store in dir.
func FileName(dir, store string) string {
	sum := sha256.Sum256([]byte(store))
	return filepath.Join(dir, "store-"+hex.EncodeToString(sum[:8])+".db")
}

// Open opens (or creates) the store's cache file. It never fails: a cache
// that cannot be used is disabled, and o.Log says why.
func Open(o Options) *Cache {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.FlushAfter <= 0 {
		o.FlushAfter = time.Second
	}
	c := &Cache{o: o, path: FileName(o.Dir, o.Store), pending: map[string]*Record{}, touched: map[string]bool{}, logged: map[string]bool{},
		release: releaseBytes(o.MaxBytes)}
	c.open()
	return c
}

// Path is the cache file.
func (c *Cache) Path() string {
	if c == nil {
		return ""
	}
	return c.path
}

// Enabled tells whether the cache answers at all.
func (c *Cache) Enabled() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.db != nil
}

// Writable tells whether what is put is kept.
func (c *Cache) Writable() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.db != nil && c.write
}

// Stats returns the cache's counters.
func (c *Cache) Stats() *Stats {
	if c == nil {
		return &Stats{}
	}
	return &c.stats
}

func (c *Cache) log(cause, msg string) {
	if c.logged[cause] {
		return
	}
	c.logged[cause] = true
	if c.o.Log != nil {
		c.o.Log(msg)
	}
}

// open opens the file, discarding one that cannot be trusted. c.mu is
// held or c is not shared yet.
func (c *Cache) open() {
	if err := os.MkdirAll(c.o.Dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		// The folder may still exist but not be ours to create in: try
		// the file read-only below.
		if _, serr := os.Stat(c.path); serr != nil {
			c.log("open", fmt.Sprintf("persistent cache not used: %v; every new mount reads the store's files again (see --cache-dir)", err))
			return
		}
	}
	db, err := c.openFile(false)
	if errors.Is(err, errUntrusted) {
		c.log("discard", fmt.Sprintf("persistent cache %s discarded: %v; starting a new one", c.path, errors.Unwrap(err)))
		if rerr := os.Remove(c.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			c.log("open", fmt.Sprintf("persistent cache not used: cannot remove the untrusted %s: %v", c.path, rerr))
			return
		}
		db, err = c.openFile(false)
	}
	if err != nil && (errors.Is(err, os.ErrPermission) || isReadOnlyFS(err)) {
		// Read what is there, keep nothing.
		ro, rerr := c.openFile(true)
		if rerr == nil {
			c.db, c.write = ro, false
			c.log("readonly", fmt.Sprintf("persistent cache %s is read only (%v): it is read, not updated; make its folder writable or choose another with --cache-dir", c.path, err))
			return
		}
	}
	if err != nil {
		c.log("open", fmt.Sprintf("persistent cache not used: %v; every new mount reads the store's files again (see --cache-dir)", err))
		return
	}
	c.db, c.write = db, true
}

// errUntrusted wraps why a cache file is not used.
var errUntrusted = errors.New("untrusted cache file")

type untrusted struct{ err error }

func (u untrusted) Error() string { return u.err.Error() }
func (u untrusted) Unwrap() error { return u.err }
func (u untrusted) Is(target error) bool {
	return target == errUntrusted
}

// openFile opens the cache file and checks that it is one of ours for
// this store and build; a file that is not is untrusted.
func (c *Cache) openFile(readOnly bool) (db *bolt.DB, err error) {
	if readOnly {
		if _, err := os.Stat(c.path); err != nil {
			return nil, err
		}
	}
	if err := checkSize(c.path); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(c.path)
	db, err = openBolt(c.path, readOnly)
	if err != nil {
		if errors.Is(statErr, os.ErrNotExist) && !readOnly {
			os.Remove(c.path) // a new file half made (a full disk)
		}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return nil, err // the file system's, not the file's
		}
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("%s is in use by another pifs mount of the same store", c.path)
		}
		return nil, untrusted{fmt.Errorf("not a cache file (%v)", err)}
	}
	defer func() {
		if r := recover(); r != nil {
			err = untrusted{fmt.Errorf("corrupt (%v)", r)}
		}
		if err != nil {
			db.Close()
			db = nil
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	fi, err := os.Stat(db.Path())
	if err != nil {
		return nil, err
	}
	want := map[string]string{"format": Format, "store": c.o.Store, "build": c.o.Build}
	fresh := false
	err = db.View(func(tx *bolt.Tx) error {
		// A file cut short (a crash, a full disk) holds pages past its
		// end that reading would fault on.
		if tx.Size() > fi.Size() {
			return untrusted{fmt.Errorf("truncated: %d bytes of %d", fi.Size(), tx.Size())}
		}
		m := tx.Bucket(metaBucket)
		if m == nil {
			if tx.Bucket(filesBucket) != nil {
				return untrusted{errors.New("no format record")}
			}
			fresh = true
			return nil
		}
		for _, k := range []string{"format", "store", "build"} {
			if got := string(m.Get([]byte(k))); got != want[k] {
				return untrusted{fmt.Errorf("made for %s %q, not %q", k, got, want[k])}
			}
		}
		if len(m.Get(heldKey)) != 8 {
			return untrusted{errors.New("no count of its records' bytes")}
		}
		return nil
	})
	if err != nil || !fresh || readOnly {
		return db, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		m, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		for k, v := range want {
			if err := m.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		if err := setHeld(tx, 0); err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(filesBucket); err != nil {
			return err
		}
		_, err = tx.CreateBucketIfNotExists(usedBucket)
		return err
	})
	return db, err
}

// openBolt opens a bbolt file; a fault or a panic while it reads a
// corrupt file is an error, not the end of the mount.
func openBolt(path string, readOnly bool) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, untrusted{fmt.Errorf("corrupt (%v)", r)}
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return bolt.Open(path, 0o600, &bolt.Options{
		Timeout:  100 * time.Millisecond,
		ReadOnly: readOnly,
		// The free pages are kept in the file, so that opening reads
		// them alone, not every page.
		FreelistType: bolt.FreelistMapType,
	})
}

// checkSize refuses a file shorter than its meta pages say it is (cut
// short by a crash or a full disk): bbolt would fault reading past its end.
// A meta page is, after a 16-byte page header: magic, version, page size,
// flags (4 bytes each), root bucket, sequence, freelist page, page count
// (8 bytes each).
func checkSize(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // made new
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	const magic = 0xED0CDAED
	buf := make([]byte, 64)
	var pages []uint64
	pageSize := int64(0)
	for i := range 2 {
		off := int64(i) * pageSize
		if i == 1 && pageSize == 0 {
			break
		}
		if _, err := f.ReadAt(buf, off); err != nil {
			break
		}
		if binary.LittleEndian.Uint32(buf[16:]) != magic {
			continue
		}
		if i == 0 {
			pageSize = int64(binary.LittleEndian.Uint32(buf[24:]))
			if pageSize < 512 || pageSize > 1<<20 {
				return untrusted{fmt.Errorf("not a cache file (page size %d)", pageSize)}
			}
		}
		pages = append(pages, binary.LittleEndian.Uint64(buf[56:]))
	}
	if len(pages) == 0 {
		return untrusted{errors.New("not a cache file")}
	}
	for _, n := range pages {
		if int64(n)*pageSize > fi.Size() {
			return untrusted{fmt.Errorf("truncated: %d bytes of %d", fi.Size(), int64(n)*pageSize)}
		}
	}
	return nil
}

func isReadOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

// Get returns what the cache holds for path, of whatever version: the
// caller compares rec.Version with the file's.
func (c *Cache) Get(path string) (rec *Record, ok bool) {
	if c == nil {
		return nil, false
	}
	c.stats.Gets.Add(1)
	c.mu.Lock()
	var pend *Record
	if p := c.pending[path]; p != nil {
		pend = p.clone()
	}
	db := c.db
	c.mu.Unlock()
	if db != nil {
		rec = c.read(db, path)
	}
	switch {
	case pend == nil:
	case rec == nil || rec.Version != pend.Version:
		rec = pend
	default:
		// Facts queued for the version on file add to it.
		for k, v := range pend.Facts {
			rec.Facts[k] = v
		}
	}
	if rec == nil {
		return nil, false
	}
	c.stats.Hits.Add(1)
	c.mu.Lock()
	c.touched[path] = true
	c.mu.Unlock()
	return rec, true
}

// Folder returns what the cache holds for the files directly in dir (not
// in folders below it), by path, of whatever version, as Get would for each:
// one read of the file, a pass over the records in key order, so that a
// new mount reads a folder's records at the cost of one look-up, not one
// per file.
func (c *Cache) Folder(dir string) map[string]*Record {
	if c == nil {
		return nil
	}
	c.stats.Folders.Add(1)
	prefix := strings.TrimSuffix(dir, "/") + "/"
	out := map[string]*Record{}
	c.mu.Lock()
	db := c.db
	pend := map[string]*Record{}
	for p, r := range c.pending {
		if isIn(p, prefix) {
			pend[p] = r.clone()
		}
	}
	c.mu.Unlock()
	if db != nil {
		c.readFolder(db, prefix, out)
	}
	for p, r := range pend {
		switch rec := out[p]; {
		case rec == nil || rec.Version != r.Version:
			out[p] = r
		default:
			for k, v := range r.Facts {
				rec.Facts[k] = v
			}
		}
	}
	c.stats.FolderRecords.Add(int64(len(out)))
	c.mu.Lock()
	for p := range out {
		c.touched[p] = true
	}
	c.mu.Unlock()
	return out
}

// isIn tells that path names a file directly under prefix (which ends in
// a slash).
func isIn(path, prefix string) bool {
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// readFolder reads the records under prefix into out.
func (c *Cache) readFolder(db *bolt.DB, prefix string, out map[string]*Record) {
	ok := c.readFiles(db, func(b *bolt.Bucket) error {
		cur := b.Cursor()
		for k, v := cur.Seek([]byte(prefix)); k != nil && bytes.HasPrefix(k, []byte(prefix)); k, v = cur.Next() {
			c.passed(b.Tx(), records(len(k)+len(v)))
			if bytes.IndexByte(k[len(prefix):], '/') >= 0 {
				continue // a file in a folder below
			}
			rec, err := decode(v)
			if err != nil {
				return err
			}
			out[string(k)] = rec
		}
		return nil
	})
	if !ok {
		clear(out)
	}
}

// read reads path's record from the file.
func (c *Cache) read(db *bolt.DB, path string) (rec *Record) {
	ok := c.readFiles(db, func(b *bolt.Bucket) error {
		var err error
		// A look-up reads a leaf page; the branch pages above it are
		// few and shared.
		c.passed(b.Tx(), pageSize(b.Tx()))
		if v := b.Get([]byte(path)); v != nil {
			rec, err = decode(v)
		}
		return err
	})
	if !ok {
		return nil
	}
	return rec
}

// readFiles runs fn in a read of the file's records; a fault, or a
// record that does not decode (fn's error), disables the cache and is
// false.
func (c *Cache) readFiles(db *bolt.DB, fn func(*bolt.Bucket) error) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.fail(fmt.Errorf("corrupt (%v)", r))
			ok = false
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var err error
	// An error of the read itself (a file closed by a compaction
	// meanwhile) is a miss, not a corrupt cache.
	if db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(filesBucket); b != nil {
			err = fn(b)
		}
		return nil
	}) != nil {
		return false
	}
	if err != nil {
		c.fail(err)
		return false
	}
	return true
}

// fail disables a cache found corrupt while in use; the next mount
// discards the file.
func (c *Cache) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		return
	}
	c.log("corrupt", fmt.Sprintf("persistent cache %s not used any more: %v; the next mount starts a new one", c.path, err))
	c.markUntrusted()
	c.db.Close()
	c.db = nil
	c.pending = map[string]*Record{}
}

// markUntrusted makes the next open discard the file, when it can be
// written: its format record is removed.
func (c *Cache) markUntrusted() {
	if !c.write {
		return
	}
	func() {
		defer func() { recover() }()
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		c.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(metaBucket) })
	}()
}

// Put records facts of a version of path: merged with what is held for the
// same version, replacing what is held for another. It returns at once;
// the write is made later, with others.
func (c *Cache) Put(path string, v Version, facts map[string][]byte) {
	if c == nil || len(facts) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil || !c.write || c.closed {
		return
	}
	c.stats.Puts.Add(1)
	p := c.pending[path]
	if p == nil || p.Version != v {
		p = &Record{Version: v, Facts: map[string][]byte{}}
		c.pending[path] = p
	}
	for k, b := range facts {
		p.Facts[k] = bytes.Clone(b)
	}
	c.touched[path] = true
	if c.timer == nil {
		c.timer = time.AfterFunc(c.o.FlushAfter, func() { c.Flush() })
	}
}

// Flush writes what is queued, now.
func (c *Cache) Flush() {
	if c == nil {
		return
	}
	c.flushing.Lock()
	defer c.flushing.Unlock()
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	db, write := c.db, c.write
	pending, touched := c.pending, c.touched
	c.pending, c.touched = map[string]*Record{}, map[string]bool{}
	c.mu.Unlock()
	if db == nil || !write || (len(pending) == 0 && len(touched) == 0) {
		return
	}
	err := c.flush(db, pending, touched)
	if err == nil && c.Size() > 2*c.o.MaxBytes {
		err = c.compact(db)
	}
	switch {
	case err == nil:
	case errors.Is(err, errCorrupt):
		c.fail(err)
	default:
		// A full disk, a file system gone read-only: what was not
		// written is dropped (a miss costs a read of the store), and
		// nothing more is written this mount.
		c.mu.Lock()
		c.write = false
		c.log("write", fmt.Sprintf("persistent cache %s not updated any more this mount: %v; free space there or choose another folder with --cache-dir", c.path, err))
		c.mu.Unlock()
	}
}

var errCorrupt = errors.New("corrupt")

// hour is the unit of the records' last use.
func hour() uint32 { return uint32(time.Now().Unix() / 3600) }

func (c *Cache) flush(db *bolt.DB, pending map[string]*Record, touched map[string]bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (%v)", errCorrupt, r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	now := hour()
	var freed int64 // what the commit reads of the pages it frees
	err = db.Update(func(tx *bolt.Tx) error {
		files, used := tx.Bucket(filesBucket), tx.Bucket(usedBucket)
		if files == nil || used == nil {
			return fmt.Errorf("%w: buckets missing", errCorrupt)
		}
		paths := make([]string, 0, len(pending))
		for p := range pending {
			paths = append(paths, p)
		}
		sort.Strings(paths) // B+tree inserts in key order
		page := pageSize(tx)
		freed = int64(len(pending)+len(touched)) * page
		size := held(tx)
		for _, p := range paths {
			c.passed(tx, page)
			rec := pending[p]
			if old := files.Get([]byte(p)); old != nil {
				size -= recordBytes([]byte(p), old)
				if o, err := decode(old); err == nil && o.Version == rec.Version {
					for k, b := range o.Facts {
						if _, ok := rec.Facts[k]; !ok {
							rec.Facts[k] = b
						}
					}
				}
			}
			v := encode(rec)
			if err := files.Put([]byte(p), v); err != nil {
				return err
			}
			size += recordBytes([]byte(p), v)
		}
		if err := setHeld(tx, size); err != nil {
			return err
		}
		var stamp [4]byte
		binary.BigEndian.PutUint32(stamp[:], now)
		marks := make([]string, 0, len(touched))
		for p := range touched {
			marks = append(marks, p)
		}
		sort.Strings(marks)
		for _, p := range marks {
			c.passed(tx, 2*page)
			if old := used.Get([]byte(p)); len(old) == 4 && binary.BigEndian.Uint32(old) == now {
				continue
			}
			if files.Get([]byte(p)) == nil {
				continue
			}
			if err := used.Put([]byte(p), stamp[:]); err != nil {
				return err
			}
		}
		pruned, err := c.prune(tx)
		freed += pruned * page
		return err
	})
	if err == nil {
		c.stats.Flushes.Add(1)
	}
	c.committed(db, freed)
	return err
}

// prune drops the records used least recently while they take more than
// the bound, down to three quarters of it, and says how many: those of the
// oldest hours of last use, and of the next hour those first in key order.
// It passes over the records twice and keeps no more than the paths it
// drops: a first pass adds their bytes up by hour, a second picks the
// paths.
func (c *Cache) prune(tx *bolt.Tx) (int64, error) {
	if held(tx) <= c.o.MaxBytes {
		return 0, nil
	}
	files, used := tx.Bucket(filesBucket), tx.Bucket(usedBucket)
	stamp := func(k []byte) uint32 {
		if s := used.Get(k); len(s) == 4 {
			return binary.BigEndian.Uint32(s)
		}
		return 0
	}
	byHour := map[uint32]int64{}
	var total int64
	files.ForEach(func(k, v []byte) error {
		c.passed(tx, records(len(k)+len(v)))
		n := recordBytes(k, v)
		byHour[stamp(k)] += n
		total += n
		return nil
	})
	hours := make([]uint32, 0, len(byHour))
	for h := range byHour {
		hours = append(hours, h)
	}
	slices.Sort(hours)
	// The hours dropped whole (before cut), and how many bytes of the
	// hour cut.
	need := total - min(total, c.o.MaxBytes)*3/4
	var cut uint32
	for _, h := range hours {
		cut = h
		if byHour[h] >= need {
			break
		}
		need -= byHour[h]
	}
	var drop [][]byte
	files.ForEach(func(k, v []byte) error {
		c.passed(tx, records(len(k)+len(v)))
		switch h := stamp(k); {
		case h < cut:
		case h == cut && need > 0:
			need -= recordBytes(k, v)
		default:
			return nil
		}
		drop = append(drop, bytes.Clone(k))
		total -= recordBytes(k, v)
		return nil
	})
	for _, k := range drop {
		c.passed(tx, 3*pageSize(tx))
		if err := files.Delete(k); err != nil {
			return 0, err
		}
		if err := used.Delete(k); err != nil {
			return 0, err
		}
		c.stats.Pruned.Add(1)
	}
	return int64(len(drop)), setHeld(tx, total)
}

// compact writes the records into a new file that replaces the cache
// file: pruning frees pages for reuse, but the file never shrinks by
// itself. Called with c.flushing held.
func (c *Cache) compact(db *bolt.DB) (err error) {
	tmp := c.path + ".new"
	os.Remove(tmp)
	dst, err := openBolt(tmp, false)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (%v)", errCorrupt, r)
		}
		if err != nil {
			dst.Close()
			os.Remove(tmp)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if err := c.copyInto(dst, db); err != nil {
		return err
	}
	c.settle(dst)
	if err := os.Rename(tmp, c.path); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db != db {
		dst.Close() // closed meanwhile
		return nil
	}
	c.db = dst
	go db.Close() // waits for the reads under way
	return nil
}

// copyInto copies the buckets of src, which hold records and no buckets,
// into dst, filling dst's pages as it writes in key order, and syncs dst.
// It hands src's pages back as it reads them (bolt.Compact would bring the
// whole file into memory): a transaction of dst copies records that count
// c.release at most (see records), and src's pages are handed back once
// it is committed (the commit reads the values from src's mapping). dst is
// synced once, at the end, not at each of these commits.
func (c *Cache) copyInto(dst, src *bolt.DB) error {
	dst.NoSync = true
	defer func() { dst.NoSync = false }()
	err := src.View(func(stx *bolt.Tx) error {
		return stx.ForEach(func(name []byte, b *bolt.Bucket) error {
			cur := b.Cursor()
			k, v := cur.First()
			for first := true; first || k != nil; first = false {
				err := dst.Update(func(dtx *bolt.Tx) error {
					out, err := dtx.CreateBucketIfNotExists(name)
					if err != nil {
						return err
					}
					out.FillPercent = 1
					for n := int64(0); k != nil && n < c.release; k, v = cur.Next() {
						if v == nil {
							return fmt.Errorf("%w: a bucket in bucket %q", errCorrupt, name)
						}
						if err := out.Put(k, v); err != nil {
							return err
						}
						n += records(len(k) + len(v))
					}
					return nil
				})
				if err != nil {
					return err
				}
				c.dropAll(stx)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	return dst.Sync()
}

// heldKey names, in the meta bucket, how many bytes the records take
// (the sum of their recordBytes), kept with each change to them: the bound
// is checked without reading every page, which would bring the whole file
// into memory at every flush.
var heldKey = []byte("held")

// recordBytes is about what a record takes in the file's pages, with its
// mark of last use: its path twice, its value, the mark, and bbolt's
// header of each.
func recordBytes(path, value []byte) int64 { return int64(2*len(path)+len(value)) + 36 }

// held is how many bytes the records take.
func held(tx *bolt.Tx) int64 {
	if m := tx.Bucket(metaBucket); m != nil {
		if b := m.Get(heldKey); len(b) == 8 {
			return int64(binary.BigEndian.Uint64(b))
		}
	}
	return 0
}

// setHeld records how many bytes the records take.
func setHeld(tx *bolt.Tx, n int64) error {
	m := tx.Bucket(metaBucket)
	if m == nil {
		return fmt.Errorf("%w: buckets missing", errCorrupt)
	}
	return m.Put(heldKey, binary.BigEndian.AppendUint64(nil, uint64(max(n, 0))))
}

// pageSize is the size of the file's pages.
func pageSize(tx *bolt.Tx) int64 { return int64(tx.DB().Info().PageSize) }

// Size is the cache file's size: the most of it that can be mapped in
// memory.
func (c *Cache) Size() int64 {
	if c == nil {
		return 0
	}
	fi, err := os.Stat(c.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Close writes what is queued and closes the file.
func (c *Cache) Close() error {
	if c == nil {
		return nil
	}
	c.Flush()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.db == nil {
		return nil
	}
	err := c.db.Close()
	c.db = nil
	return err
}

func (r *Record) clone() *Record {
	out := &Record{Version: r.Version, Facts: make(map[string][]byte, len(r.Facts))}
	for k, v := range r.Facts {
		out.Facts[k] = bytes.Clone(v)
	}
	return out
}

// encode lays a record out as: the version's five numbers, the number of
// facts, then each fact's name and blob, each preceded by its length.
func encode(r *Record) []byte {
	names := make([]string, 0, len(r.Facts))
	n := 5*binary.MaxVarintLen64 + binary.MaxVarintLen64
	for k, v := range r.Facts {
		names = append(names, k)
		n += 2*binary.MaxVarintLen64 + len(k) + len(v)
	}
	sort.Strings(names)
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, r.Version.Dev)
	b = binary.AppendUvarint(b, r.Version.Ino)
	b = binary.AppendVarint(b, r.Version.Size)
	b = binary.AppendVarint(b, r.Version.Mtime)
	b = binary.AppendVarint(b, r.Version.Ctime)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, k := range names {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(r.Facts[k])))
		b = append(b, r.Facts[k]...)
	}
	return b
}

var errBadRecord = fmt.Errorf("%w: a record does not decode", errCorrupt)

// decode reads a record encode wrote, copying out of b (which bbolt owns).
func decode(b []byte) (*Record, error) {
	d := Decoder{b: b}
	r := &Record{}
	r.Version.Dev = d.Uvarint()
	r.Version.Ino = d.Uvarint()
	r.Version.Size = d.Varint()
	r.Version.Mtime = d.Varint()
	r.Version.Ctime = d.Varint()
	n := d.Uvarint()
	if d.err != nil || n > uint64(len(b)) {
		return nil, errBadRecord
	}
	r.Facts = make(map[string][]byte, n)
	for range n {
		k := d.Bytes()
		v := d.Bytes()
		if d.err != nil {
			return nil, errBadRecord
		}
		r.Facts[string(k)] = bytes.Clone(v)
	}
	if d.Len() != 0 {
		return nil, errBadRecord
	}
	return r, nil
}
