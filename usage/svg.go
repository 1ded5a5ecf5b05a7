package usage

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// ChartDays is how many days daily.svg shows, ending today.
const ChartDays = 90

// chartModels is how many models get their own color; the rest are "other".
const chartModels = 8

// palette holds colors told apart with most color vision (Tableau 10);
// the last is for "other".
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

const (
	svgW, svgH                   = 1000, 500
	plotL, plotR, plotT, plotB   = 72, 980, 96, 440
	titleY, legendY, legendStepY = 30, 58, 20
)

// DailySVG draws the cost of each of the last ChartDays days up to now's day
// in loc (daily rows as in Report.Daily) as bars stacked by model, the most
// expensive model at the bottom, with a legend and axes. The SVG is
// self-contained: no script, no external reference. Hovering a bar shows its
// day, model and cost (SVG <title>).
func DailySVG(rows []Row, now time.Time, loc *time.Location) []byte {
	if loc == nil {
		loc = time.Local
	}
	now = now.In(loc)
	y, m, d := now.Date()
	first := time.Date(y, m, d-(ChartDays-1), 12, 0, 0, 0, loc)
	days := make([]time.Time, ChartDays)
	index := map[string]int{}
	for i := range days {
		days[i] = time.Date(first.Year(), first.Month(), first.Day()+i, 12, 0, 0, 0, loc)
		index[days[i].Format("2006-01-02")] = i
	}

	// Costs per day and model over the window; models ranked by their cost.
	perDay := make([]map[string]float64, ChartDays)
	modelCost := map[string]float64{}
	var total float64
	for _, r := range rows {
		i, ok := index[r.Key]
		if !ok {
			continue
		}
		if perDay[i] == nil {
			perDay[i] = map[string]float64{}
		}
		for _, mc := range r.Models {
			perDay[i][mc.Model] += mc.Cost
			modelCost[mc.Model] += mc.Cost
			total += mc.Cost
		}
	}
	models := make([]string, 0, len(modelCost))
	for k := range modelCost {
		models = append(models, k)
	}
	slices.SortFunc(models, func(a, b string) int {
		if c := cmp.Compare(modelCost[b], modelCost[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	const other = "other models"
	shown := models
	if len(models) > chartModels+1 {
		shown = append(slices.Clip(models[:chartModels]), other)
		for _, k := range models[chartModels:] {
			modelCost[other] += modelCost[k]
		}
		for _, pd := range perDay {
			if pd == nil {
				continue
			}
			for _, k := range models[chartModels:] {
				if c, ok := pd[k]; ok {
					pd[other] += c
				}
			}
		}
	}
	color := func(i int) string {
		if shown[i] == other {
			return palette[len(palette)-1]
		}
		return palette[i%(len(palette)-1)]
	}

	var maxDay float64
	for _, pd := range perDay {
		var s float64
		for _, k := range shown {
			s += max(0, pd[k])
		}
		maxDay = max(maxDay, s)
	}
	step, top := ticks(maxDay)

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="#333">`+"\n", svgW, svgH, svgW, svgH)
	b.WriteString(`<rect width="100%" height="100%" fill="#fff"/>` + "\n")
	title := fmt.Sprintf("Daily cost, last %d days: %s", ChartDays, formatCost(total))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="18" font-weight="600">%s</text>`+"\n", plotL, titleY, esc(title))
	sub := fmt.Sprintf("%s to %s, days in %s", days[0].Format("Jan 2"), days[ChartDays-1].Format("Jan 2, 2006"), ZoneName(loc))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#777">%s</text>`+"\n", plotR, titleY, esc(sub))

	// Legend, wrapping onto a second line when needed.
	x, ly := plotL, legendY
	for i, k := range shown {
		text := k + " " + formatCost(modelCost[k])
		w := 22 + int(float64(len(text))*6.6) + 18
		if x+w > plotR && x > plotL {
			x, ly = plotL, ly+legendStepY
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" rx="2" fill="%s"/>`, x, ly-10, color(i))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+17, ly, esc(text))
		x += w
	}
	if len(shown) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#777">no usage in these days</text>`+"\n", plotL, legendY)
	}
	plotTop := max(plotT, ly+18)

	// Cost axis: grid lines and labels.
	yOf := func(c float64) float64 {
		return float64(plotB) - c/top*float64(plotB-plotTop)
	}
	for c := 0.0; c <= top+step/2; c += step {
		yy := yOf(c)
		stroke := "#e5e5e5"
		if c == 0 {
			stroke = "#999"
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>`, plotL, yy, plotR, yy, stroke)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#666">%s</text>`+"\n", plotL-6, yy+4, esc(formatTick(c, step)))
	}

	// Bars, and date labels on the 1st and 15th of each month.
	slot := float64(plotR-plotL) / ChartDays
	bw := math.Max(1, slot*0.78)
	for i, day := range days {
		x0 := float64(plotL) + float64(i)*slot + (slot-bw)/2
		if day.Day() == 1 || day.Day() == 15 {
			cx := x0 + bw/2
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#999"/>`, cx, plotB, cx, plotB+5)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%s</text>`+"\n", cx, plotB+19, day.Format("Jan 2"))
		}
		base := 0.0
		for j, k := range shown {
			c := perDay[i][k]
			if c <= 0 {
				continue
			}
			y1, y0 := yOf(base+c), yOf(base)
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.2f" width="%.1f" height="%.2f" fill="%s"><title>%s</title></rect>`+"\n",
				x0, y1, bw, math.Max(0.5, y0-y1), color(j), esc(day.Format("Mon Jan 2, 2006")+": "+k+" "+formatCost(c)))
			base += c
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// ticks picks a step of 1, 2 or 5 times a power of ten giving at most six
// intervals, and the axis top (a multiple of it).
func ticks(maxv float64) (step, top float64) {
	if !(maxv > 0) || math.IsInf(maxv, 0) {
		return 0.25, 1
	}
	raw := maxv / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 5, 10} {
		step = f * p
		if step >= raw {
			break
		}
	}
	top = math.Ceil(maxv/step-1e-9) * step
	return step, top
}

// formatTick labels a cost axis tick with the digits its step needs.
func formatTick(c, step float64) string {
	dec := 0
	if step < 1 {
		dec = max(2, int(math.Ceil(-math.Log10(step)-1e-9)))
	}
	return "$" + strconv.FormatFloat(c, 'f', dec, 64)
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
