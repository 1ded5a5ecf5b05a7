package search

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind tells how a term of a query matches an entry's text.
type Kind uint8

const (
	// Substring: a word of 3 or more characters, found anywhere in the
	// text, inside words, identifiers and paths too (case and accents
	// folded).
	Substring Kind = iota
	// Phrase: words (runs of letters and digits) that follow one another
	// in the text, whatever separates them: a quoted phrase, or a word of
	// fewer than 3 characters.
	Phrase
	// Prefix: as Phrase, the last word only beginning the text's word.
	Prefix
)

// Term is one thing a query looks for in an entry's text.
type Term struct {
	Kind Kind
	// Text is the term as written (without quotes or star); Words are
	// its words, folded (Phrase and Prefix).
	Text  string
	Words []string
}

// Clause is a term, or terms joined by OR, that an entry must match (or,
// Not, must not).
type Clause struct {
	Any []Term
	Not bool
}

// Filter keys, as a query writes them before a colon.
const (
	KeyRole  = "role"
	KeyTool  = "tool"
	KeyModel = "model"
	KeySince = "since"
	KeyUntil = "until"
	KeyLabel = "label"
	KeyName  = "name"
)

// Filter is a filter of a query: the entry's field must match one of
// Values (or, Not, none of them).
type Filter struct {
	Key    string
	Values []string
	Not    bool
}

// Query is a parsed query.
type Query struct {
	Clauses []Clause
	Filters []Filter
	// Since and Until bound the entry's time, in ms since the epoch:
	// Since <= time < Until; NaN when not given.
	Since, Until float64
}

// Limits of a query: a query is a file name, 255 bytes at most, but
// nothing holds a caller to that.
const (
	MaxQuery = 1024 // bytes
	MaxTerms = 32   // terms and filters
)

// SyntaxError is why a query cannot be parsed.
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return "search: " + e.Msg }

func errorf(format string, a ...any) error {
	return &SyntaxError{fmt.Sprintf(format, a...)}
}

// Parse parses a query (see README). Dates in since: and until: are days
// (and times) in loc (nil: UTC).
func Parse(q string, loc *time.Location) (*Query, error) {
	if loc == nil {
		loc = time.UTC
	}
	if len(q) > MaxQuery {
		return nil, errorf("the query is longer than %d bytes", MaxQuery)
	}
	if !utf8.ValidString(q) {
		return nil, errorf("the query is not valid UTF-8")
	}
	if strings.IndexByte(q, 0) >= 0 {
		return nil, errorf("the query holds a NUL character")
	}
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	if len(toks) > 2*MaxTerms {
		return nil, errorf("more than %d terms", MaxTerms)
	}
	out := &Query{Since: math.NaN(), Until: math.NaN()}
	n := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.or {
			return nil, errorf("OR must stand between two words, phrases or prefixes")
		}
		n++
		if n > MaxTerms {
			return nil, errorf("more than %d terms", MaxTerms)
		}
		if t.key != "" {
			if err := out.addFilter(t, loc); err != nil {
				return nil, err
			}
			if i+1 < len(toks) && toks[i+1].or {
				return nil, errorf("OR joins words, phrases and prefixes, not filters (%s:)", t.key)
			}
			continue
		}
		term, err := makeTerm(t)
		if err != nil {
			return nil, err
		}
		c := Clause{Any: []Term{term}, Not: t.not}
		for i+1 < len(toks) && toks[i+1].or {
			if c.Not {
				return nil, errorf("OR joins words, phrases and prefixes, not exclusions (-%s)", t.text)
			}
			if i+2 >= len(toks) {
				return nil, errorf("OR must stand between two words, phrases or prefixes")
			}
			next := toks[i+2]
			if next.or || next.key != "" || next.not {
				return nil, errorf("OR joins words, phrases and prefixes")
			}
			n++
			if n > MaxTerms {
				return nil, errorf("more than %d terms", MaxTerms)
			}
			term, err := makeTerm(next)
			if err != nil {
				return nil, err
			}
			c.Any = append(c.Any, term)
			i += 2
		}
		out.Clauses = append(out.Clauses, c)
	}
	if !out.finds() {
		if len(toks) == 0 {
			return nil, errorf("the query is empty")
		}
		return nil, errorf("the query only excludes: give a word, a phrase, a prefix or a filter to find")
	}
	return out, nil
}

