package cache

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestWalkGuess: entry folders of walkRun sessions in a row are listed
// with attributes, the next by name alone; a pause longer than walkGap
// starts over, and so does a lookup of a name listed alone, after which
// attributes are given for walkHold.
func TestWalkGuess(t *testing.T) {
	var w WalkGuess
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	walk := func(from, n, stepMs int) string {
		got := ""
		for i := range n {
			alone := w.Listing(fmt.Sprint("s", from+i), at((from+i)*stepMs))
			// A second folder of the same session is no further step.
			if w.Listing(fmt.Sprint("s", from+i), at((from+i)*stepMs)) != alone {
				t.Fatalf("session %d: two folders listed differently", from+i)
			}
			got += map[bool]string{true: "a", false: "+"}[alone]
		}
		return got
	}
	if got := walk(0, 6, 10); got != "+++aaa" {
		t.Errorf("a walk: %s, want +++aaa (+ with attributes, a alone)", got)
	}
	// A pause: the walk is over.
	if got := walk(6+int(walkGap/time.Millisecond)/10+1, 4, 10); got != "+++a" {
		t.Errorf("after a pause: %s, want +++a", got)
	}
	// A lookup of a name listed alone: attributes for walkHold, then a
	// walk still going on is listed alone again.
	w.LookedUp(at(2000))
	hold := int(walkHold / (10 * time.Millisecond))
	if got := walk(201, hold-1, 10); got != strings.Repeat("+", hold-1) {
		t.Errorf("within walkHold of a lookup: %s, want all +", got)
	}
	if got := walk(201+hold, 2, 10); got != "aa" {
		t.Errorf("past walkHold: %s, want aa", got)
	}
}
