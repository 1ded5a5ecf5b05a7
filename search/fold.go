package search

import (
	"sort"
	"strings"
	"unicode/utf8"
)

//go:generate go run gentables.go

// fold is what a character matches as, as SQLite's FTS5 tokenizers fold
// it (case folded, diacritics removed): -1 when it is dropped (a combining
// mark).
func fold(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	i := sort.Search(len(folds), func(i int) bool { return folds[i][0] >= r })
	if i < len(folds) && folds[i][0] == r {
		return folds[i][1]
	}
	return r
}

// isSeparator tells whether unicode61 takes r as a separator between
// words (everything that is not a letter, a digit or private use, as
// SQLite's Unicode tables class characters).
func isSeparator(r rune) bool {
	if r < utf8.RuneSelf {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}
	i := sort.Search(len(separators), func(i int) bool { return separators[i][1] >= r })
	return i < len(separators) && separators[i][0] <= r
}

// Fold is s as the index matches it: each character folded, the dropped
// ones left out.
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if f := fold(r); f >= 0 {
			b.WriteRune(f)
		}
	}
	return b.String()
}

// Words splits s into the words unicode61 finds in it, folded: runs of
// characters that are not separators.
func Words(s string) []string {
	var out []string
	var b strings.Builder
	for _, r := range s {
		if isSeparator(r) {
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
			continue
		}
		if f := fold(r); f >= 0 {
			b.WriteRune(f)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}
