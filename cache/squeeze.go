package cache

// What the cache counts is what it holds, not what the process's memory
// costs for it: the collector's heap has holes where objects were freed
// among others still live (a walk leaves a third of the heap so, measured
// at 10,000 sessions), and the heap's limit covers those too. When the
// cache fills its budget and the holes fill the rest of the limit, every
// allocation starts a collection of the whole heap: a mount idles at
// 40% of a core. The process's memory watcher asks the cache to give up
// what the holes take (Squeeze), so that the collector keeps room to
// work in.

// Squeeze sets how many bytes the cache keeps below its budget (the most
// it gives up is half of it) and drops what that leaves over: the least
// recently used sessions that trim may drop.
func (c *Cache) Squeeze(n int64) {
	c.squeeze.Store(min(max(n, 0), c.budget/2))
	c.mu.Lock()
	c.trim(nil)
	c.mu.Unlock()
	c.shed()
}
