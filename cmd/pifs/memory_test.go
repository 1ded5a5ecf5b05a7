package main

import (
	"runtime"
	"testing"
	"time"
)

func TestNextSqueeze(t *testing.T) {
	const base = 800 // wants a room of 100
	for _, c := range []struct{ squeezed, room, want int64 }{
		{0, 100, 0},     // room enough
		{0, 40, 60},     // 60 short
		{60, 40, 120},   // still short: more
		{350, 0, 400},   // at most half the base
		{120, 150, 120}, // within twice the room wanted: kept
		{120, 230, 40},  // 80 more than one and a half times it back
		{40, 800, 0},    // all of it back
	} {
		if got := nextSqueeze(c.squeezed, c.room, base); got != c.want {
			t.Errorf("nextSqueeze(%d, room %d, base %d) = %d, want %d", c.squeezed, c.room, base, got, c.want)
		}
	}
}

// TestWatchAfterGC: a collection that leaves the heap less room under the
// limit than it wants makes the watcher squeeze the cache, and one that
// leaves plenty gives it back: the hook on the runtime's collections
// fires, and the measures it reads are the heap's.
func TestWatchAfterGC(t *testing.T) {
	got := make(chan int64, 16)
	squeeze := func(n int64) { got <- n }
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = byte(i)
	}
	tight := &memory{base: 64 << 20, limit: 64 << 20}
	tight.watch(squeeze)
	roomy := &memory{base: 64 << 30, limit: 64 << 30, squeezed: 10 << 20}
	roomy.watch(squeeze)
	want := map[bool]bool{true: false, false: false} // squeezed, given back
	deadline := time.After(30 * time.Second)
	for !want[true] || !want[false] {
		runtime.GC()
		select {
		case n := <-got:
			if n < 0 || n > 32<<20 {
				t.Fatalf("squeezed %d bytes, want 0 to half the base", n)
			}
			want[n > 0] = true
		case <-deadline:
			t.Fatalf("after collections: squeezed %v, given back %v", want[true], want[false])
		case <-time.After(100 * time.Millisecond):
		}
	}
	runtime.KeepAlive(live)
}
