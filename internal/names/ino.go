package names

import "strconv"

// Ino derives a node's inode number from what it shows: the kind of view
// and the names that select it (project, session, entry id...). The same
// thing gets the same number in Lookup and Readdir, in every mount. Numbers
// stay below 2^63, where go-fuse hands out its automatic ones, and above 1,
// the root.
//
// The hash is FNV-1a (64 bits) over the parts, each preceded by its length
// as 8 bytes so that parts never run into each other ("a","b/b" is not
// "a/b","b"), then murmur3's 64-bit finalizer, so that every bit of the
// number depends on every byte. It allocates nothing, and a folder hashes
// the parts its children share once (Hash): a name in a listing of
// 60,000 entries costs about 75 ns, where SHA-256 over all the parts takes
// 500 ns and four allocations. Numbers that happen to be shared are as
// rare as with any good 63-bit hash (about one chance in 10^7 for a
// million nodes); TestInoCollisions checks the near-misses. It does not
// resist chosen inputs: ids written to collide could make two views of a
// session share a number, as a birthday search over 63 bits of SHA-256
// could too.
func Ino(parts ...string) uint64 { return Seed.With(parts...).Ino() }

// Hash is the hash of the first parts of a node's name: a folder hashes
// what its children share once and adds each child's own parts.
type Hash uint64

const (
	// Seed is the hash of no parts.
	Seed     Hash = 14695981039346656037 // FNV-1a 64 offset basis
	inoPrime Hash = 1099511628211
)

// With adds parts to the hash.
func (h Hash) With(parts ...string) Hash {
	for _, p := range parts {
		h = h.length(len(p))
		for i := 0; i < len(p); i++ {
			h = (h ^ Hash(p[i])) * inoPrime
		}
	}
	return h
}

// WithInt adds n as a part, spelled in decimal: h.WithInt(n) is
// h.With(strconv.FormatInt(n, 10)).
func (h Hash) WithInt(n int64) Hash {
	var buf [20]byte
	b := strconv.AppendInt(buf[:0], n, 10)
	h = h.length(len(b))
	for _, c := range b {
		h = (h ^ Hash(c)) * inoPrime
	}
	return h
}

// length adds n as 8 big-endian bytes.
func (h Hash) length(n int) Hash {
	for s := 56; s >= 0; s -= 8 {
		h = (h ^ Hash(byte(uint64(n)>>s))) * inoPrime
	}
	return h
}

// Ino is the inode number of a node whose parts are all added.
func (h Hash) Ino() uint64 {
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
