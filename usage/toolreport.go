package usage

import (
	"cmp"
	"math"
	"slices"
)

// tools.csv and tools.json: tool calls, results and errors by day,
// project, tool and model. A row's calls are the toolCall blocks of its
// model's assistant messages that day (pi's /session toolCalls), results
// the tool results answering them that day (pi's toolResults) and errors
// those of the results that are errors. The rows come by date (the
// "unknown" day last), project, tool and model; a project's report has
// its own rows only. Like model calls, a call or a result that a fork or a
// clone copies is counted once, in the first session holding it.

// ToolFiles are the names of the tool reports, for a usage folder's
// listing beside Files; Report.File renders them.
var ToolFiles = []string{"tools.csv", "tools.json"}

// ToolCounts are the calls, results and errors of a row.
type ToolCounts struct {
	Calls, Results, Errors int
}

func (c *ToolCounts) add(k uint8) {
	switch k {
	case ToolCall:
		c.Calls++
	case ToolResult:
		c.Results++
	case ToolError:
		c.Results++
		c.Errors++
	}
}

// ToolRow is one line of tools.csv.
type ToolRow struct {
	// Day is the date (2006-01-02), "unknown" for records without a valid
	// time.
	Day                  string
	Project, Tool, Model string
	ToolCounts
}

// toolKey identifies one tool record across copies of its entry.
type toolKey struct {
	id          string
	time        uint64
	tool, model string
	call        uint32
	n           uint16
	kind        uint8
}

func toolKeyOf(r *ToolRecord) toolKey {
	return toolKey{r.ID, math.Float64bits(r.Time), r.Tool, r.Model, r.Call, r.N, r.Kind}
}

func toolHash(r *ToolRecord) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(r.ID))
	for i := 0; i < len(r.ID); i++ {
		h = (h ^ uint64(r.ID[i])) * 0x100000001b3
	}
	h = (h ^ math.Float64bits(r.Time)) * m
	h ^= h >> 29
	h = (h ^ (uint64(r.Call)<<24 | uint64(r.N)<<8 | uint64(r.Kind))) * m
	return h ^ h>>29
}

// tools adds the tool rows to the reports of out, the sessions taken in
// order.
func (b *builder) tools(list []Session, order []int, out *Reports) {
	var hashes []uint64
	for _, i := range order {
		for j := range list[i].Tools {
			hashes = append(hashes, toolHash(&list[i].Tools[j]))
		}
	}
	repeats := repeatsOf(hashes)
	seen := map[toolKey]struct{}{}
	type rowKey struct {
		day                  int32
		project, tool, model string
	}
	rows := map[rowKey]*ToolCounts{}
	seq := 0
	for _, i := range order {
		s := &list[i]
		for j := range s.Tools {
			r := &s.Tools[j]
			h := hashes[seq]
			seq++
			if repeats.has(h) {
				k := toolKeyOf(r)
				if _, dup := seen[k]; dup {
					continue
				}
				seen[k] = struct{}{}
			}
			day, _ := b.period(r.Time)
			k := rowKey{day, s.Project, r.Tool, r.Model}
			c := rows[k]
			if c == nil {
				c = &ToolCounts{}
				rows[k] = c
			}
			c.add(r.Kind)
		}
	}
	keys := make([]rowKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		if a.day != b.day {
			switch {
			case a.day == 0:
				return 1
			case b.day == 0:
				return -1
			}
			return cmp.Compare(a.day, b.day)
		}
		return cmp.Or(cmp.Compare(a.project, b.project), cmp.Compare(a.tool, b.tool), cmp.Compare(a.model, b.model))
	})
	for _, r := range append([]*Report{out.Root}, mapValues(out.Projects)...) {
		r.Tools = []ToolRow{}
	}
	for _, k := range keys {
		c := rows[k]
		day := Unknown
		if k.day != 0 {
			day = pad(int(k.day/10000), 4) + "-" + pad(int(k.day/100%100), 2) + "-" + pad(int(k.day%100), 2)
		}
		row := ToolRow{Day: day, Project: k.project, Tool: k.tool, Model: k.model, ToolCounts: *c}
		for _, r := range []*Report{out.Root, out.Projects[k.project]} {
			r.Tools = append(r.Tools, row)
			r.ToolTotals.Calls += c.Calls
			r.ToolTotals.Results += c.Results
			r.ToolTotals.Errors += c.Errors
		}
	}
}

func mapValues(m map[string]*Report) []*Report {
	out := make([]*Report, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	return out
}

var toolColumns = []string{"calls", "results", "errors"}

func (r *Report) toolTable() table {
	t := table{columns: append([]string{"date", "timeZone", "project", "tool", "model"}, toolColumns...),
		totalColumns: toolColumns,
		totals:       []cell{count(r.ToolTotals.Calls), count(r.ToolTotals.Results), count(r.ToolTotals.Errors)}}
	for _, row := range r.Tools {
		t.rows = append(t.rows, []cell{str(row.Day), str(r.TimeZone), str(row.Project), str(row.Tool), str(row.Model),
			count(row.Calls), count(row.Results), count(row.Errors)})
	}
	return t
}
