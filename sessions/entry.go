// Package sessions owns pi's session files on disk: finding projects and
// sessions in a store, parsing a file exactly as pi 1.6 does (incrementally,
// as it grows), and appending or creating files the way pi writes them.
//
// It knows nothing of FUSE and nothing of a session's tree; package tree
// builds that from the entries parsed here.
package sessions

import (
	"bytes"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions/schema"
)

// Entry is one parsed line of a session file. Only the fields every reader
// needs are extracted; the rest stays in Raw and is read on demand.
type Entry struct {
	// Seq is the entry's position among the file's parsed values, the header
	// being 0. It orders entries as the file does.
	Seq int
	// Raw is the entry's JSON value as pi holds it: the line's bytes, or for
	// a migrated v1/v2 entry, the line pi would write after migrating.
	Raw []byte
	// Object is false for lines that parse as JSON but not as an object
	// (pi keeps them as entries that have no type and no id).
	Object bool
	Type   string
	// ID is the entry's id; "" when it has none or it is not a string.
	ID string
	// ParentID is the parent's id; "" for a root (null, missing, empty or not
	// a string).
	ParentID string
	// Timestamp is the raw JSON value of "timestamp" (nil when absent).
	Timestamp []byte
	// Time is new Date(timestamp).getTime(): milliseconds since the epoch,
	// NaN when the timestamp is absent or unreadable.
	Time float64
	// Role is message.role for message entries whose role is a string.
	Role string
	// Msg is the raw "message" of a message entry; MsgContent, MsgProvider,
	// MsgModel and MsgTimestamp are its members of those names (nil when
	// absent). They are located once, while parsing, so that building a
	// context never scans a message again.
	Msg, MsgContent, MsgProvider, MsgModel, MsgTimestamp, MsgUsage []byte
	// MsgResponseModel is an assistant message's responseModel (the model
	// that answered, which pi's cost breakdown names).
	MsgResponseModel []byte
	// Offset is the byte offset of the line in the file.
	Offset int64
}

// Get returns the raw value of a top-level field (nil when absent).
func (e *Entry) Get(name string) []byte { return jsjson.Get(e.Raw, name) }

// Str returns a top-level string field.
func (e *Entry) Str(name string) (string, bool) { return jsjson.Str(e.Raw, name) }

// Message returns the raw "message" of a message entry.
func (e *Entry) Message() []byte { return e.Msg }

// Kind names the entry for file names: the role for messages, the type
// otherwise ("entry" when it has neither).
func (e *Entry) Kind() string {
	if e.Type == schema.TypeMessage && e.Role != "" {
		return e.Role
	}
	if e.Type != "" {
		return e.Type
	}
	return "entry"
}

// Usage returns the raw usage value the entry adds to pi's /session totals
// (AgentSession.getSessionStats), and whether it adds one: a usage entry's
// usage (nil when it has none), a compaction's or branch summary's when it
// is truthy, an assistant's or tool result's message usage (nil when it has
// none).
func (e *Entry) Usage() (u []byte, ok bool) {
	switch e.Type {
	case schema.TypeUsage:
		return e.Get("usage"), true
	case schema.TypeCompaction, schema.TypeBranchSummary:
		if u = e.Get("usage"); jsjson.Truthy(u) {
			return u, true
		}
	case schema.TypeMessage:
		if e.Role == schema.RoleAssistant || e.Role == schema.RoleToolResult {
			return e.MsgUsage, true
		}
	}
	return nil, false
}

// Header is a session file's first line.
type Header struct {
	Raw     []byte
	ID      string
	Version float64 // as pi compares it: missing → 1, NaN when not a number
	Cwd     string  // "" when missing or not a string
	// Timestamp and ParentSession are raw JSON values (nil when absent).
	Timestamp     []byte
	ParentSession []byte
}

// parseLine parses one line as pi's parseSessionEntryLine does and reports
// whether pi keeps it (blank, malformed and falsy values are skipped). Objects
// are validated and taken apart in one pass.
func parseLine(line []byte, seq int, off int64) (*Entry, bool) {
	v := jsjson.TrimWS(line)
	if len(v) > 0 && v[0] == '{' {
		e := &Entry{Seq: seq, Raw: v, Offset: off, Object: true}
		var ids idPair
		end, err := jsjson.ScanObject(v, 0, func(key, b []byte, i int) (int, error) {
			return e.member(&ids, key, b, i)
		})
		if err != nil || end != len(v) {
			return nil, false
		}
		e.ID, e.ParentID = ids.strings()
		e.Time = jsjson.DateValue(e.Timestamp)
		if e.Type != schema.TypeMessage {
			e.Msg, e.MsgContent, e.MsgProvider, e.MsgModel, e.MsgTimestamp, e.MsgUsage, e.MsgResponseModel = nil, nil, nil, nil, nil, nil, nil
			e.Role = ""
		}
		return e, true
	}
	v, err := jsjson.Parse(line)
	if err != nil || !jsjson.Truthy(v) {
		return nil, false
	}
	return &Entry{Seq: seq, Raw: v, Offset: off, Time: math.NaN()}, true
}

