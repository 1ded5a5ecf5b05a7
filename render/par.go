package render

import (
	"runtime"

	"github.com/pifs/pifs/internal/hugemem"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// A big view is counted and rendered on every core. Each entry's piece of
// a transcript depends on that entry only, and so does each message's
// piece of context.json, so a path is cut into contiguous runs of about
// equal raw bytes, each run is counted (or rendered into its own buffer)
// on its own goroutine, and the results are added up (or copied one after
// the other into a buffer of the exact size). The one state a page
// carries across entries is the HTML foot's totals: each run keeps the
// usages it met, in order, and they are added up afterwards in the path's
// order, because adding floating-point costs in another order can change
// the last digit of a total.

// A path smaller than these many raw bytes is done on the caller's
// goroutine, where starting others would cost more than it saves.
// BenchmarkParts on generated sessions, with the second core free: from
// about 256 KiB of entries every view is done faster in parts (a third
// less time), at 133 KiB all are slower; with the second core busy
// elsewhere, parts cost more at 512 KiB too, and transcript.md and
// context.json cost a third of what transcript.html costs per byte, so
// they wait for twice the size. A part is never smaller than parPartBytes.
const (
	htmlMinBytes = 256 << 10
	textMinBytes = 512 << 10
	parPartBytes = 64 << 10
)

// partsPerCore: a path is cut into more parts than there are cores, so
// that a core slowed by other work does not hold up the whole view.
const partsPerCore = 2

// partsFor is how many parts a path (or a context's messages) of n raw
// bytes is cut into, when paths from least bytes on are cut.
func partsFor(n, least int) int {
	if n < least {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0)*partsPerCore, n/parPartBytes))
}

// rawBytes is the size of a path's entries in the file.
func rawBytes(path []*sessions.Entry) int {
	n := 0
	for _, e := range path {
		n += len(e.Raw)
	}
	return n
}

// pathParts cuts path into at most parts runs of about equal raw bytes.
func pathParts(path []*sessions.Entry, parts int) []int {
	return par.Ranges(len(path), parts, func(i int) int { return len(path[i].Raw) })
}

// concat copies bufs one after the other into one buffer of their total
// size, on every core: the copy is most of what rendering in parts costs
// more than rendering in one (touching a new 100 MB buffer's pages
// included).
func concat(bufs ...[]byte) []byte {
	offs := make([]int, len(bufs)+1)
	for k, b := range bufs {
		offs[k+1] = offs[k] + len(b)
	}
	out := hugemem.Bytes(offs[len(bufs)], offs[len(bufs)])
	par.Each(len(bufs), func(k int) { copy(out[offs[k]:], bufs[k]) })
	return out
}

// parEntryMin is the least number of entries whose usage totals are
// decoded in parts.
const parEntryMin = 2048

// usageTotals is tree.Tree.Usage over entries (all of a file's), decoded on
// every core when there are many.
func usageTotals(entries []*sessions.Entry) schema.Usage {
	parts := 1
	if len(entries) >= parEntryMin {
		parts = runtime.GOMAXPROCS(0) * partsPerCore
	}
	return usageTotalsIn(entries, parts)
}

func usageTotalsIn(entries []*sessions.Entry, parts int) schema.Usage {
	var sum schema.Usage
	if parts <= 1 {
		for _, e := range entries {
			if u, ok := tree.EntryUsage(e); ok {
				sum.Add(u)
			}
		}
		return sum.Finish()
	}
	b := par.Ranges(len(entries), parts, func(int) int { return 1 })
	found := make([][]schema.Usage, len(b)-1)
	par.Each(len(found), func(k int) {
		for _, e := range entries[b[k]:b[k+1]] {
			if u, ok := tree.EntryUsage(e); ok {
				found[k] = append(found[k], u)
			}
		}
	})
	for _, us := range found {
		for _, u := range us {
			sum.Add(u)
		}
	}
	return sum.Finish()
}
