package sessions

import (
	"bufio"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
)

// A reader that wants only the ends of long strings (the search index,
// which indexes a long text as its first and last few KB) reads a line
// too long for the scan's buffer through cutLine: in pieces, never whole,
// so that a 48 MB line costs it kilobytes, not the line and its text.

// CutOver is the length of text (decoded) from which cutLine cuts a
// string; below it a string is given whole.
const CutOver = 64 << 10

// cutOver and cutPiece (the raw length of the pieces a long string is
// decoded in) are variables for the tests, which make them small.
var (
	cutOver  = CutOver
	cutPiece = 16 << 10
)

// cutLine reads a line of n bytes (its newline left out) from r and
// returns it with each string whose text is longer than CutOver bytes
// given as its first and last keep bytes or so (at least keep each, cut
// at character boundaries, keep < CutOver/2), and how many bytes of text
// it left out. What it keeps of each string is what JSON.parse of the
// whole line would give at its ends. ok is false when a string it cut is
// not one JSON.parse takes (a bad escape or a control character): the
// line is then one pi skips. The rest of the line is checked by its
// parser, as any line is.
func cutLine(r io.Reader, n int64, keep int) (line []byte, cut int64, ok bool, err error) {
	br := bufio.NewReaderSize(io.LimitReader(r, n), 64<<10)
	out := make([]byte, 0, min(n, 256<<10))
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return out, cut, true, nil
		}
		if err != nil {
			return nil, 0, false, err
		}
		out = append(out, c)
		if c != '"' {
			continue
		}
		var left int64
		if out, left, ok, err = cutString(br, out, keep); !ok || err != nil {
			return nil, 0, false, err
		}
		cut += left
	}
}

// cutString reads the body of a string whose opening quote out ends with,
// and its closing quote, and appends them to out: as they are while its
// text is CutOver bytes or less, else cut (see cutLine). left is the
// bytes of text left out. At the end of the line before the closing quote
// it appends what it read (the parser refuses the line).
func cutString(br *bufio.Reader, out []byte, keep int) (_ []byte, left int64, ok bool, err error) {
	start := len(out)
	check := start + cutOver // the raw length at which the text is measured
	var c *cutter            // set once the text is known to be long
	high := false            // the last token was the escape of a high surrogate
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			if c != nil {
				return c.finish(out[:start]), 0, true, nil
			}
			return out, 0, true, nil
		}
		if err != nil {
			return nil, 0, false, err
		}
		switch {
		case b == '"':
			if c == nil {
				return append(out, b), 0, true, nil
			}
			if !c.feed(out[start:]) {
				return nil, 0, false, nil
			}
			out = append(c.finish(out[:start]), '"')
			return out, c.total - int64(len(c.head)+len(c.tailKept())), true, nil
		case b == '\\':
			e, err := br.ReadByte()
			if err != nil {
				return append(out, b), 0, true, ignoreEOF(err)
			}
			out = append(out, b, e)
			high = false
			if e == 'u' {
				var hex [4]byte
				k, err := io.ReadFull(br, hex[:])
				out = append(out, hex[:k]...)
				if err != nil {
					return out, 0, true, ignoreEOF(err)
				}
				v, _ := strconv.ParseUint(string(hex[:]), 16, 16)
				high = v >= 0xD800 && v <= 0xDBFF
			}
		case b < 0x20:
			return nil, 0, false, nil
		default:
			out = append(out, b)
			high = false
		}
		if len(out) < check || high {
			continue
		}
		// A piece ends here when the next byte starts a character: then
		// the piece decodes as it does within the whole string.
		if next, err := br.Peek(1); err == nil && !utf8.RuneStart(next[0]) {
			continue
		}
		if c == nil {
			u := &unquoter{}
			text, ok := u.unquote(out[start:])
			if !ok {
				return nil, 0, false, nil
			}
			if len(text) <= cutOver {
				check = start + 2*(len(out)-start)
				continue
			}
			c = &cutter{keep: keep, u: u}
			c.take(text)
		} else if !c.feed(out[start:]) {
			return nil, 0, false, nil
		}
		out = out[:start]
		check = start + cutPiece
	}
}

func ignoreEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}

// unquoter decodes the raw bodies of strings (no quotes) as
// jsjson.Unquote does, into buffers it reuses: a text is valid until the
// next.
type unquoter struct{ q, text []byte }

func (u *unquoter) unquote(body []byte) ([]byte, bool) {
	u.q = append(append(append(u.q[:0], '"'), body...), '"')
	if end, _, ok := jsjson.StringEnd(u.q, 0); !ok || end != len(u.q) {
		return nil, false
	}
	u.text = jsjson.AppendUnquoted(u.text[:0], u.q)
	return u.text, true
}

// cutter keeps the ends of a long string's text as its pieces come.
type cutter struct {
	u     *unquoter
	keep  int
	total int64
	head  []byte // the first keep bytes or so, to a character's start
	tail  []byte // the last bytes seen, at least keep once there are
}

// feed decodes a raw piece and takes its text.
func (c *cutter) feed(raw []byte) bool {
	if len(raw) == 0 {
		return true
	}
	text, ok := c.u.unquote(raw)
	if ok {
		c.take(text)
	}
	return ok
}

// take takes text, whole characters.
func (c *cutter) take(text []byte) {
	c.total += int64(len(text))
	if len(c.head) < c.keep {
		i := min(c.keep-len(c.head), len(text))
		for i < len(text) && !utf8.RuneStart(text[i]) {
			i++
		}
		c.head = append(c.head, text[:i]...)
	}
	c.tail = append(c.tail, text...)
	if len(c.tail) > 4*c.keep {
		c.tail = c.tail[:copy(c.tail, c.tail[len(c.tail)-2*c.keep:])]
	}
}

// tailKept is the tail given: at least keep bytes, from a character's
// start.
func (c *cutter) tailKept() []byte {
	i := max(len(c.tail)-c.keep, 0)
	for i > 0 && !utf8.RuneStart(c.tail[i]) {
		i--
	}
	return c.tail[i:]
}

// finish appends the head and the tail, as a JSON string's body, to out.
func (c *cutter) finish(out []byte) []byte {
	out = appendBody(out, c.head)
	return appendBody(out, c.tailKept())
}

// appendBody appends text (valid UTF-8) as a JSON string's body.
func appendBody(out, text []byte) []byte {
	const hex = "0123456789abcdef"
	for _, b := range text {
		switch {
		case b == '"' || b == '\\':
			out = append(out, '\\', b)
		case b < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[b>>4], hex[b&15])
		default:
			out = append(out, b)
		}
	}
	return out
}
