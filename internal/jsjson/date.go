package jsjson

import (
	"bytes"
	"math"
	"time"
	"unicode/utf8"
)

// DateValue returns what `new Date(v).getTime()` gives for a raw JSON value:
// milliseconds since the epoch, or NaN. Strings are read in the ECMAScript
// date-time format (the one pi writes, from toISOString); other spellings give
// NaN. nil (undefined) gives NaN, null gives 0.
func DateValue(raw []byte) float64 {
	if KindOf(raw) != String {
		// A date of any other value is its number, clipped.
		return timeClip(ToNumber(raw))
	}
	if len(raw) >= 2 && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 && utf8.Valid(raw) {
		body := raw[1 : len(raw)-1]
		// What Unquote gives, without an allocation for a date's
		// length (the converted string does not escape).
		return ParseDate(string(body))
	}
	s, err := Unquote(raw)
	if err != nil {
		return math.NaN()
	}
	return ParseDate(s)
}

func timeClip(t float64) float64 {
	if math.IsNaN(t) || math.IsInf(t, 0) || math.Abs(t) > 8.64e15 {
		return math.NaN()
	}
	return math.Trunc(t) + 0 // +0 turns -0 into 0
}

// ParseDate parses the ECMAScript date-time string format
// (YYYY[-MM[-DD]][THH:mm[:ss[.sss]][Z|±HH:mm]]), as Date.parse does. A date
// alone is UTC; a date-time without offset is local time.
func ParseDate(s string) float64 {
	p := dateParser{s: s}
	year, ok := p.year()
	if !ok {
		return math.NaN()
	}
	month, day := 1, 1
	if p.eat('-') {
		if month, ok = p.digits(2); !ok || month < 1 || month > 12 {
			return math.NaN()
		}
		if p.eat('-') {
			// V8 falls back to its legacy parser, which lets a day up to 31
			// roll over into the next month.
			if day, ok = p.digits(2); !ok || day < 1 || day > 31 {
				return math.NaN()
			}
		}
	}
	hour, minute, sec, ms := 0, 0, 0, 0
	loc := time.UTC
	if p.eat('T') || p.eat('t') || (p.i > 4 && p.eat(' ')) {
		if hour, ok = p.digits(2); !ok {
			return math.NaN()
		}
		if !p.eat(':') {
			return math.NaN()
		}
		if minute, ok = p.digits(2); !ok || minute > 59 {
			return math.NaN()
		}
		if p.eat(':') {
			if sec, ok = p.digits(2); !ok || sec > 59 {
				return math.NaN()
			}
			if p.eat('.') {
				n := 0
				for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
					if n < 3 {
						ms = ms*10 + int(p.s[p.i]-'0')
					}
					n++
					p.i++
				}
				if n == 0 {
					return math.NaN()
				}
				for ; n < 3; n++ {
					ms *= 10
				}
			}
		}
		if hour > 24 || (hour == 24 && (minute != 0 || sec != 0 || ms != 0)) {
			return math.NaN()
		}
		loc = time.Local
		switch {
		case p.eat('Z') || p.eat('z'):
			loc = time.UTC
		case p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-'):
			sign := 1
			if p.s[p.i] == '-' {
				sign = -1
			}
			p.i++
			oh, ok1 := p.digits(2)
			if !p.eat(':') {
				return math.NaN()
			}
			om, ok2 := p.digits(2)
			if !ok1 || !ok2 || oh > 23 || om > 59 {
				return math.NaN()
			}
			loc = time.FixedZone("", sign*(oh*3600+om*60))
		}
	}
	if p.i != len(p.s) {
		return math.NaN()
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*1e6, loc)
	return timeClip(float64(t.Unix())*1000 + float64(ms))
}

type dateParser struct {
	s string
	i int
}

func (p *dateParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dateParser) digits(n int) (int, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	v := 0
	for k := 0; k < n; k++ {
		c := p.s[p.i+k]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v, true
}

func (p *dateParser) year() (int, bool) {
	if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		neg := p.s[p.i] == '-'
		p.i++
		y, ok := p.digits(6)
		if !ok || (neg && y == 0) {
			return 0, false
		}
		if neg {
			y = -y
		}
		return y, true
	}
	return p.digits(4)
}

// FormatISO formats ms since the epoch as Date.prototype.toISOString does.
func FormatISO(ms float64) string {
	t := time.UnixMilli(int64(ms)).UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return t.Format("-000000-01-02T15:04:05.000Z") // rare; sign handled loosely
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}
