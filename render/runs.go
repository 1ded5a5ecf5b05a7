package render

import (
	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/par"
)

// A big page is rendered on every core into one buffer made once at about
// the page's size, so that the page is never copied whole into a second
// one (touching a new 100 MB buffer's pages costs about as much as
// rendering into it). Each run (of the path's entries, of the tree's rows)
// is given a region of the buffer as long as its estimated size and
// rendered there on its own goroutine; then the runs are moved down, in
// order, each to the end of the one before, over the room the runs before
// left unused: a move within pages already touched. A run that outgrows
// its region is rendered into a buffer of its own (append makes one) and
// copied in when the runs before left room for it; when they did not, the
// rest of the page is copied into a new buffer, which is what rendering
// in parts cost before.

// fillRuns appends len(est) runs to dst: run k is render(k, buf) with
// buf an empty slice of capacity est[k], which render appends to and
// returns. more is the room to keep after the runs when dst has to grow.
// copied counts the bytes copied into a new buffer: those of a run that
// outgrew its region (append moved it), and the page's when it had to
// move (0 when every run fit).
func fillRuns(dst []byte, est []int, more int, render func(k int, buf []byte) []byte) (out []byte, copied int) {
	total := 0
	for _, n := range est {
		total += n
	}
	if cap(dst)-len(dst) < total {
		copied += len(dst)
		dst = append(hugemem.Bytes(0, len(dst)+total+more), dst...)
	}
	offs := make([]int, len(est)+1)
	offs[0] = len(dst)
	for k, n := range est {
		offs[k+1] = offs[k] + n
	}
	full := dst[:cap(dst)]
	got := make([][]byte, len(est))
	par.Each(len(est), func(k int) {
		got[k] = render(k, full[offs[k]:offs[k]:offs[k+1]])
	})
	pos := len(dst)
	for k, b := range got {
		switch {
		case inRegion(b, full, offs[k], est[k]):
			copy(full[pos:], b) // down, over room left before: never past offs[k+1]
		case pos+len(b) <= offs[k+1]:
			copy(full[pos:], b) // an outgrown run, in the room left before it
			copied += len(b)
		default:
			// No room: the page so far and the runs left go to a new buffer.
			rest := 0
			for _, r := range got[k:] {
				rest += len(r)
			}
			copied += pos + rest
			grown := append(hugemem.Bytes(0, pos+rest+more), full[:pos]...)
			for _, r := range got[k:] {
				grown = append(grown, r...)
			}
			return grown, copied
		}
		pos += len(b)
	}
	return full[:pos], copied
}

// inRegion tells whether b is still in the region of full it was given
// (from off, n bytes long): empty, or starting there with capacity n.
func inRegion(b, full []byte, off, n int) bool {
	if len(b) == 0 {
		return true
	}
	return cap(b) == n && &b[0] == &full[off]
}

// fitted is page, copied into a buffer of its exact size when the room
// left unused at its end is more than a quarter of it (estimates that were
// far off): what the cache counts is the length.
func fitted(page []byte, copied int) ([]byte, int) {
	if cap(page)-len(page) <= len(page)/4 {
		return page, copied
	}
	return append(hugemem.Bytes(0, len(page)), page...), copied + len(page)
}
