package view

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/tree"
)

// deepLine is a message whose content is an array nested depth deep.
func deepLine(depth int) []byte {
	return []byte(`{"role":"user","content":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
}

func deepStore(t testing.TB) sessionControl[*tree.PreparedLine] {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", "s.jsonl"), []byte(`{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}`+"\n"), 0o644)
	v := New(Options{SessionsDir: dir, CacheBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return appendControl(newSessionRef(v, "p", "s"))
}

// runLines carries out lines through c as a transaction's commit does,
// after checks that returned state (nil: none).
func runLines(c sessionControl[*tree.PreparedLine], state any, lines ...[]byte) error {
	x := c.s.v.newTxn(nil, c, Caller{})
	sp := x.NewSpill()
	defer sp.Close()
	for _, l := range lines {
		sp.Add(l)
	}
	_, err := c.Run(x, state, sp)
	return err
}

// checkLines checks lines through c as a transaction's write does.
func checkLines(c sessionControl[*tree.PreparedLine], lines ...[]byte) (any, error) {
	return c.Check(c.s.v.newTxn(nil, c, Caller{}), nil, 0, lines)
}

func benchDeep(b *testing.B, depth int) {
	c := deepStore(b)
	line := deepLine(depth)
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		if err := runLines(c, nil, line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendDeep10k(b *testing.B)  { benchDeep(b, 10_000) }
func BenchmarkAppendDeep100k(b *testing.B) { benchDeep(b, 100_000) }

// TestAppendDeep: append takes a message nested 100k deep, as arrays and
// as objects, alone and as a transaction (checked as written, its entry
// appended at commit as the check built it), and the session reads it back
// whole.
func TestAppendDeep(t *testing.T) {
	const depth = 100_000
	c := deepStore(t)
	objects := []byte(`{"role":"user","content":[{"type":"text","text":"deep","x":` + strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + `}]}`)
	for _, line := range [][]byte{deepLine(depth), objects} {
		if err := runLines(c, nil, line); err != nil {
			t.Fatal(err)
		}
		state, err := checkLines(c, line)
		if err != nil {
			t.Fatal(err)
		}
		if err := runLines(c, state, line); err != nil {
			t.Fatal(err)
		}
	}
	err := c.s.with(func(ss *session) error {
		if n := len(ss.Tree.Entries()); n != 4 {
			t.Errorf("%d entries, want 4", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
