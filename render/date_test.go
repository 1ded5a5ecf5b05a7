package render

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/pifs/pifs/internal/jsjson"
)

// TestDateValue: dateValue is jsjson.DateValue, on pi's spelling of every
// month's days (and days past the end), leap years, the years' ends, and
// random ones, and on spellings the short cut leaves to DateValue.
func TestDateValue(t *testing.T) {
	check := func(s string) {
		t.Helper()
		raw := []byte(s)
		got, want := dateValue(raw), jsjson.DateValue(raw)
		if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("dateValue(%s) = %v, want %v", s, got, want)
		}
	}
	for _, y := range []int{0, 1, 4, 99, 100, 400, 1600, 1900, 1969, 1970, 1999, 2000, 2024, 2025, 2100, 9999} {
		for mo := 0; mo <= 13; mo++ {
			for d := 0; d <= 32; d++ {
				check(fmt.Sprintf(`"%04d-%02d-%02dT23:59:59.999Z"`, y, mo, d))
			}
		}
	}
	r := rand.New(rand.NewSource(1))
	for range 100000 {
		check(fmt.Sprintf(`"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ"`, r.Intn(10000), 1+r.Intn(12), 1+r.Intn(31), r.Intn(25), r.Intn(61), r.Intn(61), r.Intn(1000)))
	}
	for _, s := range []string{`"2025-05-12T24:00:00.000Z"`, `"2025-05-12T10:00:01Z"`, `"2025-05-12T10:00:01.000+01:00"`,
		`"2025-05-12T10:00:01.000z"`, `"2025-05-12 10:00:01.000Z"`, `"2025-05-12T1a:00:01.000Z"`, `"\u0032025-05-12T10:00:01.000Z"`,
		`"+002025-05-12T10:00:01.000Z"`, `1747044001000`, `null`, `true`, `"2025"`, ``} {
		check(s)
	}
}
