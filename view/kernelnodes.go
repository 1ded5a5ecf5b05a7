package view

// The nodes the kernel holds count against the cache's budget (see package
// cache): the layer that answers the kernel counts them here.

// NodeAdded counts a node the kernel holds.
func (v *View) NodeAdded() { v.cache.NodeAdded() }

// NodeForgotten counts a node the kernel let go.
func (v *View) NodeForgotten() { v.cache.NodeForgotten() }

// ManyNames tells whether a listing of n names has more than the kernel
// could be handed a node for within the budget: such a listing gives its
// names alone (see cache.Cache.ManyNames).
func (v *View) ManyNames(n int) bool { return v.cache.ManyNames(n) }
