package usage

import (
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/persist"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// factRecords names a version's records among its file's facts
// (sessions.File.Fact): kept with the version, in the persistent cache
// when the mount has one, so that the reports of an unchanged store read
// no session again after a remount.
const factRecords = "usage.records"

// scanned is what a scan of a version found, and where it can go on from
// when the file grows: the records and the name as of its complete lines
// (upTo is the offset past the last one; 0: it cannot go on), and what
// the final line without a newline, which may still grow, added.
type scanned struct {
	records []Record // all of them, the final line's last
	partial int      // how many of records the final line gave
	name    string   // the last session_info's, the final line's included
	// complete is the name as of the complete lines.
	complete string
	upTo     int64
}

// ScanFile is Scan of a session the index knows, once per version of its
// file: what an earlier scan of this version kept (in this mount or, with
// a persistent cache, an earlier one) is taken as it is, and a file that
// only grew since an earlier mount's scan is read from where that scan
// stopped. What it finds is kept with the version.
func ScanFile(f *sessions.File) (records []Record, name string, err error) {
	if s, ok := kept(f); ok {
		return s.records, s.name, nil
	}
	var from scanned
	if b, size, ok := f.EarlierFact(factRecords); ok {
		if s, ok := decodeScanned(b); ok && s.upTo > 0 && s.upTo <= size {
			from = s
			from.records = from.records[:len(from.records)-from.partial]
			from.partial, from.name = 0, from.complete
		}
	}
	f.CountRead()
	var c Collector
	s := scanned{name: from.complete, complete: from.complete}
	c.records = append(c.records, from.records...)
	_, end, err := sessions.ScanFrom(f.Path, from.upTo, mayCount, func(e *sessions.Entry, complete bool) {
		if e.Type == schema.TypeSessionInfo {
			n, _ := e.Str("name")
			s.name = jsjson.Trim(n)
			if complete {
				s.complete = s.name
			}
			return
		}
		before := len(c.records)
		c.Add(e)
		if !complete {
			s.partial += len(c.records) - before
		}
	})
	if err != nil {
		return nil, "", err
	}
	s.records, s.upTo = c.kept(), max(end, 0)
	f.SetFact(factRecords, s.encode())
	return s.records, s.name, nil
}

// Kept returns the records and the name kept for this version of a
// session's file (by ScanFile or KeepParsed), without reading it: ok false
// when none are.
func Kept(f *sessions.File) (records []Record, name string, ok bool) {
	s, ok := kept(f)
	return s.records, s.name, ok
}

// KeepParsed keeps the records and the name of a version of a session's
// file that a parse found (see Records), for Kept.
func KeepParsed(f *sessions.File, records []Record, name string) {
	s := scanned{records: records, name: name, complete: name}
	f.SetFact(factRecords, s.encode())
}

func kept(f *sessions.File) (scanned, bool) {
	b, ok := f.Fact(factRecords)
	if !ok {
		return scanned{}, false
	}
	return decodeScanned(b)
}

// encode lays the scan out: upTo, the names, the partial count, the
// providers and models once each, then each record.
func (s *scanned) encode() []byte {
	var e persist.Encoder
	e.Varint(s.upTo)
	e.String(s.name)
	e.String(s.complete)
	e.Uvarint(uint64(s.partial))
	names := map[string]uint64{}
	var table []string
	index := func(n string) uint64 {
		i, ok := names[n]
		if !ok {
			i = uint64(len(table))
			names[n] = i
			table = append(table, n)
		}
		return i
	}
	for i := range s.records {
		index(s.records[i].Provider)
		index(s.records[i].Model)
	}
	e.Uvarint(uint64(len(table)))
	for _, n := range table {
		e.String(n)
	}
	e.Uvarint(uint64(len(s.records)))
	for i := range s.records {
		r := &s.records[i]
		e.String(r.ID)
		e.Float64(r.Time)
		e.Uvarint(index(r.Provider))
		e.Uvarint(index(r.Model))
		e.Float64(r.Input)
		e.Float64(r.Output)
		e.Float64(r.CacheRead)
		e.Float64(r.CacheWrite)
		e.Float64(r.Cost)
	}
	return e.Data()
}

func decodeScanned(b []byte) (scanned, bool) {
	d := persist.NewDecoder(b)
	s := scanned{upTo: d.Varint(), name: d.Text(), complete: d.Text(), partial: int(d.Uvarint())}
	nt := d.Uvarint()
	if d.Err() != nil || nt > uint64(len(b)) {
		return scanned{}, false
	}
	table := make([]string, nt)
	for i := range table {
		table[i] = d.Text()
	}
	n := d.Uvarint()
	if d.Err() != nil || n > uint64(len(b)) || uint64(s.partial) > n {
		return scanned{}, false
	}
	bad := false
	name := func() string {
		i := d.Uvarint()
		if i >= uint64(len(table)) {
			bad = true
			return ""
		}
		return table[i]
	}
	s.records = make([]Record, n)
	for i := range s.records {
		r := &s.records[i]
		r.ID = d.Text()
		r.Time = d.Float64()
		r.Provider = name()
		r.Model = name()
		r.Input = d.Float64()
		r.Output = d.Float64()
		r.CacheRead = d.Float64()
		r.CacheWrite = d.Float64()
		r.Cost = d.Float64()
		r.Total = r.Input + r.Output + r.CacheRead + r.CacheWrite
	}
	if bad || d.Err() != nil || d.Len() != 0 {
		return scanned{}, false
	}
	return s, true
}