// idPair holds the raw values of an entry's id and parentId while its line
// is scanned (the last of duplicate keys, as JSON.parse keeps), so that
// both become strings in one allocation.
type idPair struct{ id, parent []byte }

func (p idPair) strings() (id, parent string) {
	a, aok := plainString(p.id)
	b, bok := plainString(p.parent)
	if aok && bok {
		if len(a)+len(b) == 0 {
			return "", ""
		}
		var buf [128]byte
		s := string(append(append(buf[:0], a...), b...))
		return s[:len(a)], s[len(a):]
	}
	id, _ = unquoteString(p.id)
	parent, _ = unquoteString(p.parent)
	return id, parent
}

// plainString returns the body of a JSON string that needs no decoding
// (no escape, valid UTF-8); nil and other values give an empty body, as
// unquoteString gives "" for them.
func plainString(v []byte) ([]byte, bool) {
	if jsjson.KindOf(v) != jsjson.String {
		return nil, true
	}
	body := v[1 : len(v)-1]
	return body, bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body)
}

// member records the top-level fields every reader needs. Duplicate keys
// overwrite, as JSON.parse does.
func (e *Entry) member(ids *idPair, key, b []byte, i int) (int, error) {
	name := jsjson.KeyName(key)
	if string(name) == "message" {
		e.Role, e.MsgContent, e.MsgProvider, e.MsgModel, e.MsgTimestamp, e.MsgUsage, e.MsgResponseModel = "", nil, nil, nil, nil, nil, nil
		var end int
		var err error
		if i < len(b) && b[i] == '{' {
			end, err = jsjson.ScanObject(b, i, e.messageMember)
		} else {
			end, err = jsjson.ScanValue(b, i)
		}
		if err != nil {
			return 0, err
		}
		e.Msg = b[i:end]
		return end, nil
	}
	end, err := jsjson.ScanValue(b, i)
	if err != nil {
		return 0, err
	}
	v := b[i:end]
	switch string(name) {
	case "type":
		e.Type, _ = unquoteString(v)
	case "id":
		ids.id = v
	case "parentId":
		ids.parent = v
	case "timestamp":
		e.Timestamp = v
	}
	return end, nil
}

func (e *Entry) messageMember(key, b []byte, i int) (int, error) {
	end, err := jsjson.ScanValue(b, i)
	if err != nil {
		return 0, err
	}
	v := b[i:end]
	switch string(jsjson.KeyName(key)) {
	case "role":
		e.Role, _ = unquoteString(v)
	case "content":
		e.MsgContent = v
	case "provider":
		e.MsgProvider = v
	case "model":
		e.MsgModel = v
	case "timestamp":
		e.MsgTimestamp = v
	case "usage":
		e.MsgUsage = v
	case "responseModel":
		e.MsgResponseModel = v
	}
	return end, nil
}

// unquoteString decodes a JSON string value; the names pi gives entry types
// and message roles come without an allocation.
func unquoteString(v []byte) (string, bool) {
	if jsjson.KindOf(v) != jsjson.String {
		return "", false
	}
	if s, ok := schema.Intern(v[1 : len(v)-1]); ok {
		return s, true
	}
	s, err := jsjson.Unquote(v)
	return s, err == nil
}

// parseHeader reports whether v is a valid header as pi requires of a
// session's first entry: an object with type "session" and a string id.
func parseHeader(v []byte) (*Header, bool) { return parseHeaderIn(v, false) }

// parseHeaderIn is parseHeader; with own, v is the Header's to keep, never
// changed nor reused, and its id and cwd are read in place when they need
// no unquoting, not copied: the index keeps a header for every session of
// the store.
func parseHeaderIn(v []byte, own bool) (*Header, bool) {
	if jsjson.KindOf(v) != jsjson.Object {
		return nil, false
	}
	str := func(name string) (string, bool) {
		raw := jsjson.Get(v, name)
		if own && jsjson.KindOf(raw) == jsjson.String {
			if body, ok := plainString(raw); ok {
				return unsafe.String(unsafe.SliceData(body), len(body)), true
			}
		}
		return jsjson.StringValue(raw)
	}
	typ, _ := jsjson.Str(v, "type")
	id, ok := str("id")
	if typ != schema.TypeSession || !ok {
		return nil, false
	}
	h := &Header{Raw: v, ID: id}
	h.Cwd, _ = str("cwd")
	h.Timestamp = jsjson.Get(v, "timestamp")
	h.ParentSession = jsjson.Get(v, "parentSession")
	ver := jsjson.Get(v, "version")
	if ver == nil || jsjson.KindOf(ver) == jsjson.Null {
		h.Version = 1 // header.version ?? 1
	} else {
		h.Version = jsjson.ToNumber(ver)
	}
	return h, true
}
