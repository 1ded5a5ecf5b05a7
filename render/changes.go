package render

import (
	"bytes"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/tree"
)

// changes/<name>.diff and changes.patch: what the write and edit calls of a
// path did to each file, as unified diffs, one section per call in the
// order of the calls (a file edited three times has three sections, each
// against the file as the one before left it: git apply and patch apply
// them in turn).
//
// A section is exact, with the file's line numbers and context, when the
// session shows enough:
//   - an edit whose result carries pi's patch (details.patch, which pi 1.6
//     records for every edit it makes) is that patch;
//   - an edit or a write to a file whose whole content the session gave
//     before (a write, then edits replayed on it) is the diff between the
//     contents;
//   - a write to a file the path did not read or edit before is a new
//     file, which applies where the file did not exist.
//
// Otherwise the section shows the call's arguments as hunks that carry no
// line numbers (an edit whose result has no patch: a script's edit, an
// older pi), or a write over a file whose content the session never showed
// as a new file; the comment above it says so, and so does the header:
// such a patch does not apply as it stands.
//
// pi's patches are of the text its edit tool matches: line ends made LF
// and a byte order mark left out. A file with CRLF line ends takes them
// with git apply --ignore-whitespace only, and the lines they add then end
// in LF where pi kept CRLF: the session does not say which files have them.
//
// A call whose result is an error changed nothing: it is left out, with a
// comment line that says so and why. A call without a result on the path
// (the run stopped) is shown as its arguments ask, and its comment says
// so.
//
// Paths in the diffs are relative to one root, the deepest folder holding
// the session's cwd and every changed file (the cwd itself when they are all
// below it), which the header names: `cd ROOT && git apply PATCH` or
// `patch -p1`.

const diffExt = ".diff"

// ChangeName is the name of the diff of f.Changed[i] in changes/: the
// file's path relative to the session's cwd when it is below it, else its
// absolute path, spelled as names spells an id, and ".diff".
func ChangeName(f *tree.Files, i int) string {
	p := f.Changed[i].Abs
	if rel, ok := below(f.Dir, p); ok {
		p = rel
	}
	return names.EncodeIn(p, len(diffExt)) + diffExt
}

// ChangeNames are the names of changes/, in the order of f.Changed.
func ChangeNames(f *tree.Files) []string {
	out := make([]string, len(f.Changed))
	for i := range out {
		out[i] = ChangeName(f, i)
	}
	return out
}

// below returns p relative to dir when p is inside dir (not dir itself);
// both are clean and absolute.
func below(dir, p string) (string, bool) {
	if dir == "/" {
		return strings.TrimPrefix(p, "/"), p != "/"
	}
	rest, ok := strings.CutPrefix(p, dir+"/")
	return rest, ok && rest != ""
}

// ChangeDiff is changes/<ChangeName(f, i)>.
func ChangeDiff(f *tree.Files, i int) []byte {
	d := fileDiff(f, i, changesRoot(f))
	return d.append(nil)
}

// ChangeDiffSize is len(ChangeDiff(f, i)), counted a section at a time.
func ChangeDiffSize(f *tree.Files, i int) int64 {
	d := fileDiff(f, i, changesRoot(f))
	return d.size()
}

// ChangesPatch is changes.patch: a header, then the diff of every changed
// file, in the order of f.Changed.
func ChangesPatch(f *tree.Files) []byte {
	root := changesRoot(f)
	diffs := make([]*fileChanges, len(f.Changed))
	for i := range diffs {
		diffs[i] = fileDiff(f, i, root)
	}
	out := appendPatchHeader(nil, f, root, diffs)
	for _, d := range diffs {
		out = d.append(out)
	}
	return out
}

