// Package par runs independent calls on every core.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(0) … fn(n-1) on as many goroutines as there are cores and
// returns when all calls have. The calls must be independent. A single
// call runs on the caller's goroutine.
func Each(n int, fn func(i int)) {
	if n == 1 {
		fn(0)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// Ranges cuts 0…n-1 into at most parts contiguous ranges of about equal
// total weight (weight(i) ≥ 0) and returns their bounds: range k is
// bounds[k] to bounds[k+1]-1. There is always one range at least; only when
// n is 0 is it empty. There is one (bounds 0, n) when parts ≤ 1.
func Ranges(n, parts int, weight func(i int) int) []int {
	parts = max(1, min(parts, n))
	if parts == 1 {
		return []int{0, n}
	}
	total := 0
	for i := range n {
		total += weight(i)
	}
	bounds := make([]int, 1, parts+1)
	sum := 0
	for i := range n {
		// Range k ends after the item that brings the running sum to
		// k/parts of the total; the ranges left must keep an item each.
		sum += weight(i)
		k := len(bounds)
		if k < parts && i+1 < n && (sum*parts >= total*k || n-(i+1) == parts-k) {
			bounds = append(bounds, i+1)
		}
	}
	return append(bounds, n)
}
