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
// no session again after a remount. Its tool records are kept with them
// (the name changed when they joined: an older mount's facts are not
// read as these).
const factRecords = "usage.facts"

// Facts are what the reports need of one version of a session file: its
// usage records, its tool records and its name.
type Facts struct {
	Records []Record
	Tools   []ToolRecord
	Name    string
}

// Bytes is about what the facts hold in memory.
func (x *Facts) Bytes() int64 { return Bytes(x.Records) + ToolBytes(x.Tools) + int64(len(x.Name)) }

// FactsOf returns the facts of a parsed session: the records of its
// entries, and its name (tree.Tree.Name).
func FactsOf(entries []*sessions.Entry, name string) Facts {
	return Facts{Records: Records(entries), Tools: ToolRecords(entries), Name: name}
}

// scanned is what a scan of a version found, and where it can go on from
// when the file grows: the records and the name as of its complete lines
// (upTo is the offset past the last one; 0: it cannot go on), and what
// the final line without a newline, which may still grow, added.
type scanned struct {
	records []Record // all of them, the final line's last
	partial int      // how many of records the final line gave
	// tools are the tool records, toolsPartial of them the final line's;
	// hasTools is false for a record that holds no tool records.
	tools        []ToolRecord
	toolsPartial int
	hasTools     bool
	name         string // the last session_info's, the final line's included
	// complete is the name as of the complete lines.
	complete string
	upTo     int64
}

// ScanFacts reads the facts of a session the index knows, once per
// version of its file and in one read for the usage and the tool records:
// what an earlier scan of this version kept (in this mount or, with a
// persistent cache, an earlier one) is taken as it is, and a file that
// only grew since an earlier mount's scan is read from where that scan
// stopped. What it finds is kept with the version.
func ScanFacts(f *sessions.File) (Facts, error) {
	if s, ok := kept(f); ok && s.hasTools {
		return s.facts(), nil
	}
	var from scanned
	if b, size, ok := f.EarlierFact(factRecords); ok {
		if s, ok := decodeScanned(b); ok && s.upTo > 0 && s.upTo <= size && s.hasTools {
			from = s
			from.records = from.records[:len(from.records)-from.partial]
			from.tools = from.tools[:len(from.tools)-from.toolsPartial]
			from.partial, from.toolsPartial, from.name = 0, 0, from.complete
		}
	}
	f.CountRead()
	s, err := scanFacts(f.Path, from)
	if err != nil {
		return Facts{}, err
	}
	f.SetFact(factRecords, s.encode())
	return s.facts(), nil
}

// scanFacts reads the facts of the session at path, going on from what a
// scan of its complete lines up to from.upTo found (the zero scanned: from
// the start).
func scanFacts(path string, from scanned) (scanned, error) {
	var c Collector
	tc := resume(from.tools)
	s := scanned{name: from.complete, complete: from.complete, hasTools: true}
	c.records = append(c.records, from.records...)
	_, end, err := sessions.ScanFrom(path, from.upTo, mayCountOrUseTool, func(e *sessions.Entry, complete bool) {
		if e.Type == schema.TypeSessionInfo {
			n, _ := e.Str("name")
			s.name = jsjson.Trim(n)
			if complete {
				s.complete = s.name
			}
			return
		}
		before, toolsBefore := len(c.records), len(tc.records)
		c.Add(e)
		tc.Add(e)
		if !complete {
			s.partial += len(c.records) - before
			s.toolsPartial += len(tc.records) - toolsBefore
		}
	})
	if err != nil {
		return scanned{}, err
	}
	s.records, s.tools, s.upTo = c.kept(), tc.kept(), max(end, 0)
	return s, nil
}

func (s *scanned) facts() Facts { return Facts{Records: s.records, Tools: s.tools, Name: s.name} }

// mayCountOrUseTool lets through the lines ScanFacts needs.
func mayCountOrUseTool(line []byte) bool { return mayCount(line) || mayUseTool(line) }

// KeptFacts returns the facts kept for this version of a session's file
// (by ScanFacts or KeepFacts), without reading it: ok false when none are.
func KeptFacts(f *sessions.File) (Facts, bool) {
	s, ok := kept(f)
	if !ok || !s.hasTools {
		return Facts{}, false
	}
	return s.facts(), true
}

// KeepFacts keeps the facts of a version of a session's file that a parse
// found (see FactsOf), for KeptFacts.
func KeepFacts(f *sessions.File, x Facts) {
	s := scanned{records: x.Records, tools: x.Tools, hasTools: true, name: x.Name, complete: x.Name}
	f.SetFact(factRecords, s.encode())
}

func kept(f *sessions.File) (scanned, bool) {
	b, ok := f.Fact(factRecords)
	if !ok {
		return scanned{}, false
	}
	return decodeScanned(b)
}

// encode lays the scan out: upTo, the names, the partial counts, whether
// tools are kept, the providers, models and tools once each, then each
// record and each tool record.
func (s *scanned) encode() []byte {
	var e persist.Encoder
	e.Varint(s.upTo)
	e.String(s.name)
	e.String(s.complete)
	e.Uvarint(uint64(s.partial))
	e.Uvarint(uint64(s.toolsPartial))
	e.Bool(s.hasTools)
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
	for i := range s.tools {
		index(s.tools[i].Tool)
		index(s.tools[i].Model)
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
	e.Uvarint(uint64(len(s.tools)))
	for i := range s.tools {
		r := &s.tools[i]
		e.String(r.ID)
		e.Float64(r.Time)
		e.Uvarint(index(r.Tool))
		e.Uvarint(index(r.Model))
		e.Uvarint(uint64(r.Call))
		e.Uvarint(uint64(r.N))
		e.Uvarint(uint64(r.Kind))
	}
	return e.Data()
}

func decodeScanned(b []byte) (scanned, bool) {
	d := persist.NewDecoder(b)
	s := scanned{upTo: d.Varint(), name: d.Text(), complete: d.Text(), partial: int(d.Uvarint()),
		toolsPartial: int(d.Uvarint()), hasTools: d.Bool()}
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
	nr := d.Uvarint()
	if d.Err() != nil || nr > uint64(len(b)) || uint64(s.toolsPartial) > nr {
		return scanned{}, false
	}
	s.tools = make([]ToolRecord, nr)
	for i := range s.tools {
		r := &s.tools[i]
		r.ID = d.Text()
		r.Time = d.Float64()
		r.Tool = name()
		r.Model = name()
		call, n, kind := d.Uvarint(), d.Uvarint(), d.Uvarint()
		if call > 1<<32-1 || n > 1<<16-1 || kind > uint64(ToolError) {
			bad = true
		}
		r.Call, r.N, r.Kind = uint32(call), uint16(n), uint8(kind)
	}
	if bad || d.Err() != nil || d.Len() != 0 {
		return scanned{}, false
	}
	return s, true
}
