//go:build !linux

package search

// lowerPriority does nothing where threads have no priority of their own.
func lowerPriority() {}
