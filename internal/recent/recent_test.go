package recent

import (
	"errors"
	"testing"
)

// TestCache: a value is made once per key and kept; an error makes none,
// and is not kept; at most Max are kept, the oldest let go first; Peek
// makes nothing.
func TestCache(t *testing.T) {
	var c Cache[string, *int]
	made := 0
	get := func(k string) *int {
		v, err := c.Get(k, func() (*int, error) {
			made++
			n := made
			return &n, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a := get("a")
	if get("a") != a || made != 1 {
		t.Errorf("asked twice: made %d", made)
	}
	if v, ok := c.Peek("a"); !ok || v != a {
		t.Errorf("Peek: %v %v", v, ok)
	}
	if _, ok := c.Peek("b"); ok || made != 1 {
		t.Errorf("Peek of a key not kept: %v, made %d", ok, made)
	}
	if get("b") == a {
		t.Error("b shares a's value")
	}
	for i := range Max {
		get(string(rune('c' + i)))
	}
	made = 0
	get("a")
	if made != 1 || c.Len() > Max {
		t.Errorf("after %d more: made %d again, %d kept", Max, made, c.Len())
	}
	failed := errors.New("disk gone")
	if v, err := c.Get("z", func() (*int, error) { return nil, failed }); v != nil || err != failed {
		t.Errorf("an error: %v %v", v, err)
	}
	if _, ok := c.Peek("z"); ok {
		t.Error("an error is kept")
	}
}
