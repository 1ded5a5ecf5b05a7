package usage

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// Unknown is the provider and the model of a record whose entry names none
// (compactions and branch summaries never do in pi 1.6, tool results rarely).
const Unknown = "unknown"

// Record is the usage one entry carries, as pi's /session counts it.
type Record struct {
	// ID is the entry's id ("" when it has none).
	ID string
	// Time is in ms since the epoch: the entry's timestamp, else the
	// message's; NaN when neither is a valid date.
	Time float64
	// Provider and Model name who was paid; Unknown when the entry does not
	// say. For an assistant message Model is responseModel when present, else
	// model, as pi's own cost breakdown names it.
	Provider, Model string
	// Tokens and cost; Total is the sum of the four token counts.
	Input, Output, CacheRead, CacheWrite, Total, Cost float64
}

func label(provider, model string) string {
	if provider == Unknown && model == Unknown {
		return Unknown
	}
	return provider + "/" + model
}

// Bytes is about what records hold in memory.
func Bytes(records []Record) int64 {
	n := int64(cap(records)) * int64(unsafe.Sizeof(Record{}))
	for i := range records {
		n += int64(len(records[i].ID))
	}
	return n
}

// Records returns the records of entries, in order.
func Records(entries []*sessions.Entry) []Record {
	var c Collector
	c.Add(entries...)
	return c.kept()
}

// kept is the records at their size, for keeping: the usage of a whole
// store is kept between reports, and append's spare capacity is up to as
// much again.
func (c *Collector) kept() []Record { return slices.Clone(c.records) }

// Collector gathers a session's records as its file grows: Add the entries
// appended since the last call. When the log was reset (sessions.Log.Refresh
// reports it), start a new Collector. The zero value is ready to use. It is
// not safe for concurrent use.
type Collector struct {
	records []Record
	totals  Totals
	// names interns providers and models: a session names few, over and
	// over.
	names interner
}

// Add takes the usage of entries appended to the session.
func (c *Collector) Add(entries ...*sessions.Entry) {
	for _, e := range entries {
		if r, ok := c.recordOf(e); ok {
			c.records = append(c.records, r)
			c.totals.add(&r)
		}
	}
}

// recordOf picks out the usage of one entry exactly where pi's /session
// (AgentSession.getSessionStats) adds it: assistant and tool-result messages,
// usage entries, compactions and branch summaries with a truthy usage. An
// entry whose usage is not an object adds nothing (pi would throw or add NaN;
// tree.EntryUsage skips it too).
func (c *Collector) recordOf(e *sessions.Entry) (Record, bool) {
	u, ok := e.Usage()
	if !ok || jsjson.KindOf(u) != jsjson.Object {
		return Record{}, false
	}
	var provider, model, msgTime []byte
	if e.Type == schema.TypeMessage {
		provider, model, msgTime = e.MsgProvider, e.MsgModel, e.MsgTimestamp
		if rm := e.MsgResponseModel; e.Role == schema.RoleAssistant && jsjson.KindOf(rm) == jsjson.String {
			model = rm
		}
	} else {
		provider, model = e.Get("provider"), e.Get("model")
	}
	r := Record{
		ID:       e.ID,
		Time:     jsjson.DateValue(e.Timestamp),
		Provider: c.name(provider),
		Model:    c.name(model),
	}
	// One pass over the usage; a later duplicate key wins, as in JSON.parse.
	jsjson.Members(u, func(k, v []byte) bool {
		switch {
		case jsjson.KeyIs(k, "input"):
			r.Input = num(v)
		case jsjson.KeyIs(k, "output"):
			r.Output = num(v)
		case jsjson.KeyIs(k, "cacheRead"):
			r.CacheRead = num(v)
		case jsjson.KeyIs(k, "cacheWrite"):
			r.CacheWrite = num(v)
		case jsjson.KeyIs(k, "cost"):
			r.Cost = num(jsjson.Get(v, "total"))
		}
		return true
	})
	if math.IsNaN(r.Time) && msgTime != nil {
		r.Time = jsjson.DateValue(msgTime)
	}
	r.Total = r.Input + r.Output + r.CacheRead + r.CacheWrite
	return r, true
}

func (c *Collector) name(v []byte) string { return c.names.name(v, 64) }

// interner interns a collector's names (providers, models, tools): a
// session names few, and each record would otherwise hold a copy.
type interner map[string]string

// name is string value v unquoted, interned while fewer than max are
// held; Unknown for anything that is not a string, or an empty one.
func (in *interner) name(v []byte, max int) string {
	if jsjson.KindOf(v) != jsjson.String {
		return Unknown
	}
	if s, ok := (*in)[string(v)]; ok {
		return s
	}
	s, err := jsjson.Unquote(v)
	if err != nil || s == "" {
		s = Unknown
	}
	if *in == nil {
		*in = interner{}
	}
	if len(*in) < max {
		(*in)[string(v)] = s
	}
	return s
}

// num reads a token count or cost as tree.DecodeUsage does: numbers only.
func num(v []byte) float64 {
	if jsjson.KindOf(v) != jsjson.Number {
		return 0
	}
	return jsjson.NumberValue(v)
}

// mayCount lets through every line that can carry a record or a session
// name: usage comes under a "usage" key (or is a "usage" entry) and a name
// in a "session_info" entry. Keys and values are matched as written, so a
// line with a \u escape, which could spell either, is let through too.
func mayCount(line []byte) bool {
	// One pass, eight bytes at a time, stopping at each 'u' (which starts
	// "usage" and follows the backslash of `\u`) and each '_' (the
	// eighth byte of "session_info"); prose has few of them.
	i := 0
	for ; i+8 <= len(line); i += 8 {
		x := binary.LittleEndian.Uint64(line[i:])
		m := hasByte(x, 'u') | hasByte(x, '_')
		for m != 0 {
			k := i + bits.TrailingZeros64(m)/8
			if candidate(line, k) {
				return true
			}
			m &= m - 1
		}
	}
	for ; i < len(line); i++ {
		if candidate(line, i) {
			return true
		}
	}
	return false
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasByte has the high bit set of each byte of x equal to c, and only
// those: the xor makes them zero, and adding 0x7f to each byte's low seven
// bits, which cannot carry into the next byte, sets the high bit of every
// other byte.
func hasByte(x uint64, c byte) uint64 {
	v := x ^ (uint64(c) * lsb)
	return ^(((v &^ msb) + (^msb & (lsb * 0x7f))) | v) & msb
}

// candidate tells whether line[k] starts "usage", ends the backslash of
// `\u`, or is the '_' of "session_info".
func candidate(line []byte, k int) bool {
	switch line[k] {
	case 'u':
		return bytes.HasPrefix(line[k:], []byte("usage")) || k > 0 && line[k-1] == '\\'
	case '_':
		return k >= 7 && bytes.HasPrefix(line[k-7:], []byte(schema.TypeSessionInfo))
	}
	return false
}