// ChangesPatchSize is len(ChangesPatch(f)), each file's diff counted and
// let go before the next.
func ChangesPatchSize(f *tree.Files) int64 {
	root := changesRoot(f)
	var n int64
	diffs := make([]*fileChanges, len(f.Changed))
	for i := range diffs {
		d := fileDiff(f, i, root)
		n += d.size()
		d.secs = nil // the header needs only the counts
		diffs[i] = d
	}
	bp := getScratch()
	defer putScratch(bp)
	*bp = appendPatchHeader((*bp)[:0], f, root, diffs)
	return n + int64(len(*bp))
}

// changesRoot is the deepest folder holding the cwd and every changed
// file.
func changesRoot(f *tree.Files) string {
	root := f.Dir
	for _, c := range f.Changed {
		for root != "/" {
			if _, ok := below(root, c.Abs); ok {
				break
			}
			root = path.Dir(root)
		}
	}
	return root
}

// section is what one call did, as a comment and a diff section.
type section struct {
	comment []byte // one line, without "# " and line feed
	// hunks: none for a call left out. from and to name the sides
	// ("/dev/null" for a new file).
	hunks    []hunk
	from, to string
	exact    bool
}

// fileChanges is the diff of one file.
type fileChanges struct {
	abs, name string // the file, and its name in the diff (relative to root)
	root      string
	secs      []section
	// counts for the headers
	calls, failed, inexact, sections int
	creates                          bool
}

// fileState is what the session shows of a file, call after call.
type fileState struct {
	content []byte
	known   bool // content is the file's whole content
	exists  bool // a call read or changed it
}

// fileDiff replays the calls of path on file f.Changed[i].
func fileDiff(f *tree.Files, i int, root string) *fileChanges {
	c := &f.Changed[i]
	d := &fileChanges{abs: c.Abs, root: root}
	d.name = c.Abs
	if rel, ok := below(root, c.Abs); ok {
		d.name = rel
	} else if c.Abs == root {
		d.name = "."
	}
	var st fileState
	for _, k := range c.Calls {
		call := &f.Calls[k]
		if call.Op == tree.OpRead {
			if call.Status == tree.Done {
				st.exists = true
			}
			continue
		}
		d.calls++
		s := d.replay(call, &st)
		if s.hunks == nil {
			if call.Status == tree.Failed {
				d.failed++
			}
		} else {
			d.sections++
			if !s.exact {
				d.inexact++
			}
			if s.from == devNull && d.sections == 1 {
				d.creates = true
			}
		}
		d.secs = append(d.secs, s)
	}
	return d
}

const devNull = "/dev/null"

