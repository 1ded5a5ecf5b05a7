package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/gen"
)

// TestFillRuns: runs that fit their regions are packed in order in the
// buffer given, nothing copied; a run that outgrows its region is copied
// into the room the runs before it left, or, with no room, the page goes
// to a new buffer; either way the bytes are the runs in order.
func TestFillRuns(t *testing.T) {
	cases := []struct {
		name   string
		est    []int
		sizes  []int
		copies bool // a run or the page copied into a new buffer
		moved  bool // the page
	}{
		{"all fit", []int{10, 20, 30}, []int{5, 20, 1}, false, false},
		{"empty runs", []int{0, 4, 0}, []int{0, 3, 0}, false, false},
		{"one outgrows into room left", []int{10, 10, 10}, []int{2, 15, 10}, true, false},
		{"one outgrows, no room", []int{10, 10, 10}, []int{10, 11, 3}, true, true},
		{"last outgrows", []int{10, 10}, []int{10, 40}, true, true},
		{"zero estimate", []int{0, 0}, []int{3, 0}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := []byte("head:")
			total := 0
			for _, n := range c.est {
				total += n
			}
			dst := append(make([]byte, 0, len(head)+total), head...)
			want := append([]byte(nil), head...)
			for k, n := range c.sizes {
				want = append(want, strings.Repeat(string(rune('a'+k)), n)...)
			}
			got, copied := fillRuns(dst, c.est, 7, func(k int, buf []byte) []byte {
				return append(buf, strings.Repeat(string(rune('a'+k)), c.sizes[k])...)
			})
			if !bytes.Equal(got, want) {
				t.Fatalf("got %q, want %q", got, want)
			}
			if (copied > 0) != c.copies {
				t.Fatalf("copied %d bytes, want copies: %v", copied, c.copies)
			}
			if same := &got[0] == &dst[:1][0]; same == c.moved {
				t.Fatalf("result in the buffer given: %v, want %v", same, !c.moved)
			}
			if c.moved && cap(got)-len(got) < 7 {
				t.Fatalf("a new buffer keeps %d bytes of room, want 7", cap(got)-len(got))
			}
		})
	}
	// dst without room for the runs grows first, once.
	got, copied := fillRuns([]byte("h"), []int{4, 4}, 0, func(k int, buf []byte) []byte { return append(buf, "xy"...) })
	if string(got) != "hxyxy" || copied != 1 {
		t.Fatalf("grown: %q, %d copied", got, copied)
	}
}

// TestPageInOneBuffer: the session page of generated sessions, cut into
// parts, is rendered into the one buffer made for it (no byte copied into
// a second), holds the same bytes as the page made in one part, and
// keeps at most a quarter of its length unused.
func TestPageInOneBuffer(t *testing.T) {
	for _, n := range []int{300, 5000} {
		var buf bytes.Buffer
		if err := gen.Session(&buf, n, 1650); err != nil {
			t.Fatal(err)
		}
		tr := parseTree(t, buf.String())
		whole, _ := renderPage(PageOf(tr), tr.LeafPath(), tr, 1)
		for _, k := range []int{1, 4, 64} {
			name := fmt.Sprintf("gen %d in %d parts", n, k)
			page, copied := renderPage(PageOf(tr), tr.LeafPath(), tr, k)
			if !bytes.Equal(page, whole) {
				t.Fatalf("%s: the page differs from the one made in one part", name)
			}
			if copied != 0 {
				t.Errorf("%s: %d bytes copied into a new buffer", name, copied)
			}
			if cap(page)-len(page) > len(page)/4 {
				t.Errorf("%s: %d bytes, %d unused", name, len(page), cap(page)-len(page))
			}
			if int64(len(page)) != SessionHTMLSize(tr, "") {
				t.Errorf("%s: %d bytes, counted %d", name, len(page), SessionHTMLSize(tr, ""))
			}
		}
	}
}
