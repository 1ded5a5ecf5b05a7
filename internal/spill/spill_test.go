package spill

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestSpill: a spill gives back the lines it was given, in order, from
// memory under 1 MiB and from its file past it (a line longer than the
// read buffer included), as one batch after a reserved newline; what it
// holds in memory stays under 1 MiB and its buffers; its file has no name
// in the folder and is closed at the end.
func TestSpill(t *testing.T) {
	for _, n := range []int{3, 20000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			var peak int64
			h := &Held{Peak: func(now int64) { peak = max(peak, now) }}
			s := New(dir, h)
			var want [][]byte
			for i := 0; i < n; i++ {
				l := []byte(fmt.Sprintf("line %d %s", i, strings.Repeat("y", i%200)))
				if i == n/2 {
					l = bytes.Repeat([]byte("L"), 200<<10) // past the 64 KiB read buffer
				}
				want = append(want, l)
				s.Add(l)
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			if names, _ := os.ReadDir(dir); len(names) != 0 {
				t.Errorf("%d names in the folder of the spill", len(names))
			}
			if spilled := s.f != nil; spilled != (n > 3) {
				t.Errorf("%d lines: in a file %v", n, spilled)
			}
			for round := 0; round < 2; round++ {
				i := 0
				err := s.Each(func(j int, l []byte) error {
					if j != i || !bytes.Equal(l, want[i]) {
						t.Fatalf("line %d: %.40q, want line %d: %.40q", j, l, i, want[i])
					}
					i++
					return nil
				})
				if err != nil || i != n {
					t.Fatalf("each: %d lines, %v", i, err)
				}
			}
			batch, done, err := s.Batch()
			if err != nil {
				t.Fatal(err)
			}
			if joined := append([]byte{'\n'}, append(bytes.Join(want, []byte{'\n'}), '\n')...); !bytes.Equal(batch, joined) {
				t.Errorf("batch of %d bytes, want %d", len(batch), len(joined))
			}
			done()
			if bound := int64(At + 3*64<<10 + 2*(200<<10)); peak > bound {
				t.Errorf("held %d bytes at most; want at most %d", peak, bound)
			}
			s.Close()
			if h.Now != 0 {
				t.Errorf("%d bytes still counted held after close", h.Now)
			}
			if s.Err() == nil {
				t.Error("a closed spill has no error")
			}
		})
	}
}
