package tree

import (
	"math"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
)

// DateTime is a timestamp field (an ISO string, or a number of
// milliseconds) as pi's new Date(ts) reads it; the zero time when that is
// not a valid date.
func DateTime(ts []byte) time.Time {
	ms := jsjson.DateValue(ts)
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}
