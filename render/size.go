package render

import (
	"sync"

	"github.com/pifs/pifs/sessions"
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
	bp := getScratch()
	defer putScratch(bp)
	var n int64
	for _, e := range path {
		*bp = AppendEntryMarkdown((*bp)[:0], e)
		n += int64(len(*bp))
	}
	return n
}

// TranscriptHTMLSize is len(TranscriptHTML(p, path)), counted without
// building it.
func TranscriptHTMLSize(p Page, path []*sessions.Entry) int64 {
	bp := getScratch()
	defer putScratch(bp)
	*bp = HTMLHead((*bp)[:0], p)
	n := int64(len(*bp))
	for _, e := range path {
		*bp = AppendEntryHTML((*bp)[:0], e)
		n += int64(len(*bp))
	}
	*bp = HTMLFoot((*bp)[:0], path)
	return n + int64(len(*bp))
}
