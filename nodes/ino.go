package nodes

import (
	"crypto/sha256"
	"encoding/binary"
)

// inoOf derives a node's inode number from what it shows: the kind of view
// and the names that select it (project, session, entry id...). The same
// thing gets the same number in Lookup and Readdir, in every mount. Numbers
// stay below 2^63, where go-fuse hands out its automatic ones, and above 1,
// the root.
func inoOf(parts ...string) uint64 {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)
	ino := binary.BigEndian.Uint64(sum[:8]) &^ (1 << 63)
	if ino < 2 {
		ino += 2
	}
	return ino
}
