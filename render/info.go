package render

import (
	"math"
	"strconv"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/tree"
)

// Info is info.json: pi's session-list fields, the tree's shape,
// /session's counts under pi's names (getSessionStats: userMessages,
// assistantMessages, toolCalls, toolResults, totalMessages), its cache hit
// rate (cacheHitRate: the percentage /session shows beside "Cached:", null
// where it shows none) and its usage totals, indented with two spaces. file is the session
// file's path; mtime its modification time, which dates a session that
// nothing else dates. It is written straight into one buffer: the first
// message, which may be most of the file, is re-spelled from its raw bytes
// and held once, in the result.
func Info(file string, t *tree.Tree, mtime time.Time) []byte {
	sum := t.Summary(mtime)
	tips := t.Tips()
	b := make([]byte, 0, 512+len(file)+len(sum.Cwd)+len(sum.Name)+len(sum.ParentSession)+len(sum.FirstContent)+64*len(tips))
	key := func(k string) {
		if len(b) == 0 {
			b = append(b, "{\n  \""...)
		} else {
			b = append(b, ",\n  \""...)
		}
		b = append(append(b, k...), "\": "...)
	}
	str := func(k, v string) {
		key(k)
		b = jsjson.Quote(b, v)
	}
	strOrNull := func(k, v string) {
		if v == "" {
			key(k)
			b = append(b, "null"...)
			return
		}
		str(k, v)
	}
	str("id", sum.ID)
	str("file", file)
	str("cwd", sum.Cwd)
	strOrNull("name", sum.Name)
	key("parentSession")
	if sum.ParentSession == nil {
		b = append(b, "null"...)
	} else {
		b = appendRaw(b, sum.ParentSession)
	}
	strOrNull("created", isoOrEmpty(sum.Created))
	strOrNull("modified", isoOrEmpty(sum.Modified))
	key("messageCount")
	b = strconv.AppendInt(b, int64(sum.MessageCount), 10)
	key("firstMessage")
	b = sum.AppendFirstMessage(b)
	key("entryCount")
	b = strconv.AppendInt(b, int64(t.Len()), 10)
	strOrNull("leaf", t.LeafID())
	key("tips")
	if len(tips) == 0 {
		b = append(b, "[]"...)
	} else {
		for i, n := range tips {
			if i == 0 {
				b = append(b, "[\n    "...)
			} else {
				b = append(b, ",\n    "...)
			}
			b = jsjson.Quote(b, n.ID)
		}
		b = append(b, "\n  ]"...)
	}
	u, c := usageTotals(t.Entries()), t.Counts()
	for _, f := range []struct {
		k string
		v int
	}{{"userMessages", c.UserMessages}, {"assistantMessages", c.AssistantMessages}, {"toolCalls", c.ToolCalls},
		{"toolResults", c.ToolResults}, {"totalMessages", c.TotalMessages}} {
		key(f.k)
		b = strconv.AppendInt(b, int64(f.v), 10)
	}
	key("cacheHitRate")
	if rate, ok := u.CacheHitRate(); ok {
		b = jsjson.FormatNumber(b, rate)
	} else {
		b = append(b, "null"...)
	}
	key("usage")
	for i, f := range []struct {
		k string
		v float64
	}{{"input", u.Input}, {"output", u.Output}, {"cacheRead", u.CacheRead}, {"cacheWrite", u.CacheWrite}, {"total", u.Total}, {"cost", u.Cost}} {
		if i == 0 {
			b = append(b, "{\n    \""...)
		} else {
			b = append(b, ",\n    \""...)
		}
		b = append(append(b, f.k...), "\": "...)
		b = jsjson.FormatNumber(b, f.v)
	}
	b = append(b, "\n  }"...)
	status, last := t.Status()
	str("status", status)
	key("last")
	b = appendLast(b, last)
	return append(b, "\n}\n"...)
}

// appendRaw writes a raw JSON value one level in: indented as the rest of
// info.json when it is valid, canonical otherwise.
func appendRaw(dst, v []byte) []byte {
	if out, ok := jsjson.AppendIndent(dst, v, 1); ok {
		return out
	}
	return jsjson.AppendCanonical(dst[:len(dst):len(dst)], v)
}

// isoOrEmpty formats ms as toISOString does; "" for an invalid date.
func isoOrEmpty(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return ""
	}
	return jsjson.FormatISO(ms)
}
