// Package mangen turns a Markdown reference page into a roff man page, so
// that the page users read with man and the one they read on the web are
// one text.
//
// It reads a small subset of Markdown and refuses anything else, so that no
// part of the reference is silently left out of the man page:
//
//   - "# name(section)" once, first: the page's title. What follows it up to
//     the first "##" heading is about the Markdown file itself and is left
//     out of the man page.
//   - "## Heading" is a section (.SH, in capitals), "### Heading" a
//     subsection (.SS).
//   - Paragraphs; "- " and "1. " list items, whose continuation lines are
//     indented; fenced code blocks (```), shown as they are.
//   - Tables: each row becomes a tagged paragraph (.TP), its first cell the
//     tag, its second the text, and any further cell a paragraph of its own
//     that starts with the column's heading.
//   - Inline: `code` and **strong** in bold, *emphasis* in italics, and a
//     link [text](target) as its text.
//
// In the section named Name, " — " becomes the " \- " that whatis and
// apropos look for. Characters outside ASCII are written as groff's
// \[uXXXX] escapes, so the page needs no input encoding.
package mangen

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Page is what goes in the man page's .TH line besides the title.
type Page struct {
	// Source names the Markdown file, for the comment at the top.
	Source string
	// Generator is the command that remakes the page, for the same comment.
	Generator string
	// Center is the .TH line's centre header ("User Commands").
	Center string
}

// Reference makes pifs.1 of docs/reference.md.
func Reference(md []byte) ([]byte, error) {
	return Page{Source: "docs/reference.md", Generator: "go generate ./cmd/pifs", Center: "User Commands"}.Convert(md)
}

// Convert turns the Markdown reference md into a man page.
func (p Page) Convert(md []byte) ([]byte, error) {
	c := converter{lines: strings.Split(strings.ReplaceAll(string(md), "\r\n", "\n"), "\n")}
	fmt.Fprintf(&c.out, ".\\\" Generated from %s by %s: edit that file, not this one.\n", p.Source, p.Generator)
	if err := c.run(p); err != nil {
		return nil, err
	}
	return c.out.Bytes(), nil
}

type converter struct {
	lines []string
	i     int
	out   bytes.Buffer
	// section is the current ## heading, as written.
	section string
	// headed: nothing was written since the last heading, which starts a
	// paragraph of its own.
	headed bool
}

// para starts a paragraph, unless a heading just did.
func (c *converter) para() {
	if !c.headed {
		c.out.WriteString(".PP\n")
	}
	c.headed = false
}

func (c *converter) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", c.i+1, fmt.Sprintf(format, args...))
}

var titleRE = regexp.MustCompile(`^# ([a-z0-9_.-]+)\(([0-9a-z]+)\)$`)

func (c *converter) run(p Page) error {
	for c.i < len(c.lines) && strings.TrimSpace(c.lines[c.i]) == "" {
		c.i++
	}
	if c.i == len(c.lines) {
		return fmt.Errorf("the page is empty")
	}
	m := titleRE.FindStringSubmatch(c.lines[c.i])
	if m == nil {
		return c.errorf(`the page must start with "# name(section)", not %q`, c.lines[c.i])
	}
	fmt.Fprintf(&c.out, ".TH %s %s \"\" %s %s\n", strings.ToUpper(m[1]), m[2], quote(m[1]), quote(p.Center))
	// Up to the first section: about the Markdown file, not for the page.
	for c.i++; c.i < len(c.lines) && !strings.HasPrefix(c.lines[c.i], "## "); c.i++ {
	}
	if c.i == len(c.lines) {
		return fmt.Errorf("the page has no section")
	}
	for c.i < len(c.lines) {
		line := c.lines[c.i]
		switch {
		case strings.TrimSpace(line) == "":
			c.i++
		case strings.HasPrefix(line, "## "):
			c.section = strings.TrimSpace(line[3:])
			fmt.Fprintf(&c.out, ".SH %s\n", quote(strings.ToUpper(plain(c.section))))
			c.headed = true
			c.i++
		case strings.HasPrefix(line, "### "):
			fmt.Fprintf(&c.out, ".SS %s\n", quote(plain(strings.TrimSpace(line[4:]))))
			c.headed = true
			c.i++
		case strings.HasPrefix(line, "#"):
			return c.errorf("only ## and ### headings are supported: %q", line)
		case strings.HasPrefix(line, "```"):
			if err := c.code(); err != nil {
				return err
			}
		case strings.HasPrefix(line, "|"):
			if err := c.table(); err != nil {
				return err
			}
		case strings.HasPrefix(line, "- "), numbered(line) != "":
			if err := c.list(); err != nil {
				return err
			}
		case strings.HasPrefix(line, " "), strings.HasPrefix(line, "\t"):
			return c.errorf("an indented line outside a list (use a fenced code block): %q", line)
		case strings.HasPrefix(line, ">"), strings.HasPrefix(line, "<"):
			return c.errorf("block quotes and HTML are not supported: %q", line)
		default:
			c.paragraph()
		}
	}
	return nil
}

