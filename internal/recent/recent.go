// Package recent keeps the values last made for a few keys, so that a
// listing and the lookups and reads that follow it make a value once.
package recent

import "sync"

// Max bounds the values a Cache keeps.
const Max = 16

// Cache keeps the last Max values made, by key. The zero Cache is ready.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	by    map[K]V
	order []K // oldest first
}

// Get is the value kept for k, or else what make gives, then kept
// (errors are not kept).
func (c *Cache[K, V]) Get(k K, make func() (V, error)) (V, error) {
	if v, ok := c.Peek(k); ok {
		return v, nil
	}
	v, err := make()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[K]V{}
	}
	if kept, ok := c.by[k]; ok {
		return kept, nil
	}
	if len(c.order) >= Max {
		delete(c.by, c.order[0])
		c.order = c.order[1:]
	}
	c.by[k], c.order = v, append(c.order, k)
	return v, nil
}

// Peek is the value kept for k, if there is one.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.by[k]
	return v, ok
}

// Len is how many values are kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.by)
}
