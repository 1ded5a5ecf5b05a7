package render

import (
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// BenchmarkFirstTranscriptHTML is a first read of the session folder's
// transcript.html, as BenchmarkFirstTranscript is of transcript.md:
// parse, build the tree, render the session's page. The page may cost at
// most twice what transcript.md costs.
func BenchmarkFirstTranscriptHTML(b *testing.B) {
	big(b)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		l, err := sessions.Parse(bigData)
		if err != nil {
			b.Fatal(err)
		}
		SessionHTML(tree.New(l))
	}
}
