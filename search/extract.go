package search

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions/schema"
)

// Roles of indexed entries, as hits name them and role: filters take them.
const (
	RoleUser      = "user"      // a user message
	RoleAssistant = "assistant" // an assistant message: text, thinking, tool calls
	RoleTool      = "tool"      // a tool result
	RoleBash      = "bash"      // a bash execution (pi's !command)
	RoleSummary   = "summary"   // a branch summary or a compaction
	RoleCustom    = "custom"    // a custom or hidden message, a custom entry
	RoleName      = "name"      // a session_info entry: the session's name
	RoleLabel     = "label"     // a label entry: the label's text
)

// Roles lists the roles, in the order the README gives them.
var Roles = []string{RoleUser, RoleAssistant, RoleTool, RoleBash, RoleSummary, RoleCustom, RoleName, RoleLabel}

// Long parts are cut: a part of more than MaxPart bytes is indexed as its
// first and its last KeepPart bytes (cut at character boundaries), joined
// by a newline.
const (
	MaxPart  = 16 << 10
	KeepPart = 8 << 10
)

// leafType is the customType of pifs's own leaf records, which hold
// nothing to find.
const leafType = "pifs.leaf"

// Doc is what the index keeps of one entry: the text it searches and the
// fields its filters look at.
type Doc struct {
	// Role is one of the Role constants; "" means the entry holds nothing
	// to index (model and thinking level changes, usage, context edits,
	// leaf records, lines that are not objects).
	Role string
	// Text is the entry's parts joined by newlines (see Extract).
	Text string
	// Cut counts the bytes of long parts left out of Text.
	Cut int
	// Tools are the names of an assistant message's tool calls, or a tool
	// result's toolName, lowercased.
	Tools []string
	// Model is an assistant message's provider/model (or model alone),
	// lowercased.
	Model string
	// Target and Label are a label entry's targetId and label ("" clears
	// the label).
	Target, Label string
	// Name is a session_info entry's name.
	Name string
}

