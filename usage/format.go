package usage

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
)

// Files are the names of a usage folder's files, sorted: the listing and
// the names File accepts.
var Files = []string{
	"daily.csv", "daily.json", "daily.svg",
	"models.csv", "models.json",
	"monthly.csv", "monthly.json",
	"sessions.csv", "sessions.json",
}

// File renders one of Files or ToolFiles; ok is false for any other name.
// now is the end of daily.svg's 90 days.
func (r *Report) File(name string, now time.Time) (data []byte, ok bool) {
	base, ext, _ := strings.Cut(name, ".")
	if name == "daily.svg" {
		return DailySVG(r.Daily, now, r.loc), true
	}
	var t table
	switch base {
	case "daily":
		t = r.periodTable("date", r.Daily)
	case "monthly":
		t = r.periodTable("month", r.Monthly)
	case "models":
		t = r.modelTable()
	case "sessions":
		t = r.sessionTable()
	case "tools":
		t = r.toolTable()
	default:
		return nil, false
	}
	switch ext {
	case "csv":
		return t.csv(), true
	case "json":
		return t.json(r), true
	}
	return nil, false
}

// cell is one value of a table: a string, a number or a list of strings.
type cell struct {
	s    string
	f    float64
	kind byte // 's', 'n', 'l'
	list []string
	// extra is raw JSON shown only in the JSON rendering (omitted when nil)
	extra []byte
}

func str(s string) cell     { return cell{kind: 's', s: s} }
func number(f float64) cell { return cell{kind: 'n', f: f} }
func list(l []string) cell  { return cell{kind: 'l', list: l} }
func rawJSON(b []byte) cell { return cell{kind: 'j', extra: b} }
func count(n int) cell      { return number(float64(n)) }
func totalsCells(t Totals) []cell {
	return []cell{number(t.Input), number(t.Output), number(t.CacheRead), number(t.CacheWrite),
		number(t.Total), number(t.Cost), count(t.Messages)}
}

var totalsColumns = []string{"input", "output", "cacheRead", "cacheWrite", "total", "cost", "messages"}

// table is a report as columns and rows, rendered both as CSV and as JSON
// (a JSON row has the CSV columns as keys, plus JSON-only columns whose
// name starts with "json:").
type table struct {
	columns []string
	rows    [][]cell
	// totals are the JSON's totals, named by totalColumns (the report's
	// token totals when nil).
	totalColumns []string
	totals       []cell
}

func (r *Report) periodTable(key string, rows []Row) table {
	t := table{columns: append(append([]string{key, "timeZone"}, totalsColumns...), "models", "json:byModel")}
	for _, row := range rows {
		names := make([]string, len(row.Models))
		var by []byte
		by = append(by, '[')
		for i, mc := range row.Models {
			names[i] = mc.Model
			if i > 0 {
				by = append(by, ',')
			}
			by = append(by, `{"model":`...)
			by = jsjson.Quote(by, mc.Model)
			by = append(by, `,"total":`...)
			by = jsjson.FormatNumber(by, mc.Total)
			by = append(by, `,"cost":`...)
			by = jsjson.FormatNumber(by, mc.Cost)
			by = append(by, '}')
		}
		by = append(by, ']')
		cells := append([]cell{str(row.Key), str(r.TimeZone)}, totalsCells(row.Totals)...)
		t.rows = append(t.rows, append(cells, list(names), rawJSON(by)))
	}
	return t
}

func (r *Report) modelTable() table {
	t := table{columns: append([]string{"provider", "model"}, totalsColumns...)}
	for _, row := range r.Models {
		t.rows = append(t.rows, append([]cell{str(row.Provider), str(row.Model)}, totalsCells(row.Totals)...))
	}
	return t
}

func (r *Report) sessionTable() table {
	cols := []string{"project", "session", "id", "name", "cwd", "parentSession", "created"}
	cols = append(cols, totalsColumns...)
	for _, c := range totalsColumns {
		cols = append(cols, "own"+strings.ToUpper(c[:1])+c[1:])
	}
	t := table{columns: append(cols, "models")}
	for _, s := range r.Sessions {
		created := ""
		if !math.IsNaN(s.Created) {
			created = jsjson.FormatISO(s.Created)
		}
		cells := []cell{str(s.Project), str(s.File), str(s.ID), str(s.Name), str(s.Cwd), str(s.ParentSession), str(created)}
		cells = append(cells, totalsCells(s.Pi)...)
		cells = append(cells, totalsCells(s.Own)...)
		t.rows = append(t.rows, append(cells, list(s.Models)))
	}
	return t
}

