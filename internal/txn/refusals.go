package txn

import (
	"strings"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
)

// Refusals keeps why recent writes were refused, by key (for a mount: a
// session's or a project's errors file), each line with its time.
type Refusals struct {
	mu    sync.Mutex
	lines map[string][]string // by key, oldest first
	last  map[string]time.Time
	msg   map[string]string // by key, the last message
}

// KeepRefusals is how many lines a key keeps.
const KeepRefusals = 100

// Add records a refusal's message under key, on one line after the
// time in ISO form (as pi writes entries' timestamps).
func (rs *Refusals) Add(key, msg string) {
	rs.add(key, msg, 0)
}

// AddOnce is Add, unless the last refusal under key had the same message
// and came less than within ago (one request the kernel makes twice);
// it tells whether it added.
func (rs *Refusals) AddOnce(key, msg string, within time.Duration) bool {
	return rs.add(key, msg, within)
}

func (rs *Refusals) add(key, msg string, within time.Duration) bool {
	now := time.Now()
	line := jsjson.FormatISO(float64(now.UnixMilli())) + " " + strings.ReplaceAll(msg, "\n", " ") + "\n"
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.lines == nil {
		rs.lines, rs.last, rs.msg = map[string][]string{}, map[string]time.Time{}, map[string]string{}
	}
	if within > 0 && rs.msg[key] == msg && now.Sub(rs.last[key]) < within {
		return false
	}
	rs.msg[key] = msg
	l := append(rs.lines[key], line)
	if len(l) > KeepRefusals {
		l = append([]string(nil), l[len(l)-KeepRefusals:]...)
	}
	rs.lines[key] = l
	rs.last[key] = now
	return true
}

// Get is the lines recorded under key, oldest first, and when the last
// was (zero: none).
func (rs *Refusals) Get(key string) ([]byte, time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return []byte(strings.Join(rs.lines[key], "")), rs.last[key]
}
