package tree_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

var (
	bigOnce sync.Once
	bigData []byte
)

// big is a ~100 MB session of 60,000 entries.
func big(b *testing.B) []byte {
	bigOnce.Do(func() {
		f, err := os.CreateTemp("", "pifs-bench-*.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		defer os.Remove(f.Name())
		if err := gen.Session(f, 60000, 1650); err != nil {
			b.Fatal(err)
		}
		f.Close()
		bigData, _ = os.ReadFile(f.Name())
	})
	return bigData
}

func writeBig(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "big.jsonl")
	if err := os.WriteFile(p, big(b), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkOpenContext: parse a 100 MB session and build the context at its
// leaf, as pifs does when context.json is first read.
func BenchmarkOpenContext(b *testing.B) {
	p := writeBig(b)
	b.SetBytes(int64(len(big(b))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := sessions.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		_ = tree.New(l).Context().JSON()
	}
}

// BenchmarkRereadAfterAppend: the same session after one more entry: only the
// new bytes are parsed, then the context is built again.
func BenchmarkRereadAfterAppend(b *testing.B) {
	p := writeBig(b)
	l, err := sessions.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	tr := tree.New(l)
	_ = tr.Context().JSON()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bl := tr.NewBuilder()
		bl.UserText("one more", 1)
		if err := sessions.Append(p, bl.Lines...); err != nil {
			b.Fatal(err)
		}
		n := len(l.Entries)
		if reset, err := l.Refresh(); err != nil || reset {
			b.Fatal("unexpected reset", err)
		}
		tr.Add(l.Entries[n:]...)
		_ = tr.Context().JSON()
	}
}

// BenchmarkParse: the parser alone, from memory.
func BenchmarkParse(b *testing.B) {
	data := big(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sessions.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilesAt: files.txt's lists of the leaf's path of a 100 MB
// session of 60,000 entries, as its first `ls -l` sizes them.
func BenchmarkFilesAt(b *testing.B) {
	l, err := sessions.Open(writeBig(b))
	if err != nil {
		b.Fatal(err)
	}
	t := tree.New(l)
	b.SetBytes(int64(len(big(b))))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.FilesAt("")
	}
}
