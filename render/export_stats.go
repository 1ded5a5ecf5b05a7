package render

import (
	"bytes"
	"math"
	mathbig "math/big"
	"runtime"
	"strconv"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/par"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// The session page's head shows the whole session's stats as pi's own
// exported page computes them (computeStats in its template): over every
// entry of the file, the messages by role, the tool calls, the tokens
// (input ↑, output ↓, cache read R, cache write W) and the cost of the
// assistant messages, and the models that answered. They are not
// /session's totals: the page counts only what assistant messages report.

// exportStats are the numbers of pi's exported page's header.
type exportStats struct {
	user, assistant, toolResults, custom, compactions, branchSummaries, toolCalls int
	input, output, cacheRead, cacheWrite                                          float64
	cost                                                                          float64
	models                                                                        []string // "provider/model", in order of first answer
}

// exportStatsKey is the key of a tree's exportStats in its FilterAll
// selector's Memo: the page's size and its rendering share them.
type exportStatsKey struct{}

// statsOf is the exportStats of t, worked out once per version of the tree.
func statsOf(t *tree.Tree) *exportStats {
	all := t.Selector(t.FileLeafID(), tree.FilterAll)
	return all.Memo(exportStatsKey{}, func() any {
		s := countExportStats(t.Entries())
		// The page's tool calls are /session's (the same filter of each
		// answer's content), counted once for the page and info.json.
		s.toolCalls = t.Counts().ToolCalls
		return s
	}).(*exportStats)
}

// countExportStats counts entries in parts on every core when there are
// many; the sums are added in the file's order, as pi adds them.
func countExportStats(entries []*sessions.Entry) *exportStats {
	parts := 1
	if len(entries) >= parEntryMin {
		parts = runtime.GOMAXPROCS(0) * partsPerCore
	}
	return countExportStatsIn(entries, parts)
}

func countExportStatsIn(entries []*sessions.Entry, parts int) *exportStats {
	b := par.Ranges(len(entries), parts, func(int) int { return 1 })
	runs := make([]exportRun, len(b)-1)
	for k := range runs {
		runs[k].keep = len(runs) > 1
	}
	par.Each(len(runs), func(k int) {
		for _, e := range entries[b[k]:b[k+1]] {
			runs[k].add(e)
		}
	})
	s := &exportStats{}
	seen := map[string]bool{}
	for _, r := range runs {
		s.user += r.user
		s.assistant += r.assistant
		s.toolResults += r.toolResults
		s.custom += r.custom
		s.compactions += r.compactions
		s.branchSummaries += r.branchSummaries
		if !r.keep {
			s.input, s.output, s.cacheRead, s.cacheWrite, s.cost = r.sum.in, r.sum.out, r.sum.cr, r.sum.cw, r.sum.cost
		}
		for _, u := range r.usages {
			s.input += u.in
			s.output += u.out
			s.cacheRead += u.cr
			s.cacheWrite += u.cw
			if u.hasCost {
				s.cost += u.cost
			}
		}
		for _, m := range r.models {
			if !seen[m] {
				seen[m] = true
				s.models = append(s.models, m)
			}
		}
	}
	return s
}

// exportRun is what a run of entries adds to the stats: with keep (one
// run of several), its usages kept in order, to be added with the other
// runs' in the file's order; without, added up in sum as they come.
type exportRun struct {
	keep                                                               bool
	sum                                                                exportUsage
	user, assistant, toolResults, custom, compactions, branchSummaries int
	usages                                                             []exportUsage
	models                                                             []string
	seen                                                               map[string]bool
	lastProvider, lastModel                                            []byte
}

// exportUsage is what one assistant message's usage adds.
type exportUsage struct {
	in, out, cr, cw, cost float64
	hasCost               bool
}

func (r *exportRun) add(e *sessions.Entry) {
	switch e.Type {
	case schema.TypeCompaction:
		r.compactions++
	case schema.TypeBranchSummary:
		r.branchSummaries++
	case schema.TypeCustomMessage:
		r.custom++
	case schema.TypeMessage:
		switch e.Role {
		case schema.RoleUser:
			r.user++
		case schema.RoleToolResult:
			r.toolResults++
		case schema.RoleAssistant:
			r.assistant++
			r.model(e.MsgProvider, e.MsgModel)
			if jsjson.Truthy(e.MsgUsage) {
				if u := exportUsageOf(e.MsgUsage); r.keep {
					r.usages = append(r.usages, u)
				} else {
					r.sum.in += u.in
					r.sum.out += u.out
					r.sum.cr += u.cr
					r.sum.cw += u.cw
					if u.hasCost {
						r.sum.cost += u.cost
					}
				}
			}
		}
	}
}

// model adds "provider/model" (the model alone without a provider) when
// the message names a model, as pi's page does. Answers mostly name the
// model the one before named: that is seen without making its name.
func (r *exportRun) model(provider, model []byte) {
	if !jsjson.Truthy(model) || r.seen != nil && bytes.Equal(provider, r.lastProvider) && bytes.Equal(model, r.lastModel) {
		return
	}
	r.lastProvider, r.lastModel = provider, model
	name := jsString(model)
	if jsjson.Truthy(provider) {
		name = jsString(provider) + "/" + name
	}
	if !r.seen[name] {
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		r.seen[name] = true
		r.models = append(r.models, name)
	}
}

// exportUsageOf reads a usage as pi's page does: each count `|| 0` (a
// number, else 0), and when the cost is there, its total when that is a
// number, else the sum of its parts.
func exportUsageOf(v []byte) exportUsage {
	d, total := tree.DecodeUsage(v)
	u := exportUsage{in: d.Input, out: d.Output, cr: d.CacheRead, cw: d.CacheWrite, cost: d.Cost, hasCost: total}
	if total {
		return u
	}
	// No number for a total: what the cost's parts add up to, if any.
	cost := jsjson.Get(v, "cost")
	if !jsjson.Truthy(cost) {
		return u
	}
	u.hasCost, u.cost = true, 0
	for it := jsjson.IterMembers(cost); it.Next(); {
		switch string(it.Name()) {
		case "input", "output", "cacheRead", "cacheWrite":
			u.cost += orZero(it.Value())
		}
	}
	return u
}

// orZero is a number's value; 0 for any other value (pi's `x || 0` on
// numbers).
func orZero(v []byte) float64 {
	if jsjson.KindOf(v) != jsjson.Number {
		return 0
	}
	return jsjson.NumberValue(v)
}

// appendExportStats appends the stats as pi's page's header lists them.
func appendExportStats(dst []byte, s *exportStats) []byte {
	dst = append(dst, "<dl class=\"stats\">\n<dt>models</dt><dd>"...)
	if len(s.models) == 0 {
		dst = append(dst, "unknown"...)
	}
	for i, m := range s.models {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = escapeHTML(dst, []byte(m))
	}
	dst = append(dst, "</dd>\n<dt>messages</dt><dd>"...)
	n := len(dst)
	for _, p := range []struct {
		n    int
		what string
	}{{s.user, "user"}, {s.assistant, "assistant"}, {s.toolResults, "tool results"}, {s.custom, "custom"},
		{s.compactions, "compactions"}, {s.branchSummaries, "branch summaries"}} {
		if p.n == 0 {
			continue
		}
		if len(dst) > n {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendInt(dst, int64(p.n), 10)
		dst = append(append(dst, ' '), p.what...)
	}
	if len(dst) == n {
		dst = append(dst, '0')
	}
	dst = append(dst, "</dd>\n<dt>tool calls</dt><dd>"...)
	dst = strconv.AppendInt(dst, int64(s.toolCalls), 10)
	dst = append(dst, "</dd>\n<dt>tokens</dt><dd>"...)
	n = len(dst)
	for _, p := range []struct {
		mark string
		v    float64
	}{{"↑", s.input}, {"↓", s.output}, {"R", s.cacheRead}, {"W", s.cacheWrite}} {
		if p.v == 0 || math.IsNaN(p.v) {
			continue
		}
		if len(dst) > n {
			dst = append(dst, ' ')
		}
		dst = appendTokens(append(dst, p.mark...), p.v)
	}
	if len(dst) == n {
		dst = append(dst, '0')
	}
	dst = append(dst, "</dd>\n<dt>cost</dt><dd>$"...)
	dst = appendToFixed(dst, s.cost, 3)
	return append(dst, "</dd>\n</dl>\n"...)
}

// appendTokens writes a token count as pi's page does (formatTokens):
// 999, 1.2k, 45k, 1.5M.
func appendTokens(dst []byte, v float64) []byte {
	switch {
	case v < 1000:
		return appendJSNumber(dst, v)
	case v < 10000:
		return append(appendToFixed(dst, v/1000, 1), 'k')
	case v < 1000000:
		return append(appendJSNumber(dst, jsRound(v/1000)), 'k')
	}
	return append(appendToFixed(dst, v/1000000, 1), 'M')
}

// appendToFixed writes x as JavaScript's x.toFixed(digits) does: the
// decimal nearest to x's exact value, a tie going to the larger, for
// |x| < 1e21 (beyond, the number as it prints).
func appendToFixed(dst []byte, x float64, digits int) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1e21 {
		return appendJSNumber(dst, x)
	}
	if x < 0 {
		dst = append(dst, '-')
	}
	r := new(mathbig.Rat).SetFloat64(math.Abs(x))
	scale := new(mathbig.Int).Exp(mathbig.NewInt(10), mathbig.NewInt(int64(digits)), nil)
	r.Mul(r, new(mathbig.Rat).SetInt(scale))
	// n = floor(r + 1/2): the nearest, a tie up.
	r.Add(r, mathbig.NewRat(1, 2))
	s := new(mathbig.Int).Quo(r.Num(), r.Denom()).String()
	for len(s) <= digits {
		s = "0" + s
	}
	dst = append(dst, s[:len(s)-digits]...)
	if digits > 0 {
		dst = append(append(dst, '.'), s[len(s)-digits:]...)
	}
	return dst
}
