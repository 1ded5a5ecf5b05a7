package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// compiled is a query as one SQL statement giving (rowid, rank, time) of
// every matching entry (scope, visibility and name: filters are applied
// to its rows by file).
type compiled struct {
	sql    string
	args   []any
	empty  bool // nothing can match
	ranked bool // the rows carry a rank
	// inFile, when set, is sql for one file's rows, oldest first (FTS5
	// starts a range newest first at about three times the cost): its
	// arguments are args and the file's first and last rowid.
	inFile string
	// nots are statements giving, newest first as sql's rows come, the
	// rows that excluded words take out of sql's: a pass reads them
	// beside sql's (FTS5's own NOT reads every row of what it excludes
	// from, where a pass may stop early).
	nots []notStmt
}

// notStmt is a statement of excluded rows (rowid, newest first), from a
// row on: its arguments are match and that row.
type notStmt struct {
	sql, match string
}

// Tables of the text index.
const (
	tableTri   = "tri"         // trigram: substrings
	tableWords = "words"       // unicode61: words, phrases, prefixes
	tableTerms = "words_terms" // words's vocabulary (fts5vocab), a row a word
)

// ftsTerm is a term as an FTS5 query of one of the tables. words, for a
// prefix, are the words of the index its last word begins (expandPrefix):
// the prefix is then their OR.
func ftsTerm(t Term, words []string) (table, expr string) {
	switch {
	case t.Kind == Substring:
		return tableTri, quoteFTS(t.Text)
	case t.Kind == Prefix && len(words) > 0:
		head := t.Words[:len(t.Words)-1]
		or := make([]string, len(words))
		for i, w := range words {
			or[i] = quoteFTS(strings.Join(append(head[:len(head):len(head)], w), " "))
		}
		return tableWords, "(" + strings.Join(or, " OR ") + ")"
	case t.Kind == Prefix:
		return tableWords, quoteFTS(strings.Join(t.Words, " ")) + " *"
	default:
		return tableWords, quoteFTS(strings.Join(t.Words, " "))
	}
}

// maxExpand is the most words a prefix is read as the OR of; a prefix of
// more is left to FTS5, as is one shorter than minExpand (the words it
// begins are many, and reading them before giving up would cost what the
// prefix costs).
const (
	maxExpand = 16
	minExpand = 3
)

// expandPrefix gives the words of the text index that begin with a
// prefix's last word, when there are 1 to maxExpand of them and that word
// is minExpand or more ASCII letters and digits (the tokenizer keeps such
// a word as it is, so the index's words that begin with it are those
// FTS5's prefix query matches); else nil. FTS5 reads a prefix by merging
// the whole lists of rows of all its words before giving a first row,
// where an OR of the words is read newest first and stops with the pass.
// The words are read from the table's leaf pages (vocab.go), about 1 ms,
// then the newest 5,000 rows take 2 ms, against 33 ms for them through
// the prefix (fts5vocab, where a page does not parse, tells the words in
// 18 ms for a word in one entry of ten of store A: it counts their rows).
func (x *Index) expandPrefix(ctx context.Context, t Term) ([]string, error) {
	if t.Kind != Prefix || len(t.Words) == 0 || x.fts5Prefixes {
		return nil, nil
	}
	last := t.Words[len(t.Words)-1]
	if len(last) < minExpand || strings.IndexFunc(last, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) >= 0 {
		return nil, nil
	}
	// The words from last up to last with its final byte raised: those
	// that begin with last (ASCII: never 0xff).
	past := last[:len(last)-1] + string(last[len(last)-1]+1)
	words, err := x.wordsBetween(ctx, last, past, maxExpand)
	if !errors.Is(err, errPage) {
		if err != nil || len(words) == 0 {
			return nil, ctx.Err() // FTS5's prefix, unless the search is over
		}
		return words, nil
	}
	x.log("search index: " + err.Error() + ": the words of a prefix are read from fts5vocab")
	rows, err := x.query(ctx, `SELECT term FROM `+tableTerms+` WHERE term >= ? AND term < ? LIMIT ?`, last, past, maxExpand+1)
	if err != nil {
		// The prefix is then FTS5's, unless the search is over.
		return nil, ctx.Err()
	}
	defer rows.Close()
	words = words[:0]
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return nil, ctx.Err()
		}
		x.stats.rows.Add(1)
		words = append(words, w)
	}
	if rows.Err() != nil || len(words) > maxExpand {
		return nil, ctx.Err()
	}
	return words, nil
}