// replay makes the section of one write or edit call and moves st past it.
func (d *fileChanges) replay(call *tree.FileCall, st *fileState) section {
	s := section{from: "a/" + d.name, to: "b/" + d.name}
	head := callHead(call)
	if call.Status == tree.Failed {
		s.comment = append(head, " failed, left out"...)
		if why := errorLine(call); why != "" {
			s.comment = append(append(s.comment, ": "...), why...)
		}
		return s
	}
	tail := ""
	if call.Status == tree.NoResult {
		tail = " (no result on this path: shown as its arguments ask)"
	}
	args := call.Args()
	switch call.Op {
	case tree.OpWrite:
		content, ok := jsjson.Str(args, "content")
		if !ok {
			s.comment = append(head, ": no content to show"...)
			return s
		}
		newContent := []byte(content)
		switch {
		case st.known:
			s.hunks = lineHunks(splitLines(st.content), splitLines(newContent))
			s.exact = true
			s.comment = append(head, ": the whole new content, against what the session wrote before"...)
		case st.exists:
			s.from = devNull
			s.hunks = lineHunks(nil, splitLines(newContent))
			s.comment = append(head, ": the whole new content, as a new file; the file existed and the session does not show what it held, so this section does not apply"...)
		default:
			s.from = devNull
			s.hunks = lineHunks(nil, splitLines(newContent))
			s.exact = true
			s.comment = append(head, ": the whole new content, as a new file (applies where the file did not exist)"...)
		}
		if len(s.hunks) == 0 {
			// Nothing a unified diff can show: an empty new file, or the same content.
			s.hunks = []hunk{}
			if !st.known {
				s.exact = false
				s.comment = append(head, ": an empty file, which a unified diff cannot create"...)
			}
		}
		st.content, st.known, st.exists = newContent, true, true
	case tree.OpEdit:
		edits, ok := editsOf(args)
		if !ok {
			s.comment = append(head, ": no replacement to show"...)
			return s
		}
		if h, ok := resultPatch(call); ok {
			s.hunks, s.exact = h, true
			s.comment = append(head, ": "...)
			s.comment = appendCounted(s.comment, len(edits), "replacement")
			s.comment = append(s.comment, ", as pi's result shows them"...)
			if st.known {
				st.content, st.known = applyHunks(st.content, h)
			}
		} else if newContent, ok := replayEdits(st, edits); ok {
			s.hunks = lineHunks(splitLines(st.content), splitLines(newContent))
			s.exact = true
			s.comment = append(head, ": "...)
			s.comment = appendCounted(s.comment, len(edits), "replacement")
			s.comment = append(s.comment, " in the content the session wrote before"...)
			st.content = newContent
		} else {
			s.hunks = argumentHunks(edits)
			s.comment = append(head, ": "...)
			s.comment = appendCounted(s.comment, len(edits), "replacement")
			s.comment = append(s.comment, " without line numbers (no patch in its result, and the file's content is not known), so this section does not apply"...)
			st.content, st.known = nil, false
		}
		st.exists = true
	}
	s.comment = append(s.comment, tail...)
	return s
}

// callHead names a call: "edit in ENTRY (call ID)", "edit by a script in
// ENTRY (call ID)" for a nested call.
func callHead(c *tree.FileCall) []byte {
	b := []byte(c.Op)
	if c.Nested {
		b = append(b, " by a script"...)
	}
	b = append(b, " in "...)
	b = append(b, c.Entry.ID...)
	if c.CallID != "" {
		b = append(b, " (call "...)
		b = append(b, c.CallID...)
		b = append(b, ')')
	}
	return b
}

// errorLine is the first line of a failed call's result text, cut to 200
// bytes.
func errorLine(c *tree.FileCall) string {
	var text string
	if c.Nested {
		text, _ = jsjson.Str(c.Block, "error")
	} else if c.Result != nil {
		text = tree.TextContent(jsjson.Get(c.Result.Msg, "content"))
	}
	text, _, _ = strings.Cut(strings.TrimSpace(text), "\n")
	if len(text) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

func appendCounted(b []byte, n int, what string) []byte {
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ' ')
	b = append(b, what...)
	if n != 1 {
		b = append(b, 's')
	}
	return b
}

// replacement is one {oldText, newText} of an edit call.
type replacement struct{ oldText, newText string }

// editsOf reads an edit call's replacements as pi's edit tool takes them
// (prepareEditArguments): "edits" as an array, as a JSON string of one, or
// as a single object, then a top-level oldText and newText appended.
func editsOf(args []byte) ([]replacement, bool) {
	var out []replacement
	one := func(v []byte) (replacement, bool) {
		o, ok1 := jsjson.Str(v, "oldText")
		n, ok2 := jsjson.Str(v, "newText")
		return replacement{o, n}, ok1 && ok2
	}
	edits := jsjson.Get(args, "edits")
	if jsjson.KindOf(edits) == jsjson.String {
		if s, err := jsjson.Unquote(edits); err == nil {
			if v, err := jsjson.Parse([]byte(s)); err == nil {
				edits = v
			}
		}
	}
	switch jsjson.KindOf(edits) {
	case jsjson.Array:
		bad := false
		jsjson.Elements(edits, func(v []byte) bool {
			r, ok := one(v)
			bad = bad || !ok
			out = append(out, r)
			return true
		})
		if bad {
			return nil, false // pi throws on an edit that is not two strings
		}
	case jsjson.Object:
		if r, ok := one(edits); ok {
			out = append(out, r)
		}
	}
	if r, ok := one(args); ok {
		out = append(out, r)
	}
	return out, len(out) > 0
}

