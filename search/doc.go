// Package search is a full-text index of every entry of every session of a
// store (every branch, abandoned ones too), kept in one SQLite file beside
// the persistent cache and brought up to date incrementally: what a file
// gained since it was indexed is indexed alone, a file rewritten or
// replaced is indexed again, a file gone leaves.
//
// The text of an entry is what pi shows of it (Extract); queries (Parse,
// README) find words, substrings inside identifiers and paths, phrases,
// prefixes and filters, and answer with hits, excerpts and the sessions
// they are in (Search). The index also keeps the files each entry's tool
// calls touched (Options.Touches), to answer which sessions touched a
// file (TouchedBy) and which names under a folder lead to touched files
// (TouchedUnder).
//
// SQLite is modernc.org/sqlite, in Go: the binary stays static. Its FTS5
// gives the two indexes of the text, a trigram one for substrings and a
// unicode61 one for words (remove_diacritics 2: accents folded), both
// contentless: the text is read back from the session files for excerpts.
//
// It knows nothing of FUSE or of the mount's views.
package search
