package render

import "github.com/pifs/pifs/internal/jsjson"

// dateValue is jsjson.DateValue(raw), read without unquoting (which
// allocates) for the spelling pi writes, toISOString's
// "2025-05-12T10:00:01.000Z": a transcript reads one per entry.
func dateValue(raw []byte) float64 {
	if len(raw) == 26 && raw[0] == '"' && raw[5] == '-' && raw[8] == '-' && raw[11] == 'T' &&
		raw[14] == ':' && raw[17] == ':' && raw[20] == '.' && raw[24] == 'Z' && raw[25] == '"' {
		y, ok1 := digitsAt(raw, 1, 4)
		mo, ok2 := digitsAt(raw, 6, 2)
		d, ok3 := digitsAt(raw, 9, 2)
		h, ok4 := digitsAt(raw, 12, 2)
		mi, ok5 := digitsAt(raw, 15, 2)
		s, ok6 := digitsAt(raw, 18, 2)
		ms, ok7 := digitsAt(raw, 21, 3)
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 &&
			mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && s <= 59 {
			// As time.Date does, a day past the month's end rolls over.
			secs := daysFromCivil(y, mo, d)*86400 + h*3600 + mi*60 + s
			return float64(secs)*1000 + float64(ms)
		}
	}
	return jsjson.DateValue(raw)
}

func digitsAt(b []byte, i, n int) (int, bool) {
	v := 0
	for _, c := range b[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm), for y ≥ 0;
// days past the month's end count on into the next.
func daysFromCivil(y, m, d int) int {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := m - 3
	if m <= 2 {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
