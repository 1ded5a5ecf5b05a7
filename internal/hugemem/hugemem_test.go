package hugemem

import (
	"bytes"
	"testing"
)

// TestBytes checks that a buffer asked for huge pages is an ordinary
// buffer: its length, capacity and zero content, and that it holds what is
// written to it, at every size around Min.
func TestBytes(t *testing.T) {
	for _, c := range []int{0, 1, Min - 1, Min, Min + 4095, 3 * Min} {
		b := Bytes(c/2, c)
		if len(b) != c/2 || cap(b) != c {
			t.Fatalf("Bytes(%d, %d): len %d cap %d", c/2, c, len(b), cap(b))
		}
		b = b[:c]
		if bytes.IndexFunc(b, func(r rune) bool { return r != 0 }) >= 0 {
			t.Fatalf("Bytes(_, %d) is not zero", c)
		}
		for i := range b {
			b[i] = byte(i)
		}
		for i := range b {
			if b[i] != byte(i) {
				t.Fatalf("Bytes(_, %d)[%d] = %d after writing %d", c, i, b[i], byte(i))
			}
		}
	}
}
