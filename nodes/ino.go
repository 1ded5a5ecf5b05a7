package nodes

import "strconv"

// inoOf derives a node's inode number from what it shows: the kind of view
// and the names that select it (project, session, entry id...). The same
// thing gets the same number in Lookup and Readdir, in every mount. Numbers
// stay below 2^63, where go-fuse hands out its automatic ones, and above 1,
// the root.
//
// The hash is FNV-1a (64 bits) over the parts, each preceded by its length
// as 8 bytes so that parts never run into each other ("a","b/b" is not
// "a/b","b"), then murmur3's 64-bit finalizer, so that every bit of the
// number depends on every byte. It costs no allocation, and a listing of
// 60,000 entries hashes each name once (it was SHA-256, a tenth of the
// CPU of `ls -l` on such a folder). It is not built to resist chosen
// inputs: someone who writes ids meant to collide can make two views of a
// session share a number, as with any 63-bit number a birthday search
// over SHA-256 would; for numbers that happen to be shared, the odds are
// those of any good 63-bit hash (one in 10^7 for a million nodes), and
// TestInoCollisions checks the near-misses.
func inoOf(parts ...string) uint64 { return inoSeed.with(parts...).ino() }

// inoHash is the hash of the first parts of a node's name: a folder hashes
// what its children share once and adds each child's own parts.
type inoHash uint64

const (
	inoSeed  inoHash = 14695981039346656037 // FNV-1a 64 offset basis
	inoPrime inoHash = 1099511628211
)

// with adds parts to the hash.
func (h inoHash) with(parts ...string) inoHash {
	for _, p := range parts {
		h = h.length(len(p))
		for i := 0; i < len(p); i++ {
			h = (h ^ inoHash(p[i])) * inoPrime
		}
	}
	return h
}

// withInt adds n as a part, spelled in decimal: h.withInt(n) is
// h.with(strconv.FormatInt(n, 10)).
func (h inoHash) withInt(n int64) inoHash {
	var buf [20]byte
	b := strconv.AppendInt(buf[:0], n, 10)
	h = h.length(len(b))
	for _, c := range b {
		h = (h ^ inoHash(c)) * inoPrime
	}
	return h
}

// length adds n as 8 big-endian bytes.
func (h inoHash) length(n int) inoHash {
	for s := 56; s >= 0; s -= 8 {
		h = (h ^ inoHash(byte(uint64(n)>>s))) * inoPrime
	}
	return h
}

// ino is the inode number of a node whose parts are all added.
func (h inoHash) ino() uint64 {
	x := uint64(h)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	x &^= 1 << 63
	if x < 2 {
		x += 2
	}
	return x
}