// Extract takes from an entry's JSON (as pi holds it, or its line in the
// file) the text the index searches, as pi shows it, JSON escapes decoded.
// The parts, in this order, each left out when empty:
//
//   - user message: its content as pi's contentText gives it (a string as
//     itself, the text blocks joined by newlines);
//   - assistant message: its text the same way, then each thinking
//     block's thinking, then each tool call's name and the values of its
//     arguments (strings as themselves, numbers and booleans as JavaScript
//     prints them, objects and arrays walked in JavaScript's key order;
//     the keys are not indexed), then errorMessage;
//   - tool result: its content's text;
//   - bash execution: the command, then the output;
//   - custom message (a message of role custom, a custom_message entry,
//     hidden or not): its content's text;
//   - custom entry: the values of its data, walked as tool arguments are
//     (pifs's leaf records are left out);
//   - branch summary and compaction (entries, or messages of roles
//     branchSummary and compactionSummary): the summary;
//   - session_info: the name;
//   - label: the label.
//
// Each part longer than MaxPart is cut to its head and tail (see Cut).
func Extract(raw []byte) Doc {
	var d Doc
	if jsjson.KindOf(raw) != jsjson.Object {
		return d
	}
	var p parts
	typ, _ := jsjson.Str(raw, "type")
	switch typ {
	case schema.TypeMessage:
		msg := jsjson.Get(raw, "message")
		if jsjson.KindOf(msg) != jsjson.Object {
			return d
		}
		role, _ := jsjson.Str(msg, "role")
		switch role {
		case schema.RoleUser:
			d.Role = RoleUser
			p.add(contentText(jsjson.Get(msg, "content")))
		case schema.RoleAssistant:
			d.Role = RoleAssistant
			content := jsjson.Get(msg, "content")
			p.add(contentText(content))
			jsjson.Elements(content, func(b []byte) bool {
				if t, _ := jsjson.Str(b, "type"); t == schema.BlockThinking {
					s, _ := jsjson.Str(b, "thinking")
					p.add(s)
				}
				return true
			})
			jsjson.Elements(content, func(b []byte) bool {
				if t, _ := jsjson.Str(b, "type"); t == schema.BlockToolCall {
					name, _ := jsjson.Str(b, "name")
					p.add(name)
					if name != "" {
						d.Tools = append(d.Tools, strings.ToLower(name))
					}
					walkValues(jsjson.Get(b, "arguments"), p.add)
				}
				return true
			})
			s, _ := jsjson.Str(msg, "errorMessage")
			p.add(s)
			model, _ := jsjson.Str(msg, "model")
			if prov, _ := jsjson.Str(msg, "provider"); prov != "" && model != "" {
				model = prov + "/" + model
			}
			d.Model = strings.ToLower(model)
		case schema.RoleToolResult:
			d.Role = RoleTool
			p.add(contentText(jsjson.Get(msg, "content")))
			if name, _ := jsjson.Str(msg, "toolName"); name != "" {
				d.Tools = append(d.Tools, strings.ToLower(name))
			}
		case schema.RoleBashExecution:
			d.Role = RoleBash
			s, _ := jsjson.Str(msg, "command")
			p.add(s)
			s, _ = jsjson.Str(msg, "output")
			p.add(s)
		case schema.RoleCustom, schema.RoleHookMessage:
			d.Role = RoleCustom
			p.add(contentText(jsjson.Get(msg, "content")))
		case schema.RoleBranchSummary, schema.RoleCompactionSummary:
			d.Role = RoleSummary
			s, _ := jsjson.Str(msg, "summary")
			p.add(s)
		default:
			return d
		}
	case schema.TypeCustomMessage:
		d.Role = RoleCustom
		p.add(contentText(jsjson.Get(raw, "content")))
	case schema.TypeCustom:
		if ct, _ := jsjson.Str(raw, "customType"); ct == leafType {
			return d
		}
		d.Role = RoleCustom
		walkValues(jsjson.Get(raw, "data"), p.add)
	case schema.TypeBranchSummary, schema.TypeCompaction:
		d.Role = RoleSummary
		s, _ := jsjson.Str(raw, "summary")
		p.add(s)
	case schema.TypeSessionInfo:
		// The name as pi's getSessionName gives it: trimmed; an empty one
		// clears it.
		d.Role = RoleName
		name, _ := jsjson.Str(raw, "name")
		d.Name = jsjson.Trim(name)
		p.add(d.Name)
	case schema.TypeLabel:
		// A falsy label clears the target's; another value than a string
		// is its JSON text.
		d.Role = RoleLabel
		d.Target, _ = jsjson.Str(raw, "targetId")
		if lab := jsjson.Get(raw, "label"); jsjson.Truthy(lab) {
			if s, ok := jsjson.StringValue(lab); ok {
				d.Label = s
			} else {
				d.Label = string(jsjson.AppendCanonical(nil, lab))
			}
		}
		p.add(d.Label)
	default:
		return d
	}
	d.Text, d.Cut = p.text()
	return d
}

// parts gathers an entry's texts, cutting long ones.
type parts struct {
	b   []byte
	cut int
}

func (p *parts) add(s string) {
	if s == "" {
		return
	}
	if len(p.b) > 0 {
		p.b = append(p.b, '\n')
	}
	if len(s) <= MaxPart {
		p.b = append(p.b, s...)
		return
	}
	head := runeStart(s, KeepPart)
	tail := runeStart(s, len(s)-KeepPart)
	p.b = append(p.b, s[:head]...)
	p.b = append(p.b, '\n')
	p.b = append(p.b, s[tail:]...)
	p.cut += tail - head
}

func (p *parts) text() (string, int) { return string(p.b), p.cut }

// runeStart moves i back to the start of the character it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// contentText is pi's contentText: a string content as itself, an array's
// text blocks joined by newlines (a block whose text is not a string adds
// an empty line, as JavaScript's join of undefined); anything else gives
// nothing.
func contentText(v []byte) string {
	switch jsjson.KindOf(v) {
	case jsjson.String:
		s, _ := jsjson.StringValue(v)
		return s
	case jsjson.Array:
		var b []byte
		n := 0
		jsjson.Elements(v, func(el []byte) bool {
			if t, _ := jsjson.Str(el, "type"); t != schema.BlockText {
				return true
			}
			if n > 0 {
				b = append(b, '\n')
			}
			n++
			if s := jsjson.Get(el, "text"); jsjson.KindOf(s) == jsjson.String {
				b = jsjson.AppendUnquoted(b, s)
			}
			return true
		})
		return string(b)
	}
	return ""
}

