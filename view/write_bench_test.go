package view

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAppendBatch appends batches of 250 JSON messages (one 128 KiB
// write through append) to a growing session.
func BenchmarkAppendBatch(b *testing.B) {
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", "s.jsonl"), []byte(`{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}`+"\n"), 0o644)
	v := New(Options{SessionsDir: dir, CacheBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	c := appendControl(newSessionRef(v, "p", "s"))
	pad := strings.Repeat("y", 480)
	var batch [][]byte
	for i := 0; i < 250; i++ {
		batch = append(batch, []byte(fmt.Sprintf(`{"role":"user","content":"bench %d %s"}`, i, pad)))
	}
	b.SetBytes(int64(len(bytes.Join(batch, []byte{'\n'}))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := runLines(c, nil, batch...); err != nil {
			b.Fatal(err)
		}
	}
}
