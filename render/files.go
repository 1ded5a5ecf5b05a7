package render

import (
	"strconv"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/tree"
)

// files.txt and files.json: the files a path's tool calls read and
// modified, as pi lists them for a branch summary, with what the calls did
// to each (see tree.Files).
//
// files.txt has one line per file, seven fields separated by tabs:
//
//	LIST  READS  WRITES  EDITS  ERRORS  LAST  PATH
//
// LIST is "read" (pi's readFiles: read and not modified), "modified" (pi's
// modifiedFiles) or "other" (named only by calls pi's lists leave out: a
// script's calls, calls a context edit took out); the lines come in that
// order, each list in pi's order. READS, WRITES and EDITS count the calls
// naming PATH, ERRORS those whose result is an error; LAST is the id of
// the last entry that named it. PATH is the path as the calls give it (pi's
// list value), written as git writes a path: in double quotes with C
// escapes when it holds a double quote, a backslash or a control
// character, as it is otherwise; LAST likewise. So `cut -f7-` gives the
// paths and `awk -F'\t' '$1 == "modified"'` the modified files.
//
// files.json is {"readFiles", "modifiedFiles", "files"}: pi's two lists
// as pi would write them into a branch summary's details, and "files", one
// object per line of files.txt, in its order: path (the list value),
// list, reads, writes, edits, errors, lastEntryId (null for an entry
// without an id), and absolutePath (the
// path resolved against the session's cwd as pi's tools resolve it, null
// for a value that is not a string). Indented with two spaces.

// FilesText is files.txt of f.
func FilesText(f *tree.Files) []byte {
	var b []byte
	for i := range f.Stats {
		b = appendFileLine(b, &f.Stats[i])
	}
	return b
}

// FilesTextSize is len(FilesText(f)), counted a line at a time.
func FilesTextSize(f *tree.Files) int64 {
	bp := getScratch()
	defer putScratch(bp)
	var n int64
	for i := range f.Stats {
		*bp = appendFileLine((*bp)[:0], &f.Stats[i])
		n += int64(len(*bp))
	}
	return n
}

func appendFileLine(b []byte, s *tree.FileStat) []byte {
	b = append(b, s.List...)
	for _, n := range [...]int{s.Reads, s.Writes, s.Edits, s.Errors} {
		b = append(b, '\t')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, '\t')
	b = appendQuotedPath(b, s.Last)
	b = append(b, '\t')
	b = appendQuotedPath(b, s.Path)
	return append(b, '\n')
}

// FilesJSON is files.json of f.
func FilesJSON(f *tree.Files) []byte {
	b := appendFilesJSONHead(nil, f)
	for i := range f.Stats {
		b = appendFileJSON(b, f, i)
	}
	return appendFilesJSONFoot(b, f)
}

// FilesJSONSize is len(FilesJSON(f)), counted a file at a time.
func FilesJSONSize(f *tree.Files) int64 {
	bp := getScratch()
	defer putScratch(bp)
	*bp = appendFilesJSONHead((*bp)[:0], f)
	n := int64(len(*bp))
	for i := range f.Stats {
		*bp = appendFileJSON((*bp)[:0], f, i)
		n += int64(len(*bp))
	}
	*bp = appendFilesJSONFoot((*bp)[:0], f)
	return n + int64(len(*bp))
}

func appendFilesJSONHead(b []byte, f *tree.Files) []byte {
	b = append(b, "{\n  \"readFiles\": "...)
	b = appendValues(b, f.ReadFiles)
	b = append(b, ",\n  \"modifiedFiles\": "...)
	b = appendValues(b, f.ModifiedFiles)
	b = append(b, ",\n  \"files\": ["...)
	return b
}

func appendFilesJSONFoot(b []byte, f *tree.Files) []byte {
	if len(f.Stats) > 0 {
		b = append(b, "\n  "...)
	}
	return append(b, "]\n}\n"...)
}

// appendValues writes a list of pi's as an array one level in.
func appendValues(b []byte, vals [][]byte) []byte {
	if len(vals) == 0 {
		return append(b, "[]"...)
	}
	for i, v := range vals {
		if i == 0 {
			b = append(b, "[\n    "...)
		} else {
			b = append(b, ",\n    "...)
		}
		b = appendValue(b, v, 2)
	}
	return append(b, "\n  ]"...)
}

// appendValue writes a JSON value indented at level base (a value of a
// branch summary's details may be an object).
func appendValue(b, v []byte, base int) []byte {
	if out, ok := jsjson.AppendIndent(b, v, base); ok {
		return out
	}
	return jsjson.AppendCanonical(b[:len(b):len(b)], v)
}

func appendFileJSON(b []byte, f *tree.Files, i int) []byte {
	s := &f.Stats[i]
	if i > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n    {\n      \"path\": "...)
	b = appendValue(b, s.Value, 3)
	b = append(b, ",\n      \"list\": "...)
	b = jsjson.Quote(b, s.List)
	for _, c := range [...]struct {
		k string
		n int
	}{{"reads", s.Reads}, {"writes", s.Writes}, {"edits", s.Edits}, {"errors", s.Errors}} {
		b = append(b, ",\n      \""...)
		b = append(b, c.k...)
		b = append(b, "\": "...)
		b = strconv.AppendInt(b, int64(c.n), 10)
	}
	b = append(b, ",\n      \"lastEntryId\": "...)
	if s.Last == "" {
		b = append(b, "null"...)
	} else {
		b = jsjson.Quote(b, s.Last)
	}
	b = append(b, ",\n      \"absolutePath\": "...)
	if jsjson.KindOf(s.Value) == jsjson.String {
		b = jsjson.Quote(b, tree.ResolvePath(s.Path, f.Cwd))
	} else {
		b = append(b, "null"...)
	}
	return append(b, "\n    }"...)
}
