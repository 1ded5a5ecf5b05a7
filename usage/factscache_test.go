package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
)

// TestFactsCache: a session's facts are given for the version of its
// file they were read from, not another; a scan reads each session given
// once and counts it; Held is the sum of what the facts kept hold, and
// drops with the sessions left out.
func TestFactsCache(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "--p--"), 0o755)
	const head = `{"type":"session","version":3,"id":"ID","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}` + "\n"
	const msg = `{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"assistant","provider":"p","model":"m1","usage":{"input":1,"output":2,"cost":{"total":0.5}}}}` + "\n"
	const more = `{"type":"usage","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","usage":{"input":3}}` + "\n"
	a := filepath.Join(dir, "--p--", "a.jsonl")
	b := filepath.Join(dir, "--p--", "b.jsonl")
	os.WriteFile(a, []byte(head+msg), 0o644)
	os.WriteFile(b, []byte(head+msg+more), 0o644)
	x := sessions.NewIndex(dir)
	fa, _ := x.Lookup("--p--", "a")
	fb, _ := x.Lookup("--p--", "b")
	if fa == nil || fb == nil {
		t.Fatal("the index has not the two sessions")
	}

	var c FactsCache
	if _, ok := c.Get(fa); ok {
		t.Error("facts of a session never read")
	}
	c.Scan([]*sessions.File{fa, fb})
	xa, okA := c.Get(fa)
	xb, okB := c.Get(fb)
	if !okA || !okB || len(xa.Records) != 1 || len(xb.Records) != 2 || c.Scanned.Load() != 2 {
		t.Fatalf("after a scan: a %d records (%v), b %d (%v), %d scanned", len(xa.Records), okA, len(xb.Records), okB, c.Scanned.Load())
	}
	if want := xa.Bytes() + xb.Bytes() + 2*64; c.Held.Load() != want {
		t.Errorf("held %d, want %d", c.Held.Load(), want)
	}

	// a grows: its old facts are not the new version's.
	f, _ := os.OpenFile(a, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(more)
	f.Close()
	x.Update(a)
	fa2, _ := x.Lookup("--p--", "a")
	if fa2 == fa {
		t.Fatal("the index kept the old version")
	}
	if _, ok := c.Get(fa2); ok {
		t.Error("the old version's facts given for the new one")
	}
	l, err := sessions.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	c.Keep(fa2, l.Entries, "")
	if x, ok := c.Get(fa2); !ok || len(x.Records) != 2 {
		t.Errorf("kept from the parse: %d records, %v", len(x.Records), ok)
	}
	xa2, _ := c.Get(fa2)
	if want := xa2.Bytes() + xb.Bytes() + 2*64; c.Held.Load() != want {
		t.Errorf("held %d after a replace, want %d", c.Held.Load(), want)
	}

	c.Only(map[string]bool{b: true})
	if _, ok := c.Get(fa2); ok {
		t.Error("a's facts kept after it was left out")
	}
	if want := xb.Bytes() + 64; c.Held.Load() != want {
		t.Errorf("held %d after a was dropped, want %d", c.Held.Load(), want)
	}
}

// TestFactsSessions: the sessions of files are made from the facts held
// for their versions, else those read gives (read told only the missing
// ones, its rest scanned); a file that cannot be read is left out; the
// facts of sessions not among the files are dropped. Mtimes is the
// newest file of each project and of all.
func TestFactsSessions(t *testing.T) {
	dir := t.TempDir()
	const head = `{"type":"session","version":3,"id":"ID","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}` + "\n"
	const msg = `{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"assistant","provider":"p","model":"m1","usage":{"input":1,"output":2,"cost":{"total":0.5}}}}` + "\n"
	var files []*sessions.File
	x := sessions.NewIndex(dir)
	for i, p := range []string{"--p--/a", "--p--/b", "--q--/c", "--q--/d"} {
		path := filepath.Join(dir, p+".jsonl")
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(head+msg), 0o644)
		mt := time.Unix(1000+int64(i), 0)
		os.Chtimes(path, mt, mt)
	}
	for _, p := range []string{"--p--/a", "--p--/b", "--q--/c", "--q--/d"} {
		project, name, _ := strings.Cut(p, "/")
		f, err := x.Lookup(project, name)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var c FactsCache
	c.Scan(files[:1]) // a is held
	c.Scan(files[3:]) // d is held, but is not among the files below
	os.Remove(files[2].Path)
	var asked []string
	list, kept := c.Sessions(files[:3], func(missing []*sessions.File) []*sessions.File {
		for _, f := range missing {
			asked = append(asked, f.Name)
		}
		l, err := sessions.Open(missing[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		c.Keep(missing[0], l.Entries, "")
		return missing[1:]
	})
	if fmt.Sprint(asked) != "[b c]" {
		t.Errorf("read asked for %v, want [b c]", asked)
	}
	var names []string
	for i, s := range list {
		names = append(names, s.Project+"/"+kept[i].Name)
	}
	if fmt.Sprint(names) != "[--p--/a --p--/b]" || len(kept) != 2 {
		t.Errorf("sessions %v", names)
	}
	if c.Scanned.Load() != 3 {
		t.Errorf("%d scanned: a, d, and c (unreadable); want 3", c.Scanned.Load())
	}
	if _, ok := c.Get(files[3]); ok {
		t.Error("d's facts kept though d is not among the files")
	}
	mt := Mtimes(files)
	if mt[""].Unix() != 1003 || mt["--p--"].Unix() != 1001 || mt["--q--"].Unix() != 1003 {
		t.Errorf("mtimes %v", mt)
	}
}
