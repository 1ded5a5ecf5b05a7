package persist

import (
	bolt "go.etcd.io/bbolt"
)

// The cache file is mapped in memory: bbolt reads it through mmap, and
// every page a read passes stays in the process's resident memory until
// the kernel wants it back. A walk over a large store passes most of the
// file (a folder's records, a look-up per file, a flush's updates, a
// prune's passes over every record), so the mapping would hold the whole
// file, up to twice the cache's bound, outside the budget the collector
// keeps the heap in. Instead, the bytes reads pass are counted, and the
// pages are handed back (madvise MADV_DONTNEED) each time the count
// reaches an eighth of the cache's bound: the mapping holds about that
// much at most, whatever reads the file, and nothing is done while nothing
// is read. A page handed back stays in the kernel's page cache: reading it
// again maps it again, without a read of the disk. bbolt writes with
// pwrite(2), never through the mapping, so that handing its pages back
// loses nothing.
//
// Handing back is not free (0.2 ms for a 10 MB file with nothing mapped,
// in the VM the benchmarks run in: the page tables are walked and the
// other processors' TLBs flushed; and a page mapped again costs a fault),
// so it is done only as the count says, never per look-up or per folder.

// releaseBytes is how many bytes reads may pass between two releases for
// a cache bounded to maxBytes.
func releaseBytes(maxBytes int64) int64 { return max(maxBytes/8, 64<<10) }

// passed counts n bytes of the mapping that a read in tx brought in, and
// hands the mapping's pages back once they reach c.release. The mapping
// does not move during a transaction (bbolt maps the file again only
// while committing, with no reader open), so it is released within one.
func (c *Cache) passed(tx *bolt.Tx, n int64) {
	if c.due(n) {
		c.drop(tx)
	}
}

// committed counts n bytes of db's mapping a commit read after its
// transaction's function (the pages it frees), as passed does.
func (c *Cache) committed(db *bolt.DB, n int64) {
	if c.due(n) {
		c.settle(db)
	}
}

// due counts n bytes brought into the mapping and tells whether the count
// reached c.release, starting it again then (one caller of several wins).
func (c *Cache) due(n int64) bool {
	return c.mapped.Add(n) >= c.release && c.mapped.Swap(0) >= c.release
}

// records is what passing records of n bytes (keys and values) counts
// against the mapping: a page may be as little as a quarter full (bbolt
// merges pages below that).
func records(n int) int64 { return 4 * int64(n) }

// settle hands back the pages of db mapped in memory.
func (c *Cache) settle(db *bolt.DB) {
	db.View(func(tx *bolt.Tx) error {
		c.dropAll(tx)
		return nil
	})
}

// dropAll hands back the pages of tx's file mapped in memory and starts
// the count again.
func (c *Cache) dropAll(tx *bolt.Tx) {
	c.mapped.Store(0)
	c.drop(tx)
}

// drop hands back the pages of tx's file mapped in memory, up to its last
// page in use.
func (c *Cache) drop(tx *bolt.Tx) {
	if size := tx.Size(); size > 0 {
		dropPages(tx.DB().Info().Data, uintptr(size))
	}
	c.stats.Released.Add(1)
}
