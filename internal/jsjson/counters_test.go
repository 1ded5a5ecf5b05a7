package jsjson

import (
	"sync/atomic"
	"testing"
)

// TestCounters: the exported integer fields of a struct, and its
// atomic.Int64 ones when it is given by pointer, in order, named with a
// lower-case first letter; unexported fields and fields of other types
// left out.
func TestCounters(t *testing.T) {
	type counts struct {
		Listings int64
		hidden   int64
		Name     string
		Small    int32
		Loads    atomic.Int64
		ÉtéCount int
	}
	c := &counts{Listings: 3, hidden: 9, Name: "x", Small: -2, ÉtéCount: 1 << 40}
	c.Loads.Store(7)
	if got, want := string(Counters(c)), `{"listings":3,"small":-2,"loads":7,"étéCount":1099511627776}`; got != want {
		t.Errorf("by pointer: %s, want %s", got, want)
	}
	var plain struct{ A, B int }
	plain.A = 1
	if got, want := string(Counters(plain)), `{"a":1,"b":0}`; got != want {
		t.Errorf("by value: %s, want %s", got, want)
	}
	if got := string(Counters(struct{}{})); got != "{}" {
		t.Errorf("no counters: %s", got)
	}
}
