package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
)

// The words a prefix begins are read from the words table's leaf pages.
// FTS5 keeps each segment's terms in order on its leaf pages, a page's
// terms listed in its footer, and in its %_idx table a row for each leaf
// page that holds a term (the page's number, a key at most its first
// term). fts5vocab tells the same words but counts each word's rows on the
// way: for a word in most entries, as long as reading them (22 to 27 ms
// of a `bench*` search of store A's 46). The pages are read as FTS5's file
// format lays them out (fts5_index.c: a page begins with two big-endian
// 16-bit fields, the second where its footer starts; the footer is a
// varint a term, its offset less the one before; a page's first term is
// its length and bytes, each other the length it shares with the term
// before, then its new bytes' length and the bytes). SQLite keeps that
// format readable across versions; a page that does not parse leaves the
// prefix to fts5vocab.

// errPage is a leaf page that does not parse as FTS5's.
var errPage = errors.New("search: a leaf page of the words table does not parse")

// termsPages gives, for every segment of the words table, the leaf pages
// that may hold terms from ?1 up to ?2 (as FTS5 keys them: the main
// index's byte '0', then the word): the last page keyed at or before ?1
// (the first page when none is) and those keyed after it, before ?2.
// Segments are found one index seek each.
const termsPages = `WITH RECURSIVE seg(id) AS (
	SELECT min(segid) FROM ` + tableWords + `_idx
	UNION ALL SELECT (SELECT min(segid) FROM ` + tableWords + `_idx WHERE segid > seg.id) FROM seg WHERE seg.id IS NOT NULL)
SELECT d.block FROM seg
JOIN ` + tableWords + `_idx i ON i.segid = seg.id AND i.term < ?2
	AND i.term >= coalesce((SELECT max(term) FROM ` + tableWords + `_idx WHERE segid = seg.id AND term <= ?1), x'')
JOIN ` + tableWords + `_data d ON d.id = (i.segid << 37) + (i.pgno >> 1)`

// mainIndex is the byte FTS5 puts before every term of a table's main
// index (its prefix indexes have others).
const mainIndex = '0'

// wordsBetween returns the words of the words table from lo up to hi
// (ASCII), sorted, when there are at most most of them; nil when there
// are more. A word whose rows were all deleted may be among them (its
// segment keeps it until a merge): it matches nothing.
func (x *Index) wordsBetween(ctx context.Context, lo, hi string, most int) ([]string, error) {
	klo, khi := append([]byte{mainIndex}, lo...), append([]byte{mainIndex}, hi...)
	rows, err := x.query(ctx, termsPages, klo, khi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seen := map[string]bool{}
	var page []byte
	for rows.Next() && len(seen) <= most {
		if err := rows.Scan(&page); err != nil {
			return nil, err
		}
		x.stats.rows.Add(1)
		err := pageTerms(page, func(term []byte) {
			if bytes.Compare(term, klo) >= 0 && bytes.Compare(term, khi) < 0 {
				seen[string(term[1:])] = true
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(seen) > most {
		return nil, nil
	}
	words := make([]string, 0, len(seen))
	for w := range seen {
		words = append(words, w)
	}
	slices.Sort(words)
	return words, nil
}

// pageTerms gives each term of an FTS5 leaf page to each, in order (the
// slice is reused).
func pageTerms(page []byte, each func(term []byte)) error {
	if len(page) < 4 {
		return errPage
	}
	foot := int(binary.BigEndian.Uint16(page[2:4]))
	if foot < 4 || foot > len(page) {
		return errPage
	}
	var term []byte
	off := 0
	for i, n := foot, 0; i < len(page); n++ {
		d, k := sqliteVarint(page[i:])
		if k == 0 {
			return errPage
		}
		i += k
		off += int(d)
		if d == 0 && n > 0 || off < 4 || off >= foot {
			return errPage
		}
		body := page[off:foot]
		keep := 0
		if n > 0 {
			shared, k := sqliteVarint(body)
			if k == 0 || shared > uint64(len(term)) {
				return errPage
			}
			keep, body = int(shared), body[k:]
		}
		size, k := sqliteVarint(body)
		if k == 0 || size > uint64(len(body)-k) {
			return errPage
		}
		term = append(term[:keep], body[k:k+int(size)]...)
		each(term)
	}
	return nil
}

// sqliteVarint decodes SQLite's varint (big-endian, 7 bits a byte, the
// ninth byte whole): the value and its length, 0 when b ends first.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
