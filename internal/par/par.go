// Package par runs independent calls on every core.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(0) … fn(n-1) on as many goroutines as there are cores and
// returns when all calls have. The calls must be independent.
func Each(n int, fn func(i int)) {
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
