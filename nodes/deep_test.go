package nodes

import (
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deepLine is a message whose content is an array nested depth deep.
func deepLine(depth int) []byte {
	return []byte(`{"role":"user","content":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
}

func deepStore(t testing.TB) sessionControl {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", "s.jsonl"), []byte(`{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}`+"\n"), 0o644)
	r := NewRoot(Options{SessionsDir: dir, CacheSize: 4, Logger: log.New(io.Discard, "", 0)})
	return sessionControl{sessionRef{r, "p", "s"}, appendName, appendLine}
}

func benchDeep(b *testing.B, depth int) {
	c := deepStore(b)
	line := deepLine(depth)
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		if _, err := c.run([][]byte{line}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendDeep10k(b *testing.B)  { benchDeep(b, 10_000) }
func BenchmarkAppendDeep100k(b *testing.B) { benchDeep(b, 100_000) }
