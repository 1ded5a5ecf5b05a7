package search

// README is the query syntax, as the mount serves it in search/README.
const README = `Searching pi sessions

A query is a folder name under search/: ls search/'hash map'/ lists the
sessions with an entry that matches; search/'hash map'/hits has one line
per matching entry, best first. Every entry of every branch is searched,
abandoned branches too.

What an entry must hold
  word          every word of the query must be in the same entry, in any
                order, case and accents ignored (Crème finds creme).
                A word of 3 or more characters is found anywhere, also
                inside words, identifiers and paths: Manager finds
                SessionManager, main.go finds cmd/main.go, and text
                written without spaces (Chinese, Japanese) is found by
                any 3 characters of it.
                A word of 1 or 2 characters is found as a whole word.
  "a phrase"    these words one after the other, as whole words, whatever
                separates them ("hash map" finds hash-map and Hash Map).
  prefix*       a word that begins so (auth* finds authentication).
  -word         excludes the entries that hold it (also -"a phrase",
                -prefix*, -role:tool ...).
  a OR b        either (OR in capitals; it joins words, phrases and
                prefixes: error OR warning timeout needs timeout and
                error or warning).

Filters (several of the same kind: any of them)
  role:user | assistant | tool | bash | summary | custom | name | label
                whose entry: a user message; an assistant message (its
                text, thinking and tool calls); a tool result; a bash
                command run by the user (!cmd); a branch summary or a
                compaction; a custom or hidden message or custom entry;
                a session name (session_info); a label.
  tool:NAME     an assistant message that called tool NAME, or the result
                of a call of NAME (tool:edit, tool:bash).
  model:ID      an assistant message of a model whose provider/model holds
                ID (model:opus, model:anthropic/).
  since:DATE    at or after DATE: 2025-05-01, 2025-05-01T10:30 or
  until:DATE    2025-05-01T10:30:15, local time unless followed by Z or
                +02:00; until: takes in all of that day, minute or second.
  label:TEXT    an entry whose label (as /tree shows it) holds TEXT.
  name:TEXT     in a session whose name holds TEXT.
  Quote a value with spaces: name:"auth refactor".

Hits come best first: ranked by relevance (BM25) when the query has
words to find and matches at most 5,000 entries; otherwise (a query of
filters alone, or one that matches more) newest first. A project's
search/ of a common word reads that project's sessions one at a time,
and then its hits come newest first too. A query that
matches more than 5,000 entries is answered from the newest 5,000 (the
sessions that began last, each from its end), and hits' first line says
so: the links and hits are of those. A query with words to exclude reads
at most 10,000 of the entries that hold what it looks for, the newest
(its first line says so when there were more). A query that only
excludes is refused.

What is searched, per entry
  user messages; assistant text, thinking, each tool call's name and the
  values of its arguments; tool results; bash commands and their output;
  custom and hidden messages and custom entries' data; branch summaries
  and compactions; session names; labels. The text is what pi shows
  (JSON escapes decoded). A part longer than 16 KiB (a long tool output)
  is searched in its first and last 8 KiB.

A query that cannot be read is refused: ls of it fails with "No such
file or directory", and why is in search/errors (the caller's own
queries, newest last) and in the log.
`

// ByFileOff is the mount's by-file/README when it keeps no index.
const ByFileOff = `by-file/ is empty: this mount keeps no full-text index of the store
(it was mounted with --index none, or the index could not be opened: the
mount's log says why).

With the index, by-file/<path>/ lists the sessions whose tool calls read,
wrote or edited that file (absolute paths; in a project folder, relative
to its cwd), newest first with ls -t, and modified/ those that changed it.
Mount again without --index none (or with --index DIR) to have it.
`