// numbered returns the marker of a numbered list item ("1.") or "".
func numbered(line string) string {
	n := 0
	for n < len(line) && line[n] >= '0' && line[n] <= '9' {
		n++
	}
	if n > 0 && strings.HasPrefix(line[n:], ". ") {
		return line[:n+1]
	}
	return ""
}

// paragraph takes lines up to a blank line or the start of another block.
func (c *converter) paragraph() {
	var text []string
	for ; c.i < len(c.lines); c.i++ {
		line := c.lines[c.i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "```") ||
			strings.HasPrefix(line, "|") || strings.HasPrefix(line, "- ") || numbered(line) != "" {
			break
		}
		text = append(text, strings.TrimSpace(line))
	}
	c.para()
	c.text(strings.Join(text, "\n"))
}

// list takes the items of a list: each item's first line and its
// indented continuation lines.
func (c *converter) list() error {
	for c.i < len(c.lines) {
		line := c.lines[c.i]
		var tag, first string
		switch {
		case strings.HasPrefix(line, "- "):
			tag, first = `\(bu`, line[2:]
		case numbered(line) != "":
			tag = numbered(line)
			first = line[len(tag)+1:]
		default:
			return nil
		}
		text := []string{strings.TrimSpace(first)}
		for c.i++; c.i < len(c.lines); c.i++ {
			l := c.lines[c.i]
			if !strings.HasPrefix(l, "  ") || strings.TrimSpace(l) == "" {
				break
			}
			if strings.HasPrefix(strings.TrimSpace(l), "- ") || strings.HasPrefix(strings.TrimSpace(l), "```") {
				return c.errorf("nested lists and code blocks in a list item are not supported: %q", l)
			}
			text = append(text, strings.TrimSpace(l))
		}
		width := 2
		if tag != `\(bu` {
			width = 4
		}
		fmt.Fprintf(&c.out, ".IP %s %d\n", tag, width)
		c.text(strings.Join(text, "\n"))
		if c.i == len(c.lines) {
			return nil
		}
		next := c.lines[c.i]
		if strings.TrimSpace(next) != "" && !strings.HasPrefix(next, "- ") && numbered(next) == "" {
			// Markdown would read it as part of the item; say so rather
			// than guess.
			return c.errorf("a line that continues a list item must be indented: %q", next)
		}
		// A blank line between items keeps the list; anything else ends it.
		if c.i+1 < len(c.lines) && strings.TrimSpace(next) == "" &&
			(strings.HasPrefix(c.lines[c.i+1], "- ") || numbered(c.lines[c.i+1]) != "") {
			c.i++
		}
	}
	return nil
}

// code copies a fenced block as it is, without filling.
func (c *converter) code() error {
	start := c.i
	c.para()
	c.out.WriteString(".RS 4\n.nf\n")
	for c.i++; c.i < len(c.lines); c.i++ {
		line := c.lines[c.i]
		if strings.TrimSpace(line) == "```" {
			c.i++
			c.out.WriteString(".fi\n.RE\n")
			return nil
		}
		c.out.WriteString(lineStart(escape(line, true)) + "\n")
	}
	c.i = start
	return c.errorf("a code block that does not end")
}

var delimRowRE = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)

// table writes each row of a table as a tagged paragraph.
func (c *converter) table() error {
	head := cells(c.lines[c.i])
	c.i++
	if c.i == len(c.lines) || !delimRowRE.MatchString(c.lines[c.i]) {
		return c.errorf("a table needs a row of dashes under its heading")
	}
	if len(head) < 2 {
		return c.errorf("a table needs at least two columns")
	}
	for c.i++; c.i < len(c.lines) && strings.HasPrefix(c.lines[c.i], "|"); c.i++ {
		row := cells(c.lines[c.i])
		if len(row) != len(head) {
			return c.errorf("a row of %d cells in a table of %d columns", len(row), len(head))
		}
		if row[0] == "" {
			return c.errorf("a row without its first cell (the tag)")
		}
		c.out.WriteString(".TP\n")
		c.text(row[0])
		c.text(row[1])
		for k := 2; k < len(row); k++ {
			if row[k] != "" {
				c.out.WriteString(".IP\n")
				c.text(head[k] + ": " + row[k])
			}
		}
	}
	return nil
}

