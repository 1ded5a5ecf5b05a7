package main

import (
	"runtime"
	"testing"
)

// TestSpareProc: one P more than the default, and none when $GOMAXPROCS
// is set.
func TestSpareProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "")
	n := runtime.GOMAXPROCS(0)
	spareProc()
	if got := runtime.GOMAXPROCS(0); got != n+1 {
		t.Errorf("GOMAXPROCS %d, want %d", got, n+1)
	}
	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	spareProc()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("with $GOMAXPROCS=1: %d, want 1", got)
	}
}