// resultPatch is the hunks of the patch pi's edit tool put in the call's
// result (details.patch), when there is a well-formed one.
func resultPatch(c *tree.FileCall) ([]hunk, bool) {
	if c.Nested || c.Result == nil || c.Status != tree.Done {
		return nil, false
	}
	p, ok := jsjson.Str(jsjson.Get(c.Result.Msg, "details"), "patch")
	if !ok {
		return nil, false
	}
	return parsePatch([]byte(p))
}

// parsePatch reads the hunks of a one-file unified diff; ok is false
// unless every hunk's lines match its counts.
func parsePatch(p []byte) ([]hunk, bool) {
	lines := splitLines(p)
	var out []hunk
	i := 0
	for i < len(lines) && !bytes.HasPrefix(lines[i], []byte("@@ ")) {
		i++
	}
	for i < len(lines) {
		h, ok := parseHunkHead(lines[i])
		if !ok {
			return nil, false
		}
		i++
		olds, news := 0, 0
		for i < len(lines) && (olds < h.oldLines || news < h.newLines || i < len(lines) && len(lines[i]) > 0 && lines[i][0] == '\\') {
			l := lines[i]
			i++
			if len(l) == 0 {
				return nil, false
			}
			text := l[1:]
			switch l[0] {
			case ' ':
				olds++
				news++
			case '-':
				olds++
			case '+':
				news++
			case '\\':
				// "\ No newline at end of file": the line before has none.
				if len(h.lines) == 0 {
					return nil, false
				}
				last := &h.lines[len(h.lines)-1]
				last.text = bytes.TrimSuffix(last.text, []byte("\n"))
				continue
			default:
				return nil, false
			}
			if len(text) == 0 || text[len(text)-1] != '\n' {
				return nil, false // every line of the patch text ends in a line feed
			}
			h.lines = append(h.lines, hunkLine{l[0], text})
		}
		if olds != h.oldLines || news != h.newLines {
			return nil, false
		}
		out = append(out, h)
	}
	return out, len(out) > 0
}

// parseHunkHead reads "@@ -a[,b] +c[,d] @@".
func parseHunkHead(l []byte) (hunk, bool) {
	var h hunk
	s := strings.TrimSuffix(string(l), "\n")
	rest, ok := strings.CutPrefix(s, "@@ -")
	if !ok {
		return h, false
	}
	oldPart, rest, ok := strings.Cut(rest, " +")
	if !ok {
		return h, false
	}
	newPart, _, ok := strings.Cut(rest, " @@")
	if !ok {
		return h, false
	}
	var ok1, ok2 bool
	h.oldStart, h.oldLines, ok1 = parseRange(oldPart)
	h.newStart, h.newLines, ok2 = parseRange(newPart)
	return h, ok1 && ok2
}

func parseRange(s string) (start, n int, ok bool) {
	a, b, has := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	n = 1
	if has {
		if n, err = strconv.Atoi(b); err != nil || n < 0 {
			return 0, 0, false
		}
	}
	return start, n, start < 1<<30 && n < 1<<30
}

// applyHunks applies hunks to a known content; ok false (content no longer
// known) when one does not match where it says.
func applyHunks(content []byte, hunks []hunk) ([]byte, bool) {
	lines := splitLines(content)
	var out [][]byte
	at := 0 // next line of lines to copy
	for _, h := range hunks {
		start := h.oldStart - 1
		if h.oldLines == 0 {
			start = h.oldStart
		}
		if start < at || start > len(lines) {
			return nil, false
		}
		out = append(out, lines[at:start]...)
		at = start
		for _, l := range h.lines {
			switch l.kind {
			case ' ', '-':
				if at >= len(lines) || !bytes.Equal(lines[at], l.text) {
					return nil, false
				}
				if l.kind == ' ' {
					out = append(out, l.text)
				}
				at++
			case '+':
				out = append(out, l.text)
			}
		}
	}
	out = append(out, lines[at:]...)
	return bytes.Join(out, nil), true
}

