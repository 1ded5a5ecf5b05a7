package schema

// Usage is the token and cost totals pi's /session shows: over every entry
// of the file, assistant and tool-result messages, usage entries, and the
// usage of compactions and branch summaries.
type Usage struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
	Cost       float64 `json:"cost"`
}

// Add adds v's counts to u; Finish sets the total, once at the end, as pi
// sums the columns first.
func (u *Usage) Add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
	u.Cost += v.Cost
}

// Finish returns u with Total set to the sum of its four counts.
func (u Usage) Finish() Usage {
	u.Total = u.Input + u.Output + u.CacheRead + u.CacheWrite
	return u
}

// CacheHitRate is the share of the prompt tokens read from the cache, in
// percent, as pi's /session shows it beside "Cached:": cacheRead over
// input + cacheRead + cacheWrite, times 100. ok is false where pi shows
// no rate: no prompt tokens, or no cache reads or writes.
func (u Usage) CacheHitRate() (rate float64, ok bool) {
	prompt := u.Input + u.CacheRead + u.CacheWrite
	if !(prompt > 0 && (u.CacheRead > 0 || u.CacheWrite > 0)) {
		return 0, false
	}
	return u.CacheRead / prompt * 100, true
}
