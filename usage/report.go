package usage

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
)

// Session is what a report needs of one session file.
type Session struct {
	// Project is the project folder the mount shows the session in.
	Project string
	// File is the session's folder name: the file name without .jsonl.
	File string
	// Path orders sessions created at the same time; "" means Project/File.
	Path string
	// ID, Cwd and ParentSession come from the header; Name is the session's
	// name (pi's /name), "" when unnamed.
	ID, Name, Cwd, ParentSession string
	// Created is the header's timestamp in ms since the epoch, NaN when it
	// is not a valid date.
	Created float64
	// Records are the session's records in file order (Collector.Records).
	Records []Record
	// Tools are its tool records in file order (ToolCollector.Records).
	Tools []ToolRecord
}

// NewSession fills a Session from a session file's header.
func NewSession(project, path string, h *sessions.Header, name string, records []Record) Session {
	s := Session{Project: project, Path: path, Name: name, Records: records, Created: math.NaN()}
	s.File = baseName(path)
	if h != nil {
		s.ID, s.Cwd = h.ID, h.Cwd
		if jsjson.KindOf(h.ParentSession) == jsjson.String {
			s.ParentSession, _ = jsjson.Unquote(h.ParentSession)
		}
		if jsjson.KindOf(h.Timestamp) == jsjson.String {
			s.Created = jsjson.DateValue(h.Timestamp)
		}
	}
	return s
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			path = path[i+1:]
			break
		}
	}
	if n := len(path) - len(".jsonl"); n >= 0 && path[n:] == ".jsonl" {
		path = path[:n]
	}
	return path
}

func (s *Session) orderPath() string {
	if s.Path != "" {
		return s.Path
	}
	return s.Project + "/" + s.File
}

// Totals are token and cost sums over a set of records.
type Totals struct {
	Input, Output, CacheRead, CacheWrite float64
	// Total is Input+Output+CacheRead+CacheWrite, summed after the columns
	// (as pi sums them).
	Total float64
	Cost  float64
	// Messages is the number of records counted.
	Messages int
}

func (t *Totals) add(r *Record) {
	t.Input += r.Input
	t.Output += r.Output
	t.CacheRead += r.CacheRead
	t.CacheWrite += r.CacheWrite
	t.Cost += r.Cost
	t.Messages++
}

func (t *Totals) finish() { t.Total = t.Input + t.Output + t.CacheRead + t.CacheWrite }

// ModelCost is one model's share of a row.
type ModelCost struct {
	Model string // "provider/model"
	Cost  float64
	Total float64 // tokens
}

// Row is one line of the daily, monthly or models report.
type Row struct {
	// Key is the day (2006-01-02), the month (2006-01) or the model
	// ("provider/model"); "unknown" for records without a valid time.
	Key string
	// Provider and Model are set in model rows.
	Provider, Model string
	Totals
	// Models are the models used, most expensive first, with their share
	// (in day and month rows).
	Models []ModelCost
}

// SessionRow is one line of the sessions report.
type SessionRow struct {
	Project, File, ID, Name, Cwd, ParentSession string
	Created                                     float64
	// Pi are pi's /session totals: every record of the file.
	Pi Totals
	// Own are the records this session is the first to hold, the share
	// that store, project, day, month and model totals count.
	Own Totals
	// Models are the models of all the session's records, sorted.
	Models []string
}

// Report is the usage of one scope: the whole store or one project.
type Report struct {
	// TimeZone names the zone days and months are in (IANA name, or UTC).
	TimeZone string
	Daily    []Row
	Monthly  []Row
	Models   []Row
	Sessions []SessionRow
	// Total counts each model call once.
	Total Totals
	// Tools are the tool use rows, by day, project, tool and model;
	// ToolTotals their sums. Each call and result is counted once, as
	// model calls are.
	Tools      []ToolRow
	ToolTotals ToolCounts
	loc        *time.Location
}