// replayEdits applies an edit's replacements to a known content as pi's
// edit tool does when every old text matches exactly (the first match of
// each, all against the content before the call). A content pi would have
// normalized (a byte order mark, carriage returns) or an old text that does
// not match exactly, which pi matches loosely, gives ok false.
func replayEdits(st *fileState, edits []replacement) ([]byte, bool) {
	if !st.known || bytes.HasPrefix(st.content, []byte("\uFEFF")) || bytes.IndexByte(st.content, '\r') >= 0 {
		return nil, false
	}
	type match struct {
		at, n int
		text  string
	}
	var ms []match
	for _, e := range edits {
		oldText := lf(e.oldText)
		k := bytes.Index(st.content, []byte(oldText))
		if oldText == "" || k < 0 {
			return nil, false
		}
		ms = append(ms, match{k, len(oldText), lf(e.newText)})
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].at < ms[j-1].at; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	var out []byte
	pos := 0
	for _, m := range ms {
		if m.at < pos {
			return nil, false // overlapping: pi refuses
		}
		out = append(append(out, st.content[pos:m.at]...), m.text...)
		pos = m.at + m.n
	}
	out = append(out, st.content[pos:]...)
	if bytes.Equal(out, st.content) {
		return nil, false // pi refuses an edit that changes nothing
	}
	return out, true
}