// finds tells whether the query has anything positive to find.
func (q *Query) finds() bool {
	for _, c := range q.Clauses {
		if !c.Not {
			return true
		}
	}
	for _, f := range q.Filters {
		if !f.Not {
			return true
		}
	}
	return !math.IsNaN(q.Since) || !math.IsNaN(q.Until)
}

// token is a lexed piece of a query.
type token struct {
	text   string // word, phrase or filter value, without quotes or star
	quoted bool
	star   bool
	not    bool
	or     bool
	key    string // a filter's key
}

var filterKeys = []string{KeyRole, KeyTool, KeyModel, KeySince, KeyUntil, KeyLabel, KeyName}

func lex(q string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(q) {
			r, n := utf8.DecodeRuneInString(q[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += n
		}
		if i >= len(q) {
			return toks, nil
		}
		var t token
		if q[i] == '-' {
			t.not = true
			i++
			if i >= len(q) || isSpaceAt(q, i) {
				return nil, errorf("- must be followed by what to exclude")
			}
		}
		start := i
		if q[i] == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				return nil, errorf("a quote is not closed: %s", q[i:])
			}
			t.text, t.quoted = q[i+1:i+1+end], true
			i += end + 2
			if i < len(q) && q[i] == '*' {
				t.star = true
				i++
			}
			if i < len(q) && !isSpaceAt(q, i) {
				return nil, errorf("a space must follow a closing quote: %s", q[start:])
			}
			toks = append(toks, t)
			continue
		}
		for i < len(q) && !isSpaceAt(q, i) {
			i++
		}
		word := q[start:i]
		if word == "OR" && !t.not {
			toks = append(toks, token{or: true})
			continue
		}
		if key, val, ok := strings.Cut(word, ":"); ok && isFilterKey(strings.ToLower(key)) {
			t.key = strings.ToLower(key)
			if strings.HasPrefix(val, `"`) {
				// A quoted value may hold spaces.
				end := strings.IndexByte(q[start+len(key)+2:], '"')
				if end < 0 {
					return nil, errorf("a quote is not closed: %s", q[start:])
				}
				i = start + len(key) + 2 + end + 1
				val = q[start+len(key)+2 : i-1]
				if i < len(q) && !isSpaceAt(q, i) {
					return nil, errorf("a space must follow a closing quote: %s", q[start:])
				}
			}
			if strings.TrimSpace(val) == "" {
				return nil, errorf("%s: needs a value", t.key)
			}
			t.text = val
			toks = append(toks, t)
			continue
		}
		if strings.HasSuffix(word, "*") {
			t.star = true
			word = word[:len(word)-1]
			if word == "" || strings.HasSuffix(word, "*") {
				return nil, errorf("a prefix must hold a word before its star: %s", q[start:i])
			}
		}
		t.text = word
		toks = append(toks, t)
	}
}

func isSpaceAt(q string, i int) bool {
	r, _ := utf8.DecodeRuneInString(q[i:])
	return unicode.IsSpace(r)
}

func isFilterKey(k string) bool {
	for _, f := range filterKeys {
		if f == k {
			return true
		}
	}
	return false
}