// walkValues calls fn with the text of each leaf of a JSON value, in the
// order JavaScript's Object.values and array order visit them: an
// object's members whose names are array indices first, in numeric order,
// then the others in their order. Strings give themselves, numbers and
// booleans their JavaScript text; null gives nothing.
func walkValues(v []byte, fn func(string)) {
	switch jsjson.KindOf(v) {
	case jsjson.String:
		s, _ := jsjson.StringValue(v)
		fn(s)
	case jsjson.Number:
		fn(string(jsjson.FormatNumber(nil, jsjson.NumberValue(v))))
	case jsjson.Bool:
		fn(string(v))
	case jsjson.Array:
		jsjson.Elements(v, func(el []byte) bool {
			walkValues(el, fn)
			return true
		})
	case jsjson.Object:
		type member struct {
			index uint64
			isIdx bool
			val   []byte
		}
		var ms []member
		seen := map[string]int{}
		jsjson.Members(v, func(k, val []byte) bool {
			name := string(jsjson.KeyName(k))
			if i, ok := seen[name]; ok {
				// A repeated name keeps its first place and its last value,
				// as JSON.parse gives it.
				ms[i].val = val
				return true
			}
			idx, isIdx := arrayIndex(name)
			seen[name] = len(ms)
			ms = append(ms, member{idx, isIdx, val})
			return true
		})
		sort.SliceStable(ms, func(i, j int) bool {
			if ms[i].isIdx != ms[j].isIdx {
				return ms[i].isIdx
			}
			return ms[i].isIdx && ms[i].index < ms[j].index
		})
		for _, m := range ms {
			walkValues(m.val, fn)
		}
	}
}

// arrayIndex tells whether a property name is an array index as
// JavaScript orders them (a canonical integer below 2³²−1).
func arrayIndex(name string) (uint64, bool) {
	if name == "" || len(name) > 10 || (len(name) > 1 && name[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(name, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// Excerpt is one line of text around the first place where one of the
// words occurs (case folded), about width bytes long, with newlines and
// tabs made spaces; the start of the text when none occurs.
func Excerpt(text string, words []string, width int) string {
	at, n := -1, 0
	folded := foldString(text)
	for _, w := range words {
		fw := Fold(w)
		if fw == "" {
			continue
		}
		if i := strings.Index(folded.s, fw); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(fw)
		}
	}
	start, end := 0, len(text)
	if at >= 0 {
		// Map the folded offsets back to the text's.
		s, e := folded.orig(at), folded.orig(at+n)
		start = max(0, s-width/3)
		end = min(len(text), max(e, start+width))
	}
	if end-start > width && at < 0 {
		end = start + width
	}
	start = runeStart(text, start)
	end = runeStart(text, end)
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	space := false
	for _, r := range text[start:end] {
		if r == '\n' || r == '\r' || r == '\t' || r < 0x20 {
			r = ' '
		}
		if r == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteRune(r)
	}
	if end < len(text) {
		b.WriteString("…")
	}
	return strings.TrimSpace(b.String())
}

// folded is a text folded for matching, with the offsets of each folded
// byte's character in the original.
type folded struct {
	s    string
	off  []int32 // off[i]: offset in the original of folded byte i
	n    int     // the original's length
	same bool    // folded byte for byte (ASCII): off is not needed
}

func (f folded) orig(i int) int {
	if f.same {
		return min(i, f.n)
	}
	if i >= len(f.off) {
		return f.n
	}
	return int(f.off[i])
}

func foldString(s string) folded {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		// Folded byte for byte: the offsets are the same.
		return folded{s: strings.ToLower(s), n: len(s), same: true}
	}
	var b bytes.Buffer
	off := make([]int32, 0, len(s))
	for i, r := range s {
		before := b.Len()
		if f := fold(r); f >= 0 {
			b.WriteRune(f)
		}
		for j := before; j < b.Len(); j++ {
			off = append(off, int32(i))
		}
	}
	return folded{s: b.String(), off: off, n: len(s)}
}