// lf is pi's normalizeToLF.
func lf(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// argumentHunks shows replacements whose place in the file is unknown:
// each as one hunk of its old and new lines, the lines both begin or end
// with as context. Their line numbers say nothing.
func argumentHunks(edits []replacement) []hunk {
	var out []hunk
	for _, e := range edits {
		a, b := splitLines([]byte(e.oldText)), splitLines([]byte(e.newText))
		h := hunk{oldStart: 1, newStart: 1}
		for _, op := range diffOps(a, b) {
			var l hunkLine
			switch op {
			case '=':
				l = hunkLine{' ', a[0]}
				a, b = a[1:], b[1:]
				h.oldLines++
				h.newLines++
			case '-':
				l = hunkLine{'-', a[0]}
				a = a[1:]
				h.oldLines++
			case '+':
				l = hunkLine{'+', b[0]}
				b = b[1:]
				h.newLines++
			}
			h.lines = append(h.lines, l)
		}
		if h.oldLines == 0 {
			h.oldStart = 0
		}
		if h.newLines == 0 {
			h.newStart = 0
		}
		out = append(out, h)
	}
	return out
}

// append writes the file's diff: its header, then each call's comment
// and section.
func (d *fileChanges) append(b []byte) []byte {
	b = d.appendHeader(b)
	for i := range d.secs {
		b = d.secs[i].append(b)
	}
	return b
}

// size is len(d.append(nil)), a section at a time.
func (d *fileChanges) size() int64 {
	bp := getScratch()
	defer putScratch(bp)
	*bp = d.appendHeader((*bp)[:0])
	n := int64(len(*bp))
	for i := range d.secs {
		*bp = d.secs[i].append((*bp)[:0])
		n += int64(len(*bp))
	}
	return n
}

func (d *fileChanges) appendHeader(b []byte) []byte {
	b = append(b, "# "...)
	b = appendQuotedPath(b, d.abs)
	b = append(b, ": "...)
	b = appendCounted(b, d.calls, "write or edit call")
	b = append(b, " of this path, in order\n"...)
	b = appendApplies(b, d.root, d.inexact, d.failed, d.creates, d.sections > 1)
	return b
}

// appendApplies says from where the diff applies, and whether it does.
func appendApplies(b []byte, root string, inexact, failed int, creates, repeated bool) []byte {
	b = append(b, "# paths relative to "...)
	b = appendQuotedPath(b, root)
	b = append(b, '\n')
	if inexact == 0 {
		b = append(b, "# git apply (or patch -p1) there applies it to the files as they stood before the session"...)
		if creates {
			b = append(b, " (a file it creates must not exist)"...)
		}
		b = append(b, '\n')
	} else {
		b = append(b, "# does not apply as it stands: "...)
		b = appendCounted(b, inexact, "section")
		b = append(b, " cannot be placed in the file as it was (see their comments)\n"...)
	}
	if repeated {
		b = append(b, "# a file changed more than once has a section per change: patch --dry-run checks each against the file as it was; git apply --check checks them in turn\n"...)
	}
	if failed > 0 {
		b = append(b, "# "...)
		b = appendCounted(b, failed, "failed call")
		b = append(b, " left out\n"...)
	}
	return b
}

func (s *section) append(b []byte) []byte {
	b = append(b, "# "...)
	start := len(b)
	b = append(b, s.comment...)
	oneLine(b[start:])
	b = append(b, '\n')
	if len(s.hunks) == 0 {
		return b
	}
	b = append(b, "--- "...)
	b = appendQuotedPath(b, s.from)
	b = append(b, "\n+++ "...)
	b = appendQuotedPath(b, s.to)
	b = append(b, '\n')
	for i := range s.hunks {
		b = s.hunks[i].append(b)
	}
	return b
}

func (h *hunk) append(b []byte) []byte {
	b = append(b, "@@ -"...)
	b = appendRange(b, h.oldStart, h.oldLines)
	b = append(b, " +"...)
	b = appendRange(b, h.newStart, h.newLines)
	b = append(b, " @@\n"...)
	for _, l := range h.lines {
		b = append(b, l.kind)
		b = append(b, l.text...)
		if len(l.text) == 0 || l.text[len(l.text)-1] != '\n' {
			b = append(b, "\n\\ No newline at end of file\n"...)
		}
	}
	return b
}

// appendRange writes a hunk side as diff(1) does: "start" for one line,
// "start,n" otherwise.
func appendRange(b []byte, start, n int) []byte {
	b = strconv.AppendInt(b, int64(start), 10)
	if n != 1 {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return b
}

// appendPatchHeader is changes.patch's header: what it holds and whether
// it applies.
func appendPatchHeader(b []byte, f *tree.Files, root string, diffs []*fileChanges) []byte {
	calls, failed, inexact, creates, repeated := 0, 0, 0, false, false
	for _, d := range diffs {
		calls += d.calls
		failed += d.failed
		inexact += d.inexact
		creates = creates || d.creates
		repeated = repeated || d.sections > 1
	}
	b = append(b, "# what the write and edit calls of this path did: "...)
	if len(diffs) == 0 {
		return append(b, "nothing\n"...)
	}
	b = appendCounted(b, len(diffs), "file")
	b = append(b, ", "...)
	b = appendCounted(b, calls, "call")
	b = append(b, '\n')
	return appendApplies(b, root, inexact, failed, creates, repeated)
}

// appendQuotedPath writes a path as git writes one in a diff: as it is,
// or in double quotes with C escapes when it holds a double quote, a
// backslash or a control character.
func appendQuotedPath(b []byte, p string) []byte {
	if !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == '\\' }) {
		return append(b, p...)
	}
	b = append(b, '"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\v':
			b = append(b, `\v`...)
		case '\f':
			b = append(b, `\f`...)
		case '\r':
			b = append(b, `\r`...)
		default:
			if c < 0x20 || c == 0x7f {
				b = append(b, '\\', '0'+c>>6, '0'+c>>3&7, '0'+c&7)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
