package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
	"github.com/pifs/pifs/tree"
)

// TestCommandsMatchPi checks, for every session of pi's corpus, the demo
// store, the fixtures and generated sessions, info.json's counts and cache
// hit rate against pi's own /session (getSessionStats, and the rate its
// /session prints), and reply.md at every entry as leaf and at the
// session's leaf against the text pi's /copy copies.
func TestCommandsMatchPi(t *testing.T) {
	files := append(treeViewFiles(t), cacheSessions(t)...)
	pi := oracle.SessionCommands(t, files...)
	var infos, rates, replies, texts int
	for _, f := range files {
		name := filepath.Base(f)
		c := pi[f]
		if c == nil {
			t.Fatalf("%s: no answer from pi", name)
		}
		if c.Error != nil {
			t.Logf("%s: pi could not open it: %s", name, *c.Error)
			continue
		}
		l, err := sessions.Open(f)
		if err != nil {
			t.Logf("%s: not a session to pifs: %v", name, err)
			continue
		}
		tr := tree.New(l)
		if c.Stats != nil {
			infos++
			if checkInfo(t, name, tr, c) {
				rates++
			}
		} else {
			t.Logf("%s: pi's getSessionStats threw: %s", name, *c.StatsError)
		}
		ents := tr.Entries()
		for id, want := range c.Copy {
			var ctx *tree.Context
			if id == "@leaf" {
				ctx = tr.Context()
			} else {
				if tr.Node(id) == nil || len(l.Entries) != len(ents) {
					continue // an id pi gave a v1 entry at random
				}
				ctx = tr.ContextAt(id)
			}
			got := string(Reply(ctx))
			w := ""
			if want != nil {
				w = *want + "\n"
				texts++
			}
			if got != w {
				t.Errorf("%s at %s: reply.md %q, pi's /copy %q", name, id, got, w)
			}
			if n := ReplySize(ctx); n != int64(len(got)) {
				t.Errorf("%s at %s: ReplySize %d, len %d", name, id, n, len(got))
			}
			replies++
		}
		for id, e := range c.CopyErrors {
			t.Logf("%s at %s: pi's /copy threw: %s", name, id, e)
		}
	}
	t.Logf("compared info.json of %d sessions (%d with a cache hit rate) and %d reply.md (%d with text)", infos, rates, replies, texts)
	if infos < 30 || rates < 3 || rates == infos || replies < 1000 || texts < 300 {
		t.Errorf("too little compared: %d sessions, %d rates, %d replies, %d texts", infos, rates, replies, texts)
	}
}

// checkInfo compares info.json's counts, usage and cache hit rate with
// pi's /session; it reports whether pi shows a rate.
func checkInfo(t *testing.T, name string, tr *tree.Tree, c *oracle.Commands) bool {
	t.Helper()
	var info struct {
		oracle.Stats
		CacheHitRate *float64 `json:"cacheHitRate"`
		Usage        schema.Usage
	}
	b := Info("/store/x.jsonl", tr, time.Unix(0, 0))
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatalf("%s: info.json: %v\n%s", name, err, b)
	}
	if info.Stats != *c.Stats {
		t.Errorf("%s: info.json counts %+v, pi's /session %+v", name, info.Stats, *c.Stats)
	}
	if info.Usage != *c.Usage {
		t.Errorf("%s: info.json usage %+v, pi's /session %+v", name, info.Usage, *c.Usage)
	}
	switch {
	case (info.CacheHitRate == nil) != (c.Rate == nil) || (c.Rate == nil) != (c.Cached == nil):
		t.Errorf("%s: cacheHitRate %v, pi computes %v and shows %v", name, info.CacheHitRate, c.Rate, c.Cached)
	case c.Rate == nil:
	case *info.CacheHitRate != *c.Rate:
		t.Errorf("%s: cacheHitRate %v, pi computes %v", name, *info.CacheHitRate, *c.Rate)
	case strconv.FormatFloat(*info.CacheHitRate, 'f', 1, 64) != *c.Cached:
		t.Errorf("%s: cacheHitRate %v, pi shows %s%%", name, *info.CacheHitRate, *c.Cached)
	}
	return c.Cached != nil
}

// cacheSessions writes sessions of tool calls whose usage has no cache
// tokens (pi shows no hit rate), cache writes only (0.0%), and reads.
func cacheSessions(t *testing.T) []string {
	dir := t.TempDir()
	var files []string
	for i, cache := range [][2]int{{0, 0}, {0, 300}, {700, 0}, {123, 45}} {
		lines := []string{`{"type":"session","version":3,"id":"cache-` + strconv.Itoa(i) + `","timestamp":"2025-06-01T09:00:00.000Z","cwd":"/home/user/proj"}`}
		parent := "null"
		for k := 0; k < 3; k++ {
			ts := `"2025-06-01T09:00:0` + strconv.Itoa(k) + `.000Z"`
			u, a, r := "u"+strconv.Itoa(k), "a"+strconv.Itoa(k), "r"+strconv.Itoa(k)
			usage := `{"input":100,"output":20,"cacheRead":` + strconv.Itoa(cache[0]) + `,"cacheWrite":` + strconv.Itoa(cache[1]) +
				`,"totalTokens":0,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}}`
			lines = append(lines,
				`{"type":"message","id":"`+u+`","parentId":`+parent+`,"timestamp":`+ts+`,"message":{"role":"user","content":"do `+u+`","timestamp":1}}`,
				`{"type":"message","id":"`+a+`","parentId":"`+u+`","timestamp":`+ts+`,"message":{"role":"assistant","content":[{"type":"text","text":" on it "},{"type":"toolCall","id":"c`+a+`","name":"ls","arguments":{}},{"type":"toolCall","id":"d`+a+`","name":"ls","arguments":{}}],"provider":"p","model":"m","usage":`+usage+`,"stopReason":"toolUse","timestamp":2}}`,
				`{"type":"message","id":"`+r+`","parentId":"`+a+`","timestamp":`+ts+`,"message":{"role":"toolResult","toolCallId":"c`+a+`","toolName":"ls","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":3}}`)
			parent = `"` + r + `"`
		}
		f := filepath.Join(dir, "cache-"+strconv.Itoa(i)+".jsonl")
		if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