// cells splits a table row at the bars that are not escaped (\|).
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// text writes filled text with its inline markup, one output line per
// input line.
func (c *converter) text(s string) {
	c.headed = false
	s = inline(s)
	if strings.EqualFold(c.section, "name") {
		s = strings.Replace(s, ` \[u2014] `, ` \- `, 1)
	}
	for _, line := range strings.Split(s, "\n") {
		c.out.WriteString(lineStart(line) + "\n")
	}
}

// lineStart keeps a line that starts with a dot or an apostrophe from
// being read as a request.
func lineStart(line string) string {
	if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
		return `\&` + line
	}
	return line
}

// inline converts code spans, strong and emphasis, and links, escaping
// everything else. Each closing mark is found in a table of where the next
// one is, so that text full of unclosed marks takes linear time.
func inline(s string) string {
	next := newNexts(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '`':
			if end := next.at(next.backtick, i+1); end >= 0 {
				b.WriteString(`\fB` + escape(s[i+1:end], true) + `\fR`)
				i = end + 1
				continue
			}
		case strings.HasPrefix(s[i:], "**"):
			if end := next.at(next.stars, i+2); end > i+2 {
				b.WriteString(`\fB` + strings.ReplaceAll(inline(s[i+2:end]), `\fR`, `\fB`) + `\fR`)
				i = end + 2
				continue
			}
		case s[i] == '*' && i+1 < len(s) && s[i+1] != ' ':
			if end := next.at(next.star, i+1); end > i+1 {
				b.WriteString(`\fI` + strings.ReplaceAll(inline(s[i+1:end]), `\fR`, `\fI`) + `\fR`)
				i = end + 1
				continue
			}
		case s[i] == '[':
			// [text](target): text without ']', target without ')' or blanks.
			if close := next.at(next.bracket, i+1); close > i+1 && close+1 < len(s) && s[close+1] == '(' {
				if paren := next.at(next.paren, close+2); paren > close+2 {
					if blank := next.at(next.blank, close+2); blank < 0 || blank > paren {
						b.WriteString(inline(s[i+1 : close]))
						i = paren + 1
						continue
					}
				}
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(escape(string(r), false))
		i += size
	}
	return b.String()
}

// nexts tells, for each offset of a text, where the next of each mark is
// (-1: none).
type nexts struct {
	backtick, stars, star, bracket, paren, blank []int
}

func newNexts(s string) nexts {
	n := nexts{}
	tables := []*[]int{&n.backtick, &n.stars, &n.star, &n.bracket, &n.paren, &n.blank}
	for _, t := range tables {
		*t = make([]int, len(s)+1)
		(*t)[len(s)] = -1
	}
	for i := len(s) - 1; i >= 0; i-- {
		for _, t := range tables {
			(*t)[i] = (*t)[i+1]
		}
		switch s[i] {
		case '`':
			n.backtick[i] = i
		case '*':
			n.star[i] = i
			if i+1 < len(s) && s[i+1] == '*' {
				n.stars[i] = i
			}
		case ']':
			n.bracket[i] = i
		case ')':
			n.paren[i] = i
		case ' ', '\t', '\n', '\r', '\f':
			n.blank[i] = i
		}
	}
	return n
}

// at is table's entry for offset i, or -1 past the end.
func (nexts) at(table []int, i int) int {
	if i >= len(table) {
		return -1
	}
	return table[i]
}

// escape makes text safe for roff: backslashes, and non-ASCII characters
// as \[uXXXX]; in code, hyphens are minus signs so that flags copy as
// typed.
func escape(s string, code bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-' && code:
			b.WriteString(`\-`)
		case r == '\t':
			b.WriteString("        ")
		case r >= utf8.RuneSelf:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// plain is a heading's text without its inline markup.
func plain(s string) string {
	return escape(strings.NewReplacer("`", "", "**", "", "*", "").Replace(s), false)
}

// quote makes a macro argument of s.
func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}
