package sessions

import (
	"bytes"
	"io"
	"maps"
	"slices"
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
	factSizes  = "sessions.sizes"
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
}

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

// kept is what the persistent cache held for a file when the index first
// looked at it: the facts of this very version, or of an earlier one the
// file grew from.
type kept struct {
	rec  *persist.Record
	same bool
}

// fromCache makes a File of path, whose stat is fi, from the cache's
// record of it when that record is of this version: nothing is read.
// Facts of an earlier version the file only grew from are passed on to
// the File (its name scan goes on from where that stopped) once its
// header and its bytes where the earlier version ended are found the same.
// A version changed within racyWindow is never taken from the cache.
func (x *Index) fromCache(path string, f *File) bool {
	if x.cache == nil || f.racy {
		return false
	}
	rec, ok := x.cache.Get(path)
	if !ok {
		return false
	}
	v := versionOf(f.Sig)
	if rec.Version == v {
		h, ok := rec.Facts[factHeader]
		if !ok {
			return false
		}
		if len(h) > 0 {
			hdr, ok := parseHeader(h)
			if !ok {
				return false
			}
			f.Header = hdr
		}
		f.kept = &kept{rec: rec, same: true}
		return true
	}
	if rec.Version.Dev == v.Dev && rec.Version.Ino == v.Ino && rec.Version.Size < v.Size {
		f.kept = &kept{rec: rec}
	}
	return false
}

// grewFrom tells whether the file, whose header was just read as h from
// fd, is the cache's earlier version with bytes appended: the same header
// and the same bytes where that version ended.
func (k *kept) grewFrom(fd io.ReaderAt, h *Header) bool {
	if k == nil || k.same || h == nil {
		return false
	}
	if old, ok := k.rec.Facts[factHeader]; !ok || !bytes.Equal(old, h.Raw) {
		return false
	}
	end, ok := k.rec.Facts[factEnd]
	if !ok || int64(len(end)) > k.rec.Version.Size {
		return false
	}
	buf := make([]byte, len(end))
	if _, err := fd.ReadAt(buf, k.rec.Version.Size-int64(len(end))); err != nil {
		return false
	}
	return bytes.Equal(buf, end)
}

// keep queues facts of this version for the cache; versions changed
// within racyWindow are not kept (a rewrite in the same clock tick would
// leave the same signature with other bytes).
func (f *File) keep(facts map[string][]byte) {
	if f.cache == nil || f.racy || f.Err != nil {
		return
	}
	f.cache.Put(f.Path, versionOf(f.Sig), facts)
}

// keptFact is a fact the cache held for this version of the file.
func (f *File) keptFact(name string) ([]byte, bool) {
	if f.kept == nil || !f.kept.same {
		return nil, false
	}
	b, ok := f.kept.rec.Facts[name]
	return b, ok
}

// Fact is a fact another package kept for this version of the file with
// SetFact, from this mount or, when the file is unchanged, an earlier one.
// What it means is the other package's: the index only keeps it.
func (f *File) Fact(name string) ([]byte, bool) {
	f.mu.Lock()
	b, ok := f.facts[name]
	f.mu.Unlock()
	if ok {
		return b, true
	}
	return f.keptFact(name)
}

// SetFact keeps a fact of this version of the file, for this mount and,
// with a persistent cache, for later ones. b must not be changed after.
func (f *File) SetFact(name string, b []byte) {
	f.mu.Lock()
	if f.facts == nil {
		f.facts = map[string][]byte{}
	}
	f.facts[name] = b
	f.mu.Unlock()
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

// grown passes on the facts of the cache's earlier version of the file,
// when the file only grew from it (see kept.grewFrom): its name scan goes
// on from where that version's stopped. fd is the file, its header read.
func (f *File) grown(fd io.ReaderAt) {
	if !f.kept.grewFrom(fd, f.Header) {
		return
	}
	f.grewFrom = f.kept.rec
	if b, ok := f.grewFrom.Facts[factName]; ok {
		if n, ok := decodeName(b); ok && n.upTo <= f.grewFrom.Version.Size {
			f.nameFrom = n
		}
	}
}

// keepHeader queues the header (or that the file is no session) and,
// given the file (fd), the version's last bytes.
func (f *File) keepHeader(fd io.ReaderAt) {
	if f.cache == nil || f.racy || f.Err != nil {
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

func encodeSizes(m map[string]int64) []byte {
	var e persist.Encoder
	keys := slices.Sorted(maps.Keys(m))
	e.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.String(k)
		e.Varint(m[k])
	}
	return e.Data()
}

func decodeSizes(b []byte) (map[string]int64, bool) {
	d := persist.NewDecoder(b)
	n := d.Uvarint()
	if d.Err() != nil || n > uint64(len(b)) {
		return nil, false
	}
	m := make(map[string]int64, n)
	for range n {
		k := d.Text()
		m[k] = d.Varint()
	}
	return m, d.Err() == nil && d.Len() == 0
}

// keptOnce takes the facts the cache held for this version into the
// File's own fields, once: the tail, the name, the sizes.
func (f *File) takeKept() {
	f.keptOnce.Do(func() {
		if b, ok := f.keptFact(factTail); ok {
			if t, ok := decodeTail(b); ok {
				f.tailOnce.Do(func() { f.tail = t })
			}
		}
		if b, ok := f.keptFact(factName); ok {
			if n, ok := decodeName(b); ok {
				f.nameOnce.Do(func() {
					f.nameScan = n
					f.nameDone.Store(true)
				})
			}
		}
		if b, ok := f.keptFact(factSizes); ok {
			if m, ok := decodeSizes(b); ok {
				f.mu.Lock()
				if f.sizes == nil {
					f.sizes = m
				} else {
					for k, v := range m {
						if _, ok := f.sizes[k]; !ok {
							f.sizes[k] = v
						}
					}
				}
				f.mu.Unlock()
			}
		}
	})
}

// CountRead tells the index that the file's bytes are read (see
// Index.Reads).
func (f *File) CountRead() {
	if f.reads != nil {
		f.reads.Add(1)
	}
}

// keptState is the part of File that the persistent cache fills.
type keptState struct {
	cache    *persist.Cache
	reads    *atomic.Int64 // the index's count of reads
	kept     *kept
	grewFrom *persist.Record
	keptOnce sync.Once
	facts    map[string][]byte // guarded by File.mu
}