func (t table) csv() []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	var rec []string
	for _, c := range t.columns {
		if !strings.HasPrefix(c, "json:") {
			rec = append(rec, c)
		}
	}
	w.Write(rec)
	for _, row := range t.rows {
		rec = rec[:0]
		for _, c := range row {
			switch c.kind {
			case 's':
				rec = append(rec, c.s)
			case 'n':
				if math.IsNaN(c.f) || math.IsInf(c.f, 0) {
					rec = append(rec, "")
				} else {
					rec = append(rec, string(jsjson.FormatNumber(nil, c.f)))
				}
			case 'l':
				rec = append(rec, strings.Join(c.list, " "))
			}
		}
		w.Write(rec)
	}
	w.Flush()
	return buf.Bytes()
}

func (t table) json(r *Report) []byte {
	b := []byte("{\n  \"timeZone\": ")
	b = jsjson.Quote(b, r.TimeZone)
	b = append(b, ",\n  \"totals\": {"...)
	totals, names := t.totals, t.totalColumns
	if totals == nil {
		totals, names = totalsCells(r.Total), totalsColumns
	}
	for i, c := range totals {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = jsjson.Quote(b, names[i])
		b = append(b, ": "...)
		b = jsjson.FormatNumber(b, c.f)
	}
	b = append(b, "},\n  \"rows\": ["...)
	for i, row := range t.rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {"...)
		for j, c := range row {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = jsjson.Quote(b, strings.TrimPrefix(t.columns[j], "json:"))
			b = append(b, ": "...)
			switch c.kind {
			case 's':
				b = jsjson.Quote(b, c.s)
			case 'n':
				b = jsjson.FormatNumber(b, c.f)
			case 'l':
				b = append(b, '[')
				for k, s := range c.list {
					if k > 0 {
						b = append(b, ", "...)
					}
					b = jsjson.Quote(b, s)
				}
				b = append(b, ']')
			case 'j':
				b = append(b, c.extra...)
			}
		}
		b = append(b, '}')
	}
	if len(t.rows) > 0 {
		b = append(b, "\n  "...)
	}
	return append(b, "]\n}\n"...)
}

// ZoneName names a zone for the reports: its IANA name, or for time.Local
// the name of the system's zone ($TZ, /etc/timezone, the /etc/localtime
// link), "Local" when none says.
func ZoneName(loc *time.Location) string {
	if loc == nil || loc == time.Local || loc.String() == "Local" {
		if tz, ok := os.LookupEnv("TZ"); ok {
			tz = strings.TrimPrefix(tz, ":")
			if tz == "" {
				return "UTC"
			}
			if _, after, ok := strings.Cut(tz, "zoneinfo/"); ok {
				return after
			}
			if !strings.HasPrefix(tz, "/") {
				return tz
			}
		}
		if b, err := os.ReadFile("/etc/timezone"); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" {
				return s
			}
		}
		if target, err := os.Readlink("/etc/localtime"); err == nil {
			if _, after, ok := strings.Cut(target, "zoneinfo/"); ok {
				return after
			}
		}
		return "Local"
	}
	return loc.String()
}

// formatCost writes a cost in dollars for people: whole dollars from $100,
// cents from a cent, two significant digits below.
func formatCost(c float64) string {
	switch {
	case c == 0 || math.IsNaN(c) || math.IsInf(c, 0):
		return "$0"
	case c >= 100:
		return "$" + strconv.FormatFloat(c, 'f', 0, 64)
	case c >= 0.01:
		return "$" + strconv.FormatFloat(c, 'f', 2, 64)
	}
	dec := int(math.Ceil(-math.Log10(c))) + 1
	return "$" + strconv.FormatFloat(c, 'f', min(dec, 12), 64)
}
