package search

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"sort"
	"strings"
)

// FileTouch is a session whose tool calls touched a file.
type FileTouch struct {
	// Project, Session and Path name the session (as Hit does).
	Project, Session, Path string
	// Entry and Time are the last entry that touched the file, and its
	// time (ms since the epoch, NaN when it has none).
	Entry string
	Time  float64
	// Modified tells that a write or an edit is among the touches.
	Modified bool
	// Reads, Writes and Edits count the session's entries that touched
	// the file so.
	Reads, Writes, Edits int
}

// TouchedBy lists the sessions in scope whose tool calls touched file (an
// absolute path, as Options.Touches gives them), the last touched first.
// It reads the rows of that file's touches alone (an index lookup), not
// the store's.
func (x *Index) TouchedBy(ctx context.Context, file string, scope Scope) ([]FileTouch, error) {
	rows, err := x.query(ctx, `SELECT touches.entry, touches.op, entries.eid, entries.time
		FROM touches CROSS JOIN entries ON entries.rowid = touches.entry WHERE touches.path = ?`, filepath.Clean(file))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type last struct {
		t     FileTouch
		entry int64
	}
	ff := x.filter(&Query{}, scope)
	by := map[int64]*last{}
	for rows.Next() {
		var entry int64
		var op int
		var eid string
		var t sql.NullInt64
		if err := rows.Scan(&entry, &op, &eid, &t); err != nil {
			return nil, err
		}
		x.stats.rows.Add(1)
		file := fileOf(entry)
		if !ff.ok(file) {
			continue
		}
		tm := math.NaN()
		if t.Valid {
			tm = float64(t.Int64)
		}
		l := by[file]
		if l == nil {
			r := ff.rows[file]
			l = &last{t: FileTouch{Project: r.project, Session: r.name, Path: r.path}, entry: -1}
			by[file] = l
		}
		switch opNames[op] {
		case OpRead:
			l.t.Reads++
		case OpWrite:
			l.t.Writes++
			l.t.Modified = true
		case OpEdit:
			l.t.Edits++
			l.t.Modified = true
		}
		c, o := cand{id: entry, time: tm}, cand{id: l.entry, time: l.t.Time}
		if l.entry < 0 || c.better(&o) {
			l.entry, l.t.Entry, l.t.Time = entry, eid, tm
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]FileTouch, 0, len(by))
	for _, l := range by {
		out = append(out, l.t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if newer(a.Time, b.Time) != newer(b.Time, a.Time) {
			return newer(a.Time, b.Time)
		}
		return a.Path < b.Path
	})
	return out, nil
}

// TouchedUnder lists the names in folder dir (an absolute path) that lead
// to a file some session in scope touched: the touched files in it and
// the folders above touched files, sorted. It costs a statement or two a
// name listed, and one for each touch out of scope it passes: the
// touches are read in path order from an index, and the files below a
// name found are skipped in one step.
func (x *Index) TouchedUnder(ctx context.Context, dir string, scope Scope) ([]string, error) {
	dir = filepath.Clean(dir)
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	// Every path with the prefix sorts before end: '0' follows '/'.
	end := prefix[:len(prefix)-1] + "0"
	ff := x.filter(&Query{}, scope)
	stmt, err := x.r.PrepareContext(ctx, `SELECT path, entry FROM touches WHERE (path, entry) > (?, ?) AND path < ? ORDER BY path, entry LIMIT 1`)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	found := map[string]bool{}
	var names []string
	fromPath, fromEntry := prefix, int64(-1)
	for {
		x.stats.statements.Add(1)
		var path string
		var entry int64
		err := stmt.QueryRowContext(ctx, fromPath, fromEntry, end).Scan(&path, &entry)
		if err == sql.ErrNoRows {
			break
		}
		if err != nil {
			return nil, err
		}
		x.stats.rows.Add(1)
		rest := path[len(prefix):]
		name, below, _ := strings.Cut(rest, "/")
		if !found[name] && !ff.ok(fileOf(entry)) {
			// Out of scope: the next touch, of this path or another.
			fromPath, fromEntry = path, entry
			continue
		}
		if !found[name] && name != "" {
			found[name] = true
			names = append(names, name)
		}
		if below != "" || strings.HasSuffix(rest, "/") {
			// Past every path below the name ('0' follows '/').
			fromPath, fromEntry = prefix+name+"0", -1
		} else {
			// Past the file of that name; names that sort between it
			// and its folder ("a-b" between "a" and "a/") come next.
			fromPath, fromEntry = path, math.MaxInt64
		}
	}
	sort.Strings(names)
	return names, nil
}

// Leads tells whether some session in scope touched path (an absolute
// path) or a file below it: whether by-file/ has a folder for it. It reads
// the touches in path order from an index and stops at the first in
// scope: a statement for the path's own touches and its folder's, and one
// for each touch out of scope it passes.
func (x *Index) Leads(ctx context.Context, path string, scope Scope) (bool, error) {
	path = filepath.Clean(path)
	prefix := path + "/"
	if path == "/" {
		prefix = "/"
	}
	// The path itself, then what is below it: the names that sort between
	// them ("a-b", "a.go" between "a" and "a/") are skipped in one step.
	end := prefix[:len(prefix)-1] + "0"
	ff := x.filter(&Query{}, scope)
	stmt, err := x.r.PrepareContext(ctx, `SELECT path, entry FROM touches WHERE (path, entry) > (?, ?) AND path < ? ORDER BY path, entry LIMIT 1`)
	if err != nil {
		return false, err
	}
	defer stmt.Close()
	fromPath, fromEntry := path, int64(-1)
	for {
		x.stats.statements.Add(1)
		var p string
		var entry int64
		err := stmt.QueryRowContext(ctx, fromPath, fromEntry, end).Scan(&p, &entry)
		if err == sql.ErrNoRows {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		x.stats.rows.Add(1)
		if p != path && !strings.HasPrefix(p, prefix) {
			fromPath, fromEntry = prefix, -1
			continue
		}
		if ff.ok(fileOf(entry)) {
			return true, nil
		}
		fromPath, fromEntry = p, entry
	}
}
