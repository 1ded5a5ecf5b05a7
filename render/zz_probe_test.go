package render

import (
	"testing"

	"github.com/pifs/pifs/tree"
)

func BenchmarkZZNav(b *testing.B) {
	t := big(b)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		all := t.Selector(t.FileLeafID(), tree.FilterAll)
		k := sink{b: make([]byte, 0, 20<<20)}
		appendTreeNav(&k, t, all)
	}
}
