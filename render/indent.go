// Package render turns a session's data into the bytes of its computed
// files: indented JSON (entries, headers, context.json), transcript.md,
// transcript.html and info.json. Every rendering is a pure function of the
// parsed session (packages sessions and tree), so it is tested and
// benchmarked without a kernel; package nodes only serves the bytes.
//
// Transcripts are built from independent per-entry pieces
// (AppendEntryMarkdown, AppendEntryHTML): the rendering of a path is the
// rendering of its prefix followed by the pieces of the entries after it,
// so a view can grow as entries are appended under its leaf without
// rendering the prefix again. Each piece is written from package parts'
// reading of its entry; JSON is read and indented by package jsjson.
package render

import (
	"slices"

	"github.com/pifs/pifs/internal/jsjson"
)

// Indent appends raw indented with two spaces, then a newline. The result
// is byte-identical to encoding/json's Indent(raw, "", "  ") followed by a
// newline: whitespace between tokens is dropped, strings and numbers keep
// their bytes, empty objects and arrays stay "{}" and "[]", whitespace after
// the value is kept. When raw is not valid JSON (or nests deeper than
// encoding/json accepts) it appends raw itself and a newline.
func Indent(dst, raw []byte) []byte {
	start := len(dst)
	// Session JSON grows by about a third when indented: room for that is
	// made at once when dst has less spare than raw itself, so that a
	// small dst is not regrown append by append. A dst with that much
	// spare is left as it is: a transcript rendered into a buffer of its
	// exact size has no more room than the indented value needs, and a
	// larger reservation would move it out of its place.
	if cap(dst)-len(dst) < len(raw) {
		dst = slices.Grow(dst, len(raw)+len(raw)/2+64)
	}
	out, ok := jsjson.AppendIndent(dst, raw, 0)
	if !ok {
		out = append(out[:start], raw...)
	}
	return append(out, '\n')
}

// IndentSize is len(Indent(nil, raw)), computed without building it.
func IndentSize(raw []byte) int {
	n, ok := jsjson.IndentSize(raw, 0)
	if !ok {
		n = len(raw)
	}
	return n + 1
}