// prefixWords is expandPrefix, kept in prefixes (when not nil) by the
// prefix's words.
func (x *Index) prefixWords(ctx context.Context, t Term, prefixes map[string][]string) ([]string, error) {
	if t.Kind != Prefix {
		return nil, nil
	}
	key := strings.Join(t.Words, " ")
	if words, ok := prefixes[key]; ok {
		return words, nil
	}
	words, err := x.expandPrefix(ctx, t)
	if err == nil && prefixes != nil {
		prefixes[key] = words
	}
	return words, err
}

// quoteFTS makes s an FTS5 string: every character taken as itself, the
// tokenizer making it a phrase.
func quoteFTS(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sqlBuilder gathers the conditions of a statement.
type sqlBuilder struct {
	conds []string
	args  []any
}

func (b *sqlBuilder) add(cond string, args ...any) {
	b.conds = append(b.conds, cond)
	b.args = append(b.args, args...)
}

// compile makes the statement of a query: ranked, its rows carry FTS5's
// rank (when the query has words to find), else the entries' time.
// prefixes, when not nil, keeps the words each prefix is read as
// (expandPrefix) for the query's next statement: a search compiles its
// query twice, unranked and ranked.
func (x *Index) compile(ctx context.Context, q *Query, scope Scope, ranked bool, prefixes map[string][]string) (*compiled, error) {
	c := &compiled{}
	pos := map[string][]string{}
	neg := map[string][]string{}
	type mixed struct{ tri, words string }
	var mix []mixed
	for _, c := range q.Clauses {
		by := map[string][]string{}
		for _, t := range c.Any {
			words, err := x.prefixWords(ctx, t, prefixes)
			if err != nil {
				return nil, err
			}
			table, expr := ftsTerm(t, words)
			by[table] = append(by[table], expr)
		}
		switch {
		case c.Not:
			for table, exprs := range by {
				neg[table] = append(neg[table], exprs...)
			}
		case len(by) == 1:
			for table, exprs := range by {
				pos[table] = append(pos[table], "("+strings.Join(exprs, " OR ")+")")
			}
		default:
			mix = append(mix, mixed{strings.Join(by[tableTri], " OR "), strings.Join(by[tableWords], " OR ")})
		}
	}

	// The entries' own conditions, on the id expression id.
	var ent sqlBuilder
	var idConds []func(id string) (string, []any)
	needEntries := false
	for _, f := range q.Filters {
		switch f.Key {
		case KeyRole:
			op := "IN"
			if f.Not {
				op = "NOT IN"
			}
			ent.add(fmt.Sprintf("entries.role %s (%s)", op, marks(len(f.Values))), anys(f.Values)...)
			needEntries = true
		case KeyModel:
			models, err := x.models(ctx, f.Values)
			if err != nil {
				return nil, err
			}
			switch {
			case !f.Not && len(models) == 0:
				return &compiled{empty: true}, nil
			case !f.Not:
				ent.add(fmt.Sprintf("entries.model IN (%s)", marks(len(models))), anys(models)...)
			case len(models) > 0:
				ent.add(fmt.Sprintf("(entries.model IS NULL OR entries.model NOT IN (%s))", marks(len(models))), anys(models)...)
			}
			needEntries = true
		case KeyTool:
			// Asked of each row the text index (or a time range) gives; a
			// query of other filters alone takes the tool's entries from
			// the index of names.
			op, in := "EXISTS", "IN"
			if f.Not {
				op, in = "NOT EXISTS", "NOT IN"
			}
			vals := anys(f.Values)
			timed := !math.IsNaN(q.Since) || !math.IsNaN(q.Until)
			idConds = append(idConds, func(id string) (string, []any) {
				if id == "entries.rowid" && !timed {
					return fmt.Sprintf("%s %s (SELECT entry FROM tools WHERE name IN (%s))", id, in, marks(len(vals))), vals
				}
				return fmt.Sprintf("%s (SELECT 1 FROM tools WHERE tools.entry = %s AND tools.name IN (%s))", op, id, marks(len(vals))), vals
			})
		case KeyLabel:
			ids, err := x.labelled(ctx, f.Values)
			if err != nil {
				return nil, err
			}
			switch {
			case !f.Not && len(ids) == 0:
				return &compiled{empty: true}, nil
			case len(ids) > 0:
				op := "IN"
				if f.Not {
					op = "NOT IN"
				}
				vals := anys(ids)
				idConds = append(idConds, func(id string) (string, []any) {
					return fmt.Sprintf("%s %s (%s)", id, op, marks(len(vals))), vals
				})
			}
		}
	}
	if !math.IsNaN(q.Since) {
		ent.add("entries.time >= ?", int64(q.Since))
		needEntries = true
	}
	if !math.IsNaN(q.Until) {
		ent.add("entries.time < ?", int64(q.Until))
		needEntries = true
	}

	var b sqlBuilder
	var from, id, cols string
	driver := ""
	switch {
	case len(pos[tableTri]) > 0:
		driver = tableTri
	case len(pos[tableWords]) > 0:
		driver = tableWords
	}
	switch {
	case driver != "":
		match := strings.Join(pos[driver], " AND ")
		for _, table := range []string{tableTri, tableWords} {
			if n := neg[table]; len(n) > 0 {
				c.nots = append(c.nots, notStmt{fmt.Sprintf("SELECT rowid FROM %s WHERE %s MATCH ? AND rowid <= ? ORDER BY rowid DESC", table, table), strings.Join(n, " OR ")})
			}
		}
		id = driver + ".rowid"
		from = driver
		rank := "0"
		if ranked {
			rank = driver + ".rank"
		}
		cols = id + ", " + rank + ", NULL"
		if needEntries || !ranked {
			from += " CROSS JOIN entries ON entries.rowid = " + id
			cols = id + ", " + rank + ", entries.time"
		}
		c.ranked = ranked
		b.add(driver+" MATCH ?", match)
	case len(mix) > 0:
		m := mix[0]
		mix = mix[1:]
		from = "(SELECT rowid AS id FROM tri WHERE tri MATCH ? UNION SELECT rowid AS id FROM words WHERE words MATCH ?) AS m CROSS JOIN entries ON entries.rowid = m.id"
		b.args = append(b.args, m.tri, m.words)
		id = "m.id"
		cols = "m.id, 0, entries.time"
	default:
		from = "entries"
		id = "entries.rowid"
		cols = "entries.rowid, 0, entries.time"
		b.add("entries.role != ''")
		if ranges := x.fileRanges(q, scope); ranges != nil {
			var or []string
			var args []any
			for _, f := range ranges {
				or = append(or, "entries.rowid BETWEEN ? AND ?")
				args = append(args, rowid(f, 0), rowid(f, 1<<32-1))
			}
			if len(or) == 0 {
				return &compiled{empty: true}, nil
			}
			b.add("("+strings.Join(or, " OR ")+")", args...)
		}
	}
	for _, table := range []string{tableTri, tableWords} {
		if table == driver {
			continue
		}
		if p := pos[table]; len(p) > 0 {
			b.add(fmt.Sprintf("%s IN (SELECT rowid FROM %s WHERE %s MATCH ?)", id, table, table), strings.Join(p, " AND "))
		}
		if n := neg[table]; len(n) > 0 && driver == "" {
			b.add(fmt.Sprintf("%s NOT IN (SELECT rowid FROM %s WHERE %s MATCH ?)", id, table, table), strings.Join(n, " OR "))
		}
	}
	for _, m := range mix {
		b.add(fmt.Sprintf("%s IN (SELECT rowid FROM tri WHERE tri MATCH ? UNION SELECT rowid FROM words WHERE words MATCH ?)", id), m.tri, m.words)
	}
	b.conds = append(b.conds, ent.conds...)
	b.args = append(b.args, ent.args...)
	for _, c := range idConds {
		cond, args := c(id)
		b.add(cond, args...)
	}
	c.sql = "SELECT " + cols + " FROM " + from
	if len(b.conds) > 0 {
		c.sql += " WHERE " + strings.Join(b.conds, " AND ")
	}
	if driver != "" {
		c.inFile = c.sql + " AND " + id + " BETWEEN ? AND ? ORDER BY " + id
	}
	// Newest sessions first, each from its end (see newID): a pass that
	// stops early has read the newest. A time range alone is read from
	// the index of times, newest first.
	order := id
	if from == "entries" && (!math.IsNaN(q.Since) || !math.IsNaN(q.Until)) {
		order = "entries.time"
	}
	c.sql += " ORDER BY " + order + " DESC"
	c.args = b.args
	return c, nil
}

func anys[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// models are the models the index knows that hold one of values.
func (x *Index) models(ctx context.Context, values []string) ([]string, error) {
	rows, err := x.query(ctx, `SELECT model FROM models`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, err
		}
		x.stats.rows.Add(1)
		if anyIn(Fold(m), values) {
			out = append(out, m)
		}
	}
	return out, rows.Err()
}

// labelled are the entries whose label (the last label entry's for them,
// as pi's getLabel gives it) holds one of values.
func (x *Index) labelled(ctx context.Context, values []string) ([]int64, error) {
	rows, err := x.query(ctx, `SELECT entry, target, label FROM labels ORDER BY entry`)
	if err != nil {
		return nil, err
	}
	type key struct {
		file   int64
		target string
	}
	current := map[key]string{}
	for rows.Next() {
		var e int64
		var target, label string
		if err := rows.Scan(&e, &target, &label); err != nil {
			rows.Close()
			return nil, err
		}
		x.stats.rows.Add(1)
		current[key{fileOf(e), target}] = label
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []int64
	for k, label := range current {
		if label == "" || !anyIn(Fold(label), values) {
			continue
		}
		ids, err := x.entriesByID(ctx, k.file, k.target)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// entriesByID are the rows of a file's entries of an id.
func (x *Index) entriesByID(ctx context.Context, file int64, eid string) ([]int64, error) {
	rows, err := x.query(ctx, `SELECT rowid FROM entries WHERE rowid BETWEEN ? AND ? AND eid = ?`, rowid(file, 0), rowid(file, 1<<32-1), eid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		x.stats.rows.Add(1)
		out = append(out, id)
	}
	return out, rows.Err()
}

// maxRanges bounds the files a query of filters alone is narrowed to in
// SQL; past it, they are filtered as the rows come.
const maxRanges = 200

// fileRanges are the files a query of filters alone can match, when its
// scope or name: filters narrow them to few (nil: any).
func (x *Index) fileRanges(q *Query, scope Scope) []int64 {
	named := false
	for _, f := range q.Filters {
		named = named || (f.Key == KeyName && !f.Not)
	}
	if scope.Project == "" && !named {
		return nil
	}
	ff := x.filter(q, Scope{Project: scope.Project})
	x.mu.Lock()
	ids := make([]int64, 0, len(x.files))
	for id := range x.files {
		ids = append(ids, id)
	}
	x.mu.Unlock()
	var out []int64
	for _, id := range ids {
		if ff.ok(id) {
			out = append(out, id)
			if len(out) > maxRanges {
				return nil
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if out == nil {
		out = []int64{}
	}
	return out
}
