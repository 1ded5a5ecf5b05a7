package tree

import (
	"bytes"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// The files a path's tool calls read, wrote and edited: pi's two lists of a
// branch summary (branchFiles), and beside them every call that names a
// file, with its result, for the counts of files.txt, the diffs of changes/
// and the store's table of files (Touches).
//
// A call names a file as pi's extractFileOpsFromMessage finds it: a
// toolCall block of an assistant message, or a call a script made (the
// nestedCalls record on a tool result), whose name is read, write or edit
// and whose arguments have a path that is a string and not empty.

// The file operations, as pi's file lists name them.
const (
	OpRead  = "read"
	OpWrite = "write"
	OpEdit  = "edit"
)

// fileOp is pi's addFileOp: the operation and the path (quoted JSON) of a
// call to tool name (raw JSON) with arguments args, or ok false when the
// call names no file.
func fileOp(name, args []byte) (op string, p []byte, ok bool) {
	p = jsjson.Get(args, "path")
	if jsjson.KindOf(p) != jsjson.String || len(p) == 2 {
		return "", nil, false
	}
	switch {
	case jsjson.StringIs(name, OpRead):
		return OpRead, p, true
	case jsjson.StringIs(name, OpWrite):
		return OpWrite, p, true
	case jsjson.StringIs(name, OpEdit):
		return OpEdit, p, true
	}
	return "", nil, false
}

// blockOp is fileOp of one element of an assistant message's content, as
// extractFileOpsFromMessage takes it: a toolCall block with arguments and
// a name.
func blockOp(b []byte) (op string, p []byte, ok bool) {
	f := blockFieldsOf(b)
	if !jsjson.StringIs(f.typ, schema.BlockToolCall) || f.name == nil || f.args == nil {
		return "", nil, false
	}
	return fileOp(f.name, f.args)
}

// blockFields are the members of a content block that name a call, read
// in one pass (the last of duplicate keys, as JSON.parse keeps it).
type blockFields struct{ typ, name, args, id []byte }

func blockFieldsOf(b []byte) (f blockFields) {
	if jsjson.KindOf(b) != jsjson.Object {
		return f
	}
	jsjson.Members(b, func(k, v []byte) bool {
		switch {
		case jsjson.KeyIs(k, "type"):
			f.typ = v
		case jsjson.KeyIs(k, "name"):
			f.name = v
		case jsjson.KeyIs(k, "arguments"):
			f.args = v
		case jsjson.KeyIs(k, "id"):
			f.id = v
		}
		return true
	})
	return f
}

// nestedCalls calls fn with each call of a tool result's nestedCalls
// record: {"calls":[{"id","name","arguments","status",...}],"complete"}.
// pi would throw on a record whose calls are not an array; pifs finds none.
func nestedCalls(msg []byte, fn func(i int, call []byte)) {
	nestedCallsOf(jsjson.Get(msg, "nestedCalls"), fn)
}

// nestedCallsOf is nestedCalls of the record itself.
func nestedCallsOf(record []byte, fn func(i int, call []byte)) {
	calls := jsjson.Get(record, "calls")
	if jsjson.KindOf(calls) != jsjson.Array {
		return
	}
	i := 0
	jsjson.Elements(calls, func(c []byte) bool {
		fn(i, c)
		i++
		return true
	})
}

// Touch is one file a tool call of an entry names: its path resolved as
// pi's tools resolve it, and the operation.
type Touch struct {
	// Path is absolute and clean, resolved against the session's cwd.
	Path string
	// Op is "read", "write" or "edit".
	Op string
}

// Touches returns the files the tool calls of one entry name, in order:
// an assistant message's read, write and edit calls, or the ones a script
// made as a tool result records them, each path resolved against cwd (the
// session header's) as ResolvePath resolves it. A call counts whatever its
// result, as in pi's file lists; other entries touch nothing.
func Touches(e *sessions.Entry, cwd string) []Touch {
	if e.Type != schema.TypeMessage {
		return nil
	}
	var out []Touch
	add := func(op string, p []byte) {
		s, _ := jsjson.Unquote(p)
		out = append(out, Touch{Path: ResolvePath(s, cwd), Op: op})
	}
	switch e.Role {
	case schema.RoleAssistant:
		if !mayCall(e.MsgContent) {
			return nil
		}
		jsjson.Elements(e.MsgContent, func(b []byte) bool {
			if op, p, ok := blockOp(b); ok {
				add(op, p)
			}
			return true
		})
	case schema.RoleToolResult:
		if !mayNest(e.Msg) {
			return nil
		}
		nestedCalls(e.Msg, func(_ int, c []byte) {
			if op, p, ok := fileOp(jsjson.Get(c, "name"), jsjson.Get(c, "arguments")); ok {
				add(op, p)
			}
		})
	}
	return out
}

// homeDir is the home directory pi's tools expand "~" to: os.homedir(),
// $HOME for a user who has one.
var homeDir = sync.OnceValue(func() string {
	h, _ := os.UserHomeDir()
	return h
})

// ResolvePath resolves a path a tool call gives as pi's tools do
// (resolveToCwd in tools/path-utils.js): special Unicode spaces become
// spaces, a leading "@" goes, "~" and "~/…" are the home directory (this
// process's $HOME, which is pi's when pifs runs as its user), a file://
// URL is its path, and a relative path is taken from cwd (itself with "~"
// expanded). The result is clean and absolute ("/" stands for a missing
// cwd). A file:// URL that pi refuses (a host, an encoded "/") is kept as
// the relative path it spells.
func ResolvePath(p, cwd string) string { return resolvePath(p, cwd, homeDir()) }

func resolvePath(p, cwd, home string) string {
	p = normalizePath(unicodeSpaces.Replace(p), home, true)
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	base := normalizePath(cwd, home, false)
	if !path.IsAbs(base) {
		base = "/" + base
	}
	return path.Join(base, p)
}

// unicodeSpaces are the characters pi's normalizeUnicodeSpaces turns into
// spaces: U+00A0, U+2000 to U+200A, U+202F, U+205F and U+3000.
var unicodeSpaces = strings.NewReplacer(
	"\u00a0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ",
	"\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200a", " ",
	"\u202f", " ", "\u205f", " ", "\u3000", " ")

// normalizePath is pi's normalizePath on a POSIX system: the leading "@"
// stripped (for a tool's path only), "~" expanded, a file:// URL turned
// into its path.
func normalizePath(p, home string, stripAt bool) string {
	if stripAt {
		p = strings.TrimPrefix(p, "@")
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return path.Join(home, rest)
	}
	if strings.HasPrefix(p, "file://") {
		if u, err := url.Parse(p); err == nil && (u.Host == "" || u.Host == "localhost") &&
			!strings.Contains(strings.ToLower(u.EscapedPath()), "%2f") {
			return u.Path
		}
	}
	return p
}

// CallStatus is what a call's result says of it.
type CallStatus uint8

const (
	// NoResult: the path holds no result for the call (the run stopped, or
	// the path ends before it); a script's call still unfinished.
	NoResult CallStatus = iota
	// Done: the result is not an error.
	Done
	// Failed: the result is an error (isError, or a script's call with
	// status "error").
	Failed
)

// FileCall is one call of a path that names a file.
type FileCall struct {
	// Entry is the message that holds the call: an assistant message, or
	// for a script's call the tool result that records it.
	Entry *sessions.Entry
	// Block is the toolCall block, or the nested call's record.
	Block []byte
	// CallID is the call's id ("" when it has none that is a string).
	CallID string
	// Op is "read", "write" or "edit"; Path the path as given (decoded),
	// Abs resolved against the session's cwd (ResolvePath).
	Op, Path, Abs string
	// Nested: a script made the call (nestedCalls on a tool result).
	Nested bool
	// Status is what its result says; Result is the tool result entry
	// (nil with NoResult, and the recording entry for a script's call).
	Status CallStatus
	Result *sessions.Entry
	// value is the path's canonical JSON: its key among the lists' values.
	value string
}

// Args returns the call's arguments (raw JSON; nil when a script's call
// was recorded without them).
func (c *FileCall) Args() []byte { return jsjson.Get(c.Block, "arguments") }

// FileStat is one line of files.txt: a value of pi's lists (or a file
// named by calls the lists leave out) with the calls that name it.
type FileStat struct {
	// Value is the list's value as canonical JSON: a string for every path
	// a call gives; a branch summary's details may hold anything.
	Value []byte
	// Path is String(Value): the path as given.
	Path string
	// List is "read" (pi's readFiles), "modified" (pi's modifiedFiles) or
	// "other": a file that only calls pi's lists leave out name (a
	// script's calls, which a branch summary does not count; calls a
	// context edit took out of the context).
	List string
	// Reads, Writes and Edits count the calls naming Path, Errors those of
	// them whose result is an error.
	Reads, Writes, Edits, Errors int
	// Last is the id of the last entry of the path that named it: a call's
	// message, or a branch summary or context edit whose content lists it.
	Last string
}

// The lists of files.txt.
const (
	ListRead     = "read"
	ListModified = "modified"
	ListOther    = "other"
)

// Changed is one file the path wrote or edited: its calls in order.
type Changed struct {
	// Abs is the file's absolute path.
	Abs string
	// Calls index Files.Calls: every call naming the file (reads too),
	// failed ones included.
	Calls []int
}

// Files is what a path's tool calls did to files.
type Files struct {
	// Cwd is the session's working directory, which relative paths are
	// taken from; Dir is it resolved as the paths are (absolute, clean,
	// "~" expanded).
	Cwd, Dir string
	// ReadFiles and ModifiedFiles are pi's lists for a branch summary of
	// the path (readFiles and modifiedFiles of its details), as canonical
	// JSON values.
	ReadFiles, ModifiedFiles [][]byte
	// Stats are the lines of files.txt: pi's readFiles, then its
	// modifiedFiles, in pi's order, then the files only calls the lists
	// leave out name, in the same order.
	Stats []FileStat
	// Calls are the path's calls that name a file, in order.
	Calls []FileCall
	// Changed are the files written or edited, by Abs (in byte order).
	Changed []Changed
}

// PathFiles returns what the tool calls of path (root first) did to files,
// relative paths taken from cwd.
func PathFiles(p []*sessions.Entry, cwd string) *Files {
	f := &Files{Cwd: cwd, Dir: ResolvePath("", cwd)}
	f.ReadFiles, f.ModifiedFiles = branchFiles(p)
	f.Calls = pathCalls(p, cwd)
	f.Stats = fileStats(p, f.ReadFiles, f.ModifiedFiles, f.Calls)
	f.Changed = changedFiles(f.Calls)
	return f
}

// FilesAt is PathFiles of the path to the entry id ("" for the leaf's),
// with the header's cwd.
func (t *Tree) FilesAt(id string) *Files {
	p := t.LeafPath()
	if id != "" {
		p = t.PathTo(id)
	}
	cwd := ""
	if t.Header != nil {
		cwd = t.Header.Cwd
	}
	return PathFiles(p, cwd)
}

// pathCalls finds the calls of a path that name a file and their results.
// A tool result answers the first call of the latest assistant message
// with its toolCallId (and its toolName, when it gives one) that no result
// has answered: providers reuse ids from turn to turn.
func pathCalls(p []*sessions.Entry, cwd string) []FileCall {
	var calls []FileCall
	var pending []int // calls of the latest assistant message without a result
	paths := pathCache{cwd: cwd}
	for _, e := range p {
		if e.Type != schema.TypeMessage {
			continue
		}
		switch e.Role {
		case schema.RoleAssistant:
			pending = pending[:0]
			if !mayCall(e.MsgContent) {
				continue
			}
			jsjson.Elements(e.MsgContent, func(b []byte) bool {
				op, q, ok := blockOp(b)
				if !ok {
					return true
				}
				pending = append(pending, len(calls))
				calls = append(calls, paths.call(e, b, op, q))
				return true
			})
		case schema.RoleToolResult:
			if len(pending) == 0 && !mayNest(e.Msg) {
				continue // it answers no file's call and makes none
			}
			var id, name, isError, nested []byte
			jsjson.Members(e.Msg, func(k, v []byte) bool {
				switch {
				case jsjson.KeyIs(k, "toolCallId"):
					id = v
				case jsjson.KeyIs(k, "toolName"):
					name = v
				case jsjson.KeyIs(k, "isError"):
					isError = v
				case jsjson.KeyIs(k, "nestedCalls"):
					nested = v
				}
				return true
			})
			callID, _ := jsjson.StringValue(id)
			toolName, hasName := jsjson.StringValue(name)
			for k, i := range pending {
				c := &calls[i]
				if c.CallID != callID || (hasName && toolName != c.Op) {
					continue
				}
				c.Result, c.Status = e, Done
				if jsjson.Truthy(isError) {
					c.Status = Failed
				}
				pending = append(pending[:k], pending[k+1:]...)
				break
			}
			nestedCallsOf(nested, func(_ int, b []byte) {
				op, q, ok := fileOp(jsjson.Get(b, "name"), jsjson.Get(b, "arguments"))
				if !ok {
					return
				}
				c := paths.call(e, b, op, q)
				c.Nested, c.Result = true, e
				switch st, _ := jsjson.Str(b, "status"); st {
				case "ok":
					c.Status = Done
				case "error":
					c.Status = Failed
				default:
					c.Result = nil
				}
				calls = append(calls, c)
			})
		}
	}
	return calls
}

// mayCall tells whether an assistant message's content can hold a tool
// call: "toolCall" as written, or an escape that could spell it.
func mayCall(content []byte) bool {
	return containsAt(content, "toolCall", 4) || bytes.Contains(content, []byte(`\u`))
}

// mayNest tells whether a tool result can hold nestedCalls: as written,
// or an escape that could spell it.
func mayNest(msg []byte) bool {
	return containsAt(msg, "nestedCalls", 6) || bytes.Contains(msg, []byte(`\u`))
}

// containsAt is bytes.Contains(b, word), looking for word[at:] first,
// then for the rest before it: bytes.Index stops at each byte its pattern
// starts with, and only later turns to its vector search, and prose has a
// "t" or an "n" every dozen bytes but few "C".
func containsAt(b []byte, word string, at int) bool {
	tail := []byte(word[at:])
	for i := at; i <= len(b); {
		k := bytes.Index(b[i:], tail)
		if k < 0 {
			return false
		}
		i += k
		if string(b[i-at:i]) == word[:at] {
			return true
		}
		i++
	}
	return false
}

// pathCache resolves each path a path's calls give once: they give few,
// over and over.
type pathCache struct {
	cwd  string
	seen map[string]*pathOf // by the path's JSON as written
}

type pathOf struct{ path, abs, value string }

func (pc *pathCache) call(e *sessions.Entry, b []byte, op string, q []byte) FileCall {
	p := pc.seen[string(q)]
	if p == nil {
		s, _ := jsjson.Unquote(q)
		p = &pathOf{path: s, abs: ResolvePath(s, pc.cwd), value: string(jsjson.AppendCanonical(nil, q))}
		if pc.seen == nil {
			pc.seen = map[string]*pathOf{}
		}
		pc.seen[string(q)] = p
	}
	id, _ := jsjson.StringValue(blockFieldsOf(b).id)
	return FileCall{Entry: e, Block: b, CallID: id, Op: op, Path: p.path, Abs: p.abs, value: p.value}
}

// fileStats makes the lines of files.txt.
func fileStats(p []*sessions.Entry, read, modified [][]byte, calls []FileCall) []FileStat {
	at := map[string]int{}
	var out []FileStat
	list := func(vals [][]byte, name string) {
		for _, v := range vals {
			at[string(v)] = len(out)
			out = append(out, FileStat{Value: v, Path: jsText(v), List: name})
		}
	}
	list(read, ListRead)
	list(modified, ListModified)
	var others fileSet
	for i := range calls {
		if _, ok := at[calls[i].value]; !ok {
			others.add([]byte(calls[i].value))
		}
	}
	list(jsSort(others.vals), ListOther)
	for i := range calls {
		c := &calls[i]
		s := &out[at[c.value]]
		switch c.Op {
		case OpRead:
			s.Reads++
		case OpWrite:
			s.Writes++
		case OpEdit:
			s.Edits++
		}
		if c.Status == Failed {
			s.Errors++
		}
	}
	// The last entry naming each value, in path order: its calls, and the
	// details and replacements that put values in pi's lists.
	last := make([]int, len(out)) // 1 + the place in p, 0 for none
	ci := 0                       // the calls come in the order of p
	for k, e := range p {
		for ; ci < len(calls) && calls[ci].Entry == e; ci++ {
			last[at[calls[ci].value]] = k + 1
		}
		touch := func(v []byte) {
			if j, ok := at[string(jsjson.AppendCanonical(nil, v))]; ok {
				last[j] = max(last[j], k+1)
			}
		}
		switch {
		case e.Type == schema.TypeBranchSummary && !jsjson.Truthy(e.Get("fromHook")):
			d := e.Get("details")
			for _, key := range []string{"readFiles", "modifiedFiles"} {
				jsjson.Elements(jsjson.Get(d, key), func(v []byte) bool { touch(v); return true })
			}
		case e.Type == schema.TypeContextEdit:
			jsjson.Elements(jsjson.Get(e.Get("replacement"), "content"), func(b []byte) bool {
				if _, q, ok := blockOp(b); ok {
					touch(q)
				}
				return true
			})
		}
	}
	for j := range out {
		if last[j] > 0 {
			out[j].Last = p[last[j]-1].ID
		}
	}
	return out
}

// changedFiles groups the calls by file, and keeps the files written or
// edited.
func changedFiles(calls []FileCall) []Changed {
	at := map[string]int{}
	var all []Changed
	var changed []bool
	for i := range calls {
		c := &calls[i]
		k, ok := at[c.Abs]
		if !ok {
			k = len(all)
			at[c.Abs] = k
			all = append(all, Changed{Abs: c.Abs})
			changed = append(changed, false)
		}
		all[k].Calls = append(all[k].Calls, i)
		changed[k] = changed[k] || c.Op == OpWrite || c.Op == OpEdit
	}
	var out []Changed
	for k := range all {
		if changed[k] {
			out = append(out, all[k])
		}
	}
	sortChanged(out)
	return out
}

func sortChanged(c []Changed) {
	slices.SortFunc(c, func(a, b Changed) int { return strings.Compare(a.Abs, b.Abs) })
}
