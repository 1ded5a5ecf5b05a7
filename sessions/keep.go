package sessions

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pifs/pifs/internal/persist"
)

// Names of the facts the index keeps in the persistent cache. Other
// packages keep their own under names of their own (see File.Fact).
const (
	factHeader = "sessions.header" // the header line; empty: not a session
	factTail   = "sessions.tail"
	factName   = "sessions.name"
	// factEnd is the last bytes of the version (up to endBytes): a later,
	// longer version whose bytes there are the same only grew.
	factEnd = "sessions.end"
)

const endBytes = 64

// Keep makes the index take what it knows of unchanged files from c, and
// keep there what it learns, for the next mount. Call it before anything
// is read; a nil c keeps nothing.
func (x *Index) Keep(c *persist.Cache) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cache = c
	x.kept = &keeper{cache: c, reads: &x.counts.reads}
}

// keeper is what the files of an index share: its persistent cache and
// its count of reads. One pointer a File, not two.
type keeper struct {
	cache *persist.Cache
	reads *atomic.Int64
}

// keeper is the index's, for its files as they are loaded now.
func (x *Index) keeper() *keeper { return x.kept }

// Cache is the persistent cache the index keeps facts in (nil: none).
func (x *Index) Cache() *persist.Cache {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.cache
}

// versionOf is a signature as the persistent cache names a version.
func versionOf(s Sig) persist.Version {
	return persist.Version{Dev: s.Dev, Ino: s.Ino, Size: s.Size, Mtime: s.Mtime, Ctime: s.Ctime}
}

// fromCache makes a File of path from the cache's record of it when that
// record is of this version (f.Sig): nothing is read, and the header, the
// tail and the name scan are set from it. A record of an
// earlier version the file may have grown from is held (f.earlier) until
// the file's header is read (see grown). A version changed within
// racyWindow is never taken from the cache.
func (x *Index) fromCache(path string, f *File, kept map[string]*persist.Record) bool {
	if x.cache == nil || f.racy {
		return false
	}
	var rec *persist.Record
	if kept != nil {
		rec = kept[path]
	} else {
		rec, _ = x.cache.Get(path)
	}
	if rec == nil {
		return false
	}
	v := versionOf(f.Sig)
	if rec.Version != v {
		if rec.Version.Dev == v.Dev && rec.Version.Ino == v.Ino && rec.Version.Size < v.Size {
			f.earlier = rec
		}
		return false
	}
	h, ok := rec.Facts[factHeader]
	if !ok {
		return false
	}
	if len(h) > 0 {
		hdr, ok := parseHeaderIn(h, true) // the record's own bytes
		if !ok {
			return false
		}
		f.Header = hdr
	}
	// The File is not shared yet: its facts are set as a read would.
	if b, ok := rec.Facts[factTail]; ok {
		if t, ok := decodeTail(b); ok {
			f.tailOnce.Do(func() { f.tail = t })
		}
	}
	if b, ok := rec.Facts[factName]; ok {
		if n, ok := decodeName(b); ok {
			ns := f.nameState()
			ns.once.Do(func() { ns.scan = n })
			ns.done.Store(true)
		}
	}
	// Other packages' small facts stay with the version, so that a walk
	// that asks for them (the views' sizes) asks the cache nothing more;
	// of the others, their names.
	for k, b := range rec.Facts {
		if strings.HasPrefix(k, "sessions.") {
			continue
		}
		if len(b) <= heldFactBytes {
			if f.held == nil {
				f.held = map[string][]byte{}
			}
			f.held[k] = b
		} else {
			if f.big == nil {
				f.big = map[string]bool{}
			}
			f.big[k] = true
		}
	}
	f.whole = true
	return true
}

// heldFactBytes bounds the facts a File holds in memory (see File.held):
// what is larger is asked of the cache each time.
const heldFactBytes = 1 << 10

// grown takes up the cache's earlier version of the file (f.earlier) when
// the file, whose header was just read from fd, only grew from it: the
// same header and the same bytes where that version ended. Its name scan
// goes on from where that version's stopped, and other packages' facts of
// it are offered (EarlierFact) to do the same.
func (f *File) grown(fd io.ReaderAt) {
	rec := f.earlier
	f.earlier = nil
	if rec == nil || f.Header == nil {
		return
	}
	if old, ok := rec.Facts[factHeader]; !ok || !bytes.Equal(old, f.Header.Raw) {
		return
	}
	end, ok := rec.Facts[factEnd]
	if !ok || int64(len(end)) > rec.Version.Size {
		return
	}
	buf := make([]byte, len(end))
	if _, err := fd.ReadAt(buf, rec.Version.Size-int64(len(end))); err != nil || !bytes.Equal(buf, end) {
		return
	}
	f.grewFrom = rec
	if b, ok := rec.Facts[factName]; ok {
		if n, ok := decodeName(b); ok && n.upTo <= rec.Version.Size {
			f.nameState().from = n
		}
	}
}

