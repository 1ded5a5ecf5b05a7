package render

import (
	"sync"

	"github.com/pifs/pifs/internal/par"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The sizes of the transcripts, for stat: each is counted by rendering the
// page's pieces (head, one per entry, foot) one at a time into one scratch
// buffer and adding up their lengths, so that the code that counts is the
// code that renders, and counting holds at most the largest piece, never
// the whole view.

// scratch holds the buffers that sizes render pieces into; it keeps no
// state a caller can see. A buffer that grew past maxScratch (one huge
// entry) is let go rather than kept.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxScratch = 1 << 20

func getScratch() *[]byte { return scratch.Get().(*[]byte) }

func putScratch(bp *[]byte) {
	if cap(*bp) <= maxScratch {
		*bp = (*bp)[:0]
		scratch.Put(bp)
	}
}

// TranscriptSize is len(Transcript(path)), counted without building it.
func TranscriptSize(path []*sessions.Entry) int64 {
	return transcriptSize(path, partsFor(rawBytes(path), textMinBytes))
}

func transcriptSize(path []*sessions.Entry, parts int) int64 {
	return countTranscript(path, parts).Size()
}

// partSizes are the lengths of the transcripts of the parts of path that
// bounds cut (see pathParts), counted on every core.
func partSizes(path []*sessions.Entry, bounds []int) []int64 {
	sizes := make([]int64, len(bounds)-1)
	par.Each(len(sizes), func(k int) {
		bp := getScratch()
		defer putScratch(bp)
		for _, e := range path[bounds[k]:bounds[k+1]] {
			*bp = AppendEntryMarkdown((*bp)[:0], e)
			sizes[k] += int64(len(*bp))
		}
	})
	return sizes
}

// TranscriptHTMLSize is len(TranscriptHTML(p, path)), counted without
// building it.
func TranscriptHTMLSize(p Page, path []*sessions.Entry) int64 {
	return transcriptHTMLSize(p, path, partsFor(rawBytes(path), htmlMinBytes))
}

func transcriptHTMLSize(p Page, path []*sessions.Entry, parts int) int64 {
	return pageHTMLSize(p, path, nil, "", parts)
}

// pageHTMLSize is len(pageHTML(p, path, t, parts)), counted a piece at a
// time; home is as SessionHTMLSize's.
func pageHTMLSize(p Page, path []*sessions.Entry, t *tree.Tree, home string, parts int) int64 {
	if t != nil {
		return countSessionPage(t, home, parts).Size()
	}
	b := pathParts(path, parts)
	sizes := make([]int64, len(b)-1)
	sums := make([]partSummary, len(b)-1)
	par.Each(len(sizes), func(k int) {
		bp := getScratch()
		defer putScratch(bp)
		sums[k].keepOrder(len(sums) > 1, b[k+1]-b[k])
		for _, e := range path[b[k]:b[k+1]] {
			*bp = appendSummed((*bp)[:0], e, &sums[k])
			sizes[k] += int64(len(*bp))
		}
	})
	bp := getScratch()
	defer putScratch(bp)
	*bp = HTMLHead((*bp)[:0], p)
	n := int64(len(*bp))
	*bp = htmlFoot((*bp)[:0], path, sumParts(sums))
	n += int64(len(*bp))
	for _, k := range sizes {
		n += k
	}
	return n
}