// makeTerm makes a lexed word, phrase or prefix a term.
func makeTerm(t token) (Term, error) {
	words := Words(t.text)
	switch {
	case t.star:
		if len(words) == 0 {
			return Term{}, errorf("%s*: a prefix must hold a letter or digit", t.text)
		}
		return Term{Kind: Prefix, Text: t.text, Words: words}, nil
	case t.quoted:
		if len(words) == 0 {
			return Term{}, errorf("\"%s\": a phrase must hold a letter or digit", t.text)
		}
		return Term{Kind: Phrase, Text: t.text, Words: words}, nil
	case utf8.RuneCountInString(Fold(t.text)) >= 3:
		return Term{Kind: Substring, Text: t.text}, nil
	}
	if len(words) == 0 {
		return Term{}, errorf("%s: a word of fewer than 3 characters must hold a letter or digit", t.text)
	}
	return Term{Kind: Phrase, Text: t.text, Words: words}, nil
}

func (q *Query) addFilter(t token, loc *time.Location) error {
	val := t.text
	switch t.key {
	case KeySince, KeyUntil:
		if t.not {
			return errorf("-%s: cannot be excluded (use %s:)", t.key, map[string]string{KeySince: KeyUntil, KeyUntil: KeySince}[t.key])
		}
		start, end, err := parseTime(val, loc)
		if err != nil {
			return errorf("%s:%s: %v", t.key, val, err)
		}
		if t.key == KeySince {
			if !math.IsNaN(q.Since) {
				return errorf("since: is given twice")
			}
			q.Since = start
		} else {
			if !math.IsNaN(q.Until) {
				return errorf("until: is given twice")
			}
			q.Until = end
		}
		return nil
	case KeyRole:
		val = strings.ToLower(val)
		ok := false
		for _, r := range Roles {
			ok = ok || r == val
		}
		if !ok {
			return errorf("role:%s: a role is one of %s", t.text, strings.Join(Roles, ", "))
		}
	case KeyTool:
		val = strings.ToLower(val)
	default: // model, label, name: found anywhere in the value, folded
		val = Fold(val)
		if val == "" {
			return errorf("%s:%s: needs a value", t.key, t.text)
		}
	}
	for i := range q.Filters {
		f := &q.Filters[i]
		if f.Key == t.key && f.Not == t.not {
			f.Values = append(f.Values, val)
			return nil
		}
	}
	q.Filters = append(q.Filters, Filter{Key: t.key, Values: []string{val}, Not: t.not})
	return nil
}

// parseTime reads a day (2025-05-01), a minute (2025-05-01T10:30) or a
// second (2025-05-01T10:30:15), in loc unless it gives a zone (Z or
// ±hh:mm): its start and the start of the next one, in ms since the
// epoch.
func parseTime(s string, loc *time.Location) (start, end float64, err error) {
	layouts := []struct {
		layout string
		unit   func(time.Time) time.Time
	}{
		{"2006-01-02", func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }},
		{"2006-01-02T15:04", func(t time.Time) time.Time { return t.Add(time.Minute) }},
		{"2006-01-02T15:04:05", func(t time.Time) time.Time { return t.Add(time.Second) }},
		{"2006-01-02T15:04Z07:00", func(t time.Time) time.Time { return t.Add(time.Minute) }},
		{"2006-01-02T15:04:05Z07:00", func(t time.Time) time.Time { return t.Add(time.Second) }},
	}
	for _, l := range layouts {
		t, err := time.ParseInLocation(l.layout, s, loc)
		if err == nil {
			return float64(t.UnixMilli()), float64(l.unit(t).UnixMilli()), nil
		}
	}
	return 0, 0, fmt.Errorf("a date is written 2025-05-01, 2025-05-01T10:30 or 2025-05-01T10:30:15 (Z or +02:00 after it for another zone)")
}

// Highlights are the texts whose place in an entry's text an excerpt
// shows: the query's positive terms.
func (q *Query) Highlights() []string {
	var out []string
	for _, c := range q.Clauses {
		if c.Not {
			continue
		}
		for _, t := range c.Any {
			if t.Kind == Substring {
				out = append(out, t.Text)
			} else {
				out = append(out, t.Words[0])
			}
		}
	}
	return out
}