// Reports are the store's report and one per project.
type Reports struct {
	Root     *Report
	Projects map[string]*Report
}

// callKey identifies one model call. A clone or fork copies an entry with
// its id and timestamp; the rest of the key makes two different calls that
// share an id (8 hex digits in pi 3) and a millisecond practically never
// equal.
type callKey struct {
	id              string
	time            uint64 // bits of Record.Time, so that NaN equals itself
	provider, model string
	input, output   float64
	cacheRead       float64
	cacheWrite      float64
	cost            float64
}

func keyOf(r *Record) callKey {
	return callKey{r.ID, math.Float64bits(r.Time), r.Provider, r.Model,
		r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Cost}
}

// sharedCalls returns the hashes of each record (numbered in the order
// given) and the set of hashes that may belong to a call held more than
// once: only those records need the exact check of a map of call keys. A
// bitmap that fits the cache finds the repeats (and a few false ones) at a
// fraction of the cost of a map of every key.
func sharedCalls(list []Session, order []int, n int) (hashes []uint64, repeats *hashSet) {
	hashes = make([]uint64, 0, n)
	for _, i := range order {
		for j := range list[i].Records {
			hashes = append(hashes, callHash(&list[i].Records[j]))
		}
	}
	return hashes, repeatsOf(hashes)
}

// repeatsOf returns the set of hashes that may occur more than once
// among hashes (nil when none does).
func repeatsOf(hashes []uint64) *hashSet {
	n := len(hashes)
	bits := uint(16)
	for 1<<bits < 32*n && bits < 30 {
		bits++
	}
	seen := make([]uint64, 1<<bits/64)
	mask := uint64(1)<<bits - 1
	set := map[uint64]struct{}{}
	for _, h := range hashes {
		k := h & mask
		if seen[k/64]&(1<<(k%64)) != 0 {
			set[h] = struct{}{}
		}
		seen[k/64] |= 1 << (k % 64)
	}
	if len(set) == 0 {
		return nil
	}
	// The repeats' own bitmap is small enough to stay in the cache while
	// every record is checked against it.
	bits = 12
	for 1<<bits < 32*len(set) && bits < 30 {
		bits++
	}
	repeats := &hashSet{bits: make([]uint64, 1<<bits/64), mask: uint64(1)<<bits - 1, set: set}
	for h := range set {
		k := h & repeats.mask
		repeats.bits[k/64] |= 1 << (k % 64)
	}
	return repeats
}

// hashSet is a set of hashes with a bitmap in front, which answers most
// "not in it" without touching the map.
type hashSet struct {
	bits []uint64
	mask uint64
	set  map[uint64]struct{}
}

func (s *hashSet) has(h uint64) bool {
	if s == nil {
		return false
	}
	k := h & s.mask
	if s.bits[k/64]&(1<<(k%64)) == 0 {
		return false
	}
	_, ok := s.set[h]
	return ok
}

// callHash hashes part of what identifies a call, cheaply: equal keys give
// equal hashes; the rare unequal keys with equal hashes are told apart
// later.
func callHash(r *Record) uint64 {
	const m = 0x9e3779b97f4a7c15
	h := uint64(len(r.ID))
	for i := 0; i < len(r.ID); i++ {
		h = (h ^ uint64(r.ID[i])) * 0x100000001b3
	}
	for _, f := range [...]float64{r.Input, r.Output, r.Cost} {
		h = (h ^ math.Float64bits(f+0)) * m // +0: -0 is 0, as in the key
		h ^= h >> 29
	}
	h = (h ^ math.Float64bits(r.Time)) * m // as in the key, NaN's bits included
	return h ^ h>>29
}

