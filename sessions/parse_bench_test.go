package sessions

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/pifs/pifs/internal/gen"
)

// BenchmarkParseChunk parses generated sessions of a few sizes line by line
// and in pieces, to choose the size from which consume parses in pieces
// (parallelMin) and how many (piecesFor).
func BenchmarkParseChunk(b *testing.B) {
	for _, kib := range []int{16, 64, 256, 1024} {
		var buf bytes.Buffer
		if err := gen.Session(&buf, kib*1024/1650, 1650); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		for _, pieces := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("%dKiB/%d", kib, pieces), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := parseIn(data, pieces); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
