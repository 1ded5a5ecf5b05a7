package render

import "testing"

// BenchmarkIndentReuse indents the big session's context into a buffer
// kept from one run to the next: the walk alone, without a new buffer's
// allocation and page faults, which dominate BenchmarkIndent.
func BenchmarkIndentReuse(b *testing.B) {
	raw := big(b).Context().JSON()
	dst := Indent(nil, raw)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = Indent(dst[:0], raw)
	}
}

// BenchmarkTranscriptReuse renders the big session's transcript.md entry
// by entry into a buffer kept from one run to the next.
func BenchmarkTranscriptReuse(b *testing.B) {
	path := big(b).LeafPath()
	dst := Transcript(path)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = dst[:0]
		for _, e := range path {
			dst = AppendEntryMarkdown(dst, e)
		}
	}
}

// BenchmarkTranscriptHTMLReuse does the same for the entries' pieces of
// transcript.html.
func BenchmarkTranscriptHTMLReuse(b *testing.B) {
	path := big(b).LeafPath()
	dst := TranscriptHTML(PageOf(big(b)), path)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = dst[:0]
		for _, e := range path {
			dst = AppendEntryHTML(dst, e)
		}
	}
}