// Build makes the reports of a store from all its sessions, days and months
// in loc (time.Local when nil). The result does not depend on the order of
// list. It keeps no reference to list.
func Build(list []Session, loc *time.Location) *Reports {
	if loc == nil {
		loc = time.Local
	}
	zone := ZoneName(loc)
	order := make([]int, len(list))
	n := 0
	for i := range order {
		order[i] = i
		n += len(list[i].Records)
	}
	slices.SortFunc(order, func(a, b int) int {
		sa, sb := &list[a], &list[b]
		if c := cmpTime(sa.Created, sb.Created); c != 0 {
			return c
		}
		if c := cmp.Compare(sa.orderPath(), sb.orderPath()); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // same path twice: keep input order
	})

	b := builder{loc: loc, seen: map[callKey]struct{}{}, labels: map[[2]string]string{}}
	hashes, repeats := sharedCalls(list, order, n)
	seq := 0 // the record's number in hashes
	root := newScope()
	projects := map[string]*scope{}
	for _, i := range order {
		s := &list[i]
		ps := projects[s.Project]
		if ps == nil {
			ps = newScope()
			projects[s.Project] = ps
		}
		row := SessionRow{Project: s.Project, File: s.File, ID: s.ID, Name: s.Name,
			Cwd: s.Cwd, ParentSession: s.ParentSession, Created: s.Created}
		var models []string
		for j := range s.Records {
			r := &s.Records[j]
			row.Pi.add(r)
			lab := b.label(r)
			if !slices.Contains(models, lab) {
				models = append(models, lab)
			}
			h := hashes[seq]
			seq++
			if repeats.has(h) {
				k := keyOf(r)
				if _, dup := b.seen[k]; dup {
					continue
				}
				b.seen[k] = struct{}{}
			}
			row.Own.add(r)
			day, month := b.period(r.Time)
			root.add(r, lab, day, month)
			ps.add(r, lab, day, month)
		}
		row.Pi.finish()
		row.Own.finish()
		slices.Sort(models)
		row.Models = models
		root.sessions = append(root.sessions, row)
		ps.sessions = append(ps.sessions, row)
	}
	out := &Reports{Root: root.report(zone, loc), Projects: make(map[string]*Report, len(projects))}
	for p, ps := range projects {
		out.Projects[p] = ps.report(zone, loc)
	}
	b.tools(list, order, out)
	return out
}

