package usage_test

import (
	"fmt"
	"time"

	"github.com/pifs/pifs/usage"
)

// A clone repeats its parent's calls: the store's days count them once, in
// the original; the clone's row shows pi's totals and its own share.
func Example() {
	call := func(id, at string, cost float64) usage.Record {
		t, _ := time.Parse(time.RFC3339, at)
		return usage.Record{ID: id, Time: float64(t.UnixMilli()), Provider: "anthropic", Model: "claude-sonnet-4-5",
			Input: 1000, Output: 100, Total: 1100, Cost: cost}
	}
	a1, a2 := call("a1", "2025-05-12T22:30:00Z", 0.25), call("a2", "2025-05-13T09:00:00Z", 0.5)
	list := []usage.Session{
		{Project: "--home-user-proj--", File: "original", Created: 1747000000000, Records: []usage.Record{a1}},
		{Project: "--home-user-other--", File: "clone", Created: 1747100000000, ParentSession: "original",
			Records: []usage.Record{a1, a2}},
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	r := usage.Build(list, berlin)
	daily, _ := r.Root.File("daily.csv", time.Now())
	fmt.Print(string(daily))
	for _, s := range r.Root.Sessions {
		fmt.Printf("%s: pi %v, own %v\n", s.File, s.Pi.Cost, s.Own.Cost)
	}
	fmt.Println(r.Projects["--home-user-proj--"].Total.Cost+r.Projects["--home-user-other--"].Total.Cost == r.Root.Total.Cost)
	// Output:
	// date,timeZone,input,output,cacheRead,cacheWrite,total,cost,messages,models
	// 2025-05-13,Europe/Berlin,2000,200,0,0,2200,0.75,2,anthropic/claude-sonnet-4-5
	// original: pi 0.25, own 0.25
	// clone: pi 0.75, own 0.5
	// true
}