// keep queues facts of this version for the cache; versions changed
// within racyWindow are not kept (a rewrite in the same clock tick would
// leave the same signature with other bytes).
func (f *File) keep(facts map[string][]byte) {
	if f.cache() == nil || f.racy || f.Err != nil {
		return
	}
	f.cache().Put(f.Path, versionOf(f.Sig), facts)
}

// Fact is a fact another package kept for this version of the file with
// SetFact, in this mount or, the file unchanged, an earlier one. Facts are
// kept in the persistent cache only: without one, or for a version changed
// within racyWindow, there are none (the caller keeps its own copy). What
// a fact means is the other package's: the index only keeps it.
func (f *File) Fact(name string) ([]byte, bool) {
	if f.cache() == nil || f.racy || f.Err != nil {
		return nil, false
	}
	f.heldMu.Lock()
	b, ok := f.held[name]
	big := f.big[name]
	f.heldMu.Unlock()
	if ok {
		return b, true
	}
	if f.whole && !big {
		return nil, false // the version has no such fact
	}
	rec, ok := f.cache().Get(f.Path)
	if !ok || rec.Version != versionOf(f.Sig) {
		return nil, false
	}
	b, ok = rec.Facts[name]
	return b, ok
}

// SetFact keeps a fact of this version of the file in the persistent
// cache (see Fact). b must not be changed after.
func (f *File) SetFact(name string, b []byte) {
	if f.cache() == nil || f.racy || f.Err != nil {
		return
	}
	f.heldMu.Lock()
	if len(b) <= heldFactBytes {
		if f.held == nil {
			f.held = map[string][]byte{}
		}
		f.held[name] = b
		delete(f.big, name)
	} else {
		delete(f.held, name)
		if f.big == nil {
			f.big = map[string]bool{}
		}
		f.big[name] = true
	}
	f.heldMu.Unlock()
	f.keep(map[string][]byte{name: b})
}

// EarlierFact is a fact kept for the version of the file this one grew
// from (an earlier mount's), when the index found that it only grew: a
// fact that can be carried on from where that version ended (a scan) need
// read only the new bytes. The version's size is where it ended.
func (f *File) EarlierFact(name string) (b []byte, size int64, ok bool) {
	if f.grewFrom == nil {
		return nil, 0, false
	}
	b, ok = f.grewFrom.Facts[name]
	return b, f.grewFrom.Version.Size, ok
}

// keepHeader queues the header (or that the file is no session) and,
// given the file (fd), the version's last bytes.
func (f *File) keepHeader(fd io.ReaderAt) {
	if f.cache() == nil || f.racy || f.Err != nil {
		return
	}
	var h []byte
	if f.Header != nil {
		h = f.Header.Raw
	}
	facts := map[string][]byte{factHeader: slices.Clip(h)}
	if fd != nil {
		n := min(f.Sig.Size, endBytes)
		end := make([]byte, n)
		if _, err := fd.ReadAt(end, f.Sig.Size-n); err == nil {
			facts[factEnd] = end
		}
	}
	f.keep(facts)
}

// encodeTail and decodeTail lay out a Tail as a fact.
func encodeTail(t Tail) []byte {
	var e persist.Encoder
	e.Float64(t.Activity)
	e.Bool(t.HasActivity)
	e.String(t.Leaf)
	e.Bool(t.LeafKnown)
	return e.Data()
}

func decodeTail(b []byte) (Tail, bool) {
	d := persist.NewDecoder(b)
	t := Tail{Activity: d.Float64(), HasActivity: d.Bool(), Leaf: d.Text(), LeafKnown: d.Bool()}
	return t, d.Err() == nil && d.Len() == 0
}

func encodeName(n nameScan) []byte {
	var e persist.Encoder
	e.String(n.complete)
	e.Varint(n.upTo)
	e.String(n.name)
	return e.Data()
}

func decodeName(b []byte) (nameScan, bool) {
	d := persist.NewDecoder(b)
	n := nameScan{complete: d.Text(), upTo: d.Varint(), name: d.Text()}
	return n, d.Err() == nil && d.Len() == 0
}

// CountRead tells the index that the file's bytes are read (see
// Index.Reads).
func (f *File) CountRead() {
	if f.kx != nil {
		f.kx.reads.Add(1)
	}
}

// cache is the persistent cache of the file's index (nil: none).
func (k *keptState) cache() *persist.Cache {
	if k.kx == nil {
		return nil
	}
	return k.kx.cache
}

// keptState is the part of File that the persistent cache fills.
type keptState struct {
	kx *keeper // the index's cache and count of reads (nil: none)
	// earlier is the cache's record of an earlier version, until the
	// header is read; grewFrom that record, once found to be one the
	// file grew from.
	earlier, grewFrom *persist.Record
	// held are other packages' small facts of this version, as the cache
	// gave them or SetFact set them (see Fact), big the names of those
	// too large to hold; whole tells that, together, they are every such
	// fact the cache has of the version (it was taken from the cache's
	// record, or the cache had none of it when the file was read), so
	// that a fact in neither is known to be missing without asking the
	// cache. whole is set before the File is shared.
	heldMu sync.Mutex
	held   map[string][]byte
	big    map[string]bool
	whole  bool
}