// cmpTime orders times, NaN (no valid time) last.
func cmpTime(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

type builder struct {
	loc    *time.Location
	seen   map[callKey]struct{}
	labels map[[2]string]string
	// the last label made, and the last day looked up ([from, to) in ms)
	lastPM     [2]string
	lastLabel  string
	from, to   float64
	day, month int32
}

func (b *builder) label(r *Record) string {
	pm := [2]string{r.Provider, r.Model}
	if pm == b.lastPM && b.lastLabel != "" {
		return b.lastLabel
	}
	l, ok := b.labels[pm]
	if !ok {
		l = label(r.Provider, r.Model)
		b.labels[pm] = l
	}
	b.lastPM, b.lastLabel = pm, l
	return l
}

// period returns the day (yyyymmdd) and month (yyyymm) of a time in the
// report's zone; 0 for no valid time. The last day's bounds are kept, since
// a session's records come in time order.
func (b *builder) period(ms float64) (day, month int32) {
	if math.IsNaN(ms) {
		return 0, 0
	}
	if b.to > b.from && ms >= b.from && ms < b.to {
		return b.day, b.month
	}
	t := time.UnixMilli(int64(ms)).In(b.loc)
	y, m, d := t.Date()
	start := time.Date(y, m, d, 0, 0, 0, 0, b.loc)
	end := time.Date(y, m, d+1, 0, 0, 0, 0, b.loc)
	b.from, b.to = float64(start.UnixMilli()), float64(end.UnixMilli())
	b.day = int32(y*10000 + int(m)*100 + d)
	b.month = int32(y*100 + int(m))
	return b.day, b.month
}

// bucket accumulates one row.
type bucket struct {
	Totals
	provider, model string
	models          map[string]*ModelCost
	last            *ModelCost
}

func (k *bucket) add(r *Record, lab string) {
	k.Totals.add(r)
	if k.models == nil {
		return
	}
	mc := k.last
	if mc == nil || mc.Model != lab {
		mc = k.models[lab]
		if mc == nil {
			mc = &ModelCost{Model: lab}
			k.models[lab] = mc
		}
		k.last = mc
	}
	mc.Cost += r.Cost
	mc.Total += r.Input + r.Output + r.CacheRead + r.CacheWrite
}

// scope accumulates one report.
type scope struct {
	total    Totals
	daily    map[int32]*bucket
	monthly  map[int32]*bucket
	models   map[string]*bucket
	sessions []SessionRow
	// the buckets of the previous record, which the next one usually shares
	lastDay, lastMonth int32
	dayB, monthB       *bucket
	lastLabel          string
	modelB             *bucket
}

func newScope() *scope {
	return &scope{daily: map[int32]*bucket{}, monthly: map[int32]*bucket{}, models: map[string]*bucket{}}
}

func (s *scope) add(r *Record, lab string, day, month int32) {
	s.total.add(r)
	if s.dayB == nil || day != s.lastDay {
		s.dayB = periodBucket(s.daily, day)
		s.lastDay = day
	}
	s.dayB.add(r, lab)
	if s.monthB == nil || month != s.lastMonth {
		s.monthB = periodBucket(s.monthly, month)
		s.lastMonth = month
	}
	s.monthB.add(r, lab)
	if s.modelB == nil || lab != s.lastLabel {
		s.modelB = s.models[lab]
		if s.modelB == nil {
			s.modelB = &bucket{provider: r.Provider, model: r.Model}
			s.models[lab] = s.modelB
		}
		s.lastLabel = lab
	}
	s.modelB.add(r, lab)
}

func periodBucket(m map[int32]*bucket, k int32) *bucket {
	b := m[k]
	if b == nil {
		b = &bucket{models: map[string]*ModelCost{}}
		m[k] = b
	}
	return b
}

func (s *scope) report(zone string, loc *time.Location) *Report {
	r := &Report{TimeZone: zone, loc: loc, Sessions: s.sessions, Total: s.total}
	r.Total.finish()
	if r.Sessions == nil {
		r.Sessions = []SessionRow{}
	}
	r.Daily = periodRows(s.daily, func(k int32) string {
		return pad(int(k/10000), 4) + "-" + pad(int(k/100%100), 2) + "-" + pad(int(k%100), 2)
	})
	r.Monthly = periodRows(s.monthly, func(k int32) string {
		return pad(int(k/100), 4) + "-" + pad(int(k%100), 2)
	})
	r.Models = make([]Row, 0, len(s.models))
	for lab, b := range s.models {
		b.finish()
		r.Models = append(r.Models, Row{Key: lab, Provider: b.provider, Model: b.model, Totals: b.Totals})
	}
	slices.SortFunc(r.Models, func(a, b Row) int {
		if c := cmp.Compare(b.Cost, a.Cost); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return r
}

// periodRows sorts day or month buckets by time, the unknown one last.
func periodRows(m map[int32]*bucket, name func(int32) string) []Row {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 && keys[0] == 0 {
		keys = append(keys[1:], 0)
	}
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		b := m[k]
		b.finish()
		row := Row{Key: Unknown, Totals: b.Totals}
		if k != 0 {
			row.Key = name(k)
		}
		for _, mc := range b.models {
			row.Models = append(row.Models, *mc)
		}
		slices.SortFunc(row.Models, func(a, b ModelCost) int {
			if c := cmp.Compare(b.Cost, a.Cost); c != 0 {
				return c
			}
			return cmp.Compare(a.Model, b.Model)
		})
		rows = append(rows, row)
	}
	return rows
}

// pad formats a non-negative number with at least n digits (years before
// 1000 keep 4 digits; negative years do not occur in pi's dates).
func pad(v, n int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	var buf [12]byte
	i := len(buf)
	for v > 0 || i > len(buf)-n {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}
