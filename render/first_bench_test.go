package render

import (
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// BenchmarkFirstTranscriptHTML is a first read of transcript.html, as
// BenchmarkFirstTranscript is of transcript.md: parse, build the tree,
// render the page at the leaf. The page may cost at most twice what
// transcript.md costs.
func BenchmarkFirstTranscriptHTML(b *testing.B) {
	big(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := sessions.Parse(bigData)
		if err != nil {
			b.Fatal(err)
		}
		t := tree.New(l)
		TranscriptHTML(PageOf(t), t.LeafPath())
	}
}
