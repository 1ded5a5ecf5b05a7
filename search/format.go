package search

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/internal/recent"
)

// How the mount shows an answer: search/<query>/hits (tab-separated),
// hits.json (JSON lines) and search/status. Pure functions of a Result or
// a Progress, so that the view only serves them.

// FolderNote is what the mount's search/README says of the folder, before
// README.
const FolderNote = `The search/ folder (at the mount's root: every project; in a project
folder: that project only)

  search/<query>/            looked up, never listed: the query is the
                             folder's name, / written %2F and % written %25
    <session>                a link to each session with a matching entry,
                             its time the best hit's
    hits                     one line per matching entry, best first:
                             path<TAB>role<TAB>time<TAB>excerpt, the path
                             <project>/<session>/entries/<id>.json under the
                             mount, the time RFC 3339; a first line starting
                             with # when the index is still being built or
                             the answer holds only the best hits
    hits.json                the same, one JSON object a line: project,
                             session, entry, path, role, time, score, excerpt
    error                    instead of all these when the query cannot be
                             read: why (hits is then absent)
  search/status              how far the index is built, or why it is off

Each caller sees only the hits of the sessions they may read.

`

// EntryPath is a hit's entry file under the mount:
// <project>/<session>/entries/<id>.json.
func EntryPath(h Hit) string {
	const ext = ".json"
	return h.Project + "/" + h.Session + "/entries/" + names.EncodeIn(h.Entry, len(ext)) + ext
}

// HitTime is a hit's time in RFC 3339 in loc ("" when the entry has none).
func HitTime(h Hit, loc *time.Location) string {
	if math.IsNaN(h.Time) || math.IsInf(h.Time, 0) {
		return ""
	}
	if loc == nil {
		loc = time.Local
	}
	return time.UnixMilli(int64(h.Time)).In(loc).Format(time.RFC3339)
}

// Caveat is what the first line of hits says of an answer that is not the
// whole of it ("" when it is): the index is being built, the query
// matches more than a query reads, or only the best hits are given.
func Caveat(r *Result) string {
	var says []string
	if !r.Complete {
		says = append(says, "the index is still being built: these are the hits in what is indexed so far (see search/status)")
	}
	switch {
	case r.Visited > 0:
		says = append(says, fmt.Sprintf("the words looked for are in more than %d entries: these are the matches among the newest %d of them, newest first; a narrower query finds all",
			r.Visited, r.Visited))
	case r.More:
		says = append(says, fmt.Sprintf("more than %d entries match: these are of the newest sessions' %d, newest first; a narrower query finds all",
			r.Total, r.Total))
	case len(r.Hits) < r.Total:
		says = append(says, fmt.Sprintf("the best %d of %d matching entries", len(r.Hits), r.Total))
	}
	if len(says) == 0 {
		return ""
	}
	return "# " + strings.Join(says, "; ")
}

// oneLine makes s fit one field of a line: tabs and line breaks become
// spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// HitsTSV is hits: the caveat line when there is one, then one line a hit,
// path, role, time and excerpt separated by tabs.
func HitsTSV(r *Result, loc *time.Location) []byte {
	var b []byte
	if c := Caveat(r); c != "" {
		b = append(b, c...)
		b = append(b, '\n')
	}
	for _, h := range r.Hits {
		b = append(b, oneLine(EntryPath(h))...)
		b = append(b, '\t')
		b = append(b, h.Role...)
		b = append(b, '\t')
		b = append(b, HitTime(h, loc)...)
		b = append(b, '\t')
		b = append(b, oneLine(h.Excerpt)...)
		b = append(b, '\n')
	}
	return b
}

// HitsJSON is hits.json: one JSON object a hit (time null when the entry
// has none).
func HitsJSON(r *Result, loc *time.Location) []byte {
	var b []byte
	for _, h := range r.Hits {
		var o jsjson.Builder
		o.String("project", h.Project)
		o.String("session", h.Session)
		o.String("entry", h.Entry)
		o.String("path", EntryPath(h))
		o.String("role", h.Role)
		if t := HitTime(h, loc); t != "" {
			o.String("time", t)
		} else {
			o.Raw("time", []byte("null"))
		}
		o.Number("score", h.Score)
		o.String("excerpt", h.Excerpt)
		b = append(b, o.Bytes()...)
		b = append(b, '\n')
	}
	return b
}

// Keep is r with only the hits and sessions ok lets through (Total less
// the hits it took out).
func (r *Result) Keep(ok func(project, session string) bool) *Result {
	out := *r
	out.Hits, out.Sessions = nil, nil
	for _, h := range r.Hits {
		if ok(h.Project, h.Session) {
			out.Hits = append(out.Hits, h)
		} else {
			out.Total--
		}
	}
	for _, s := range r.Sessions {
		if ok(s.Best.Project, s.Best.Session) {
			out.Sessions = append(out.Sessions, s)
		}
	}
	return &out
}

// StatusText is search/status: where the index's build stands.
func StatusText(p Progress) string {
	var b strings.Builder
	switch {
	case p.Complete:
		b.WriteString("index complete: every session of the store is indexed\n")
	case !p.Listed:
		b.WriteString("index building: listing the store\n")
	default:
		b.WriteString("index building: queries answer from what is indexed so far\n")
	}
	fmt.Fprintf(&b, "sessions\t%d of %d to index done\n", p.SessionsDone, p.Sessions)
	fmt.Fprintf(&b, "bytes\t%s of %s done\n", mib(p.BytesDone), mib(p.Bytes))
	if p.Rate > 0 {
		fmt.Fprintf(&b, "rate\t%s/s\n", mib(int64(p.Rate)))
	}
	if !p.Complete && p.Left > 0 {
		fmt.Fprintf(&b, "left\t%s\n", p.Left.Round(time.Second))
	}
	return b.String()
}

// mib is a byte count in MiB, one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// StatusOff is search/status of a mount without an index.
func StatusOff(why string) string { return "index off: " + oneLine(why) + "\n" }

// Answer is a query's answer as the mount shows it: hits and hits.json.
type Answer struct {
	Result         *Result
	Hits, HitsJSON []byte
}

// NewAnswer is the answer of res.
func NewAnswer(res *Result, loc *time.Location) *Answer {
	return &Answer{Result: res, Hits: HitsTSV(res, loc), HitsJSON: HitsJSON(res, loc)}
}

// AnswerKey is what an answer depends on: the scope's project, the query,
// which sessions the caller sees (a key of their sight), the index's
// version (Gen) and the store's (which sessions are there to be shown).
type AnswerKey struct {
	Project, Query    string
	Sight, Gen, Store uint64
}

// Answers keeps the last recent.Max answers, so that a listing of a
// query and a read of its hits run it once.
type Answers = recent.Cache[AnswerKey, *Answer]
