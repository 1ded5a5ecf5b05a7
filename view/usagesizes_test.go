package view

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/internal/persist"
	"github.com/pifs/pifs/usage"
)

// TestUsageSizesKept: the sizes of the usage reports counted by one mount
// are what the next mount of the unchanged store shows, and it builds no
// report for them (ls -l usage/ reads no session's records); once a
// session changed, they are counted again, and each size is that of the
// content read.
func TestUsageSizesKept(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	projects := []string{"--home-u-a--", "--home-u-b--"}
	for i, p := range projects {
		os.MkdirAll(filepath.Join(dir, p), 0o755)
		for j := range 3 {
			f, err := os.Create(filepath.Join(dir, p, fmt.Sprintf("s%d%d.jsonl", i, j)))
			if err != nil {
				t.Fatal(err)
			}
			if err := gen.Session(f, 20+10*j, 100); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	// Out of the window in which a file's version is not sure (racy).
	time.Sleep(2100 * time.Millisecond)

	files := append([]string{""}, projects...)
	names := append(append([]string{}, usage.Files...), usage.ToolFiles...)
	// stat is each report's Attr on a new mount, by project and name.
	stat := func(v *View) map[string]Attr {
		out := map[string]Attr{}
		for _, p := range files {
			for _, name := range names {
				a, err := v.Attr(newUsageFile(v, p, name), nil)
				if err != nil {
					t.Fatalf("%s/usage/%s: %v", p, name, err)
				}
				out[p+"/"+name] = a
			}
		}
		return out
	}
	// read checks that each report's content is as long as its size.
	read := func(v *View, attrs map[string]Attr) {
		t.Helper()
		for _, p := range files {
			for _, name := range names {
				data, err := v.Content(newUsageFile(v, p, name))
				if err != nil {
					t.Fatal(err)
				}
				if a := attrs[p+"/"+name]; a.Size != uint64(len(data)) || a.Size == 0 {
					t.Errorf("%s/usage/%s: size %d, content %d bytes", p, name, a.Size, len(data))
				}
			}
		}
	}

	first, c1 := persistView(t, dir, cacheDir)
	sizes := stat(first)
	read(first, sizes)
	c1.Close()

	second, c2 := persistView(t, dir, cacheDir)
	// ls of a project's usage/ gives names alone: it loads no other
	// project's folder for the store's digest.
	kids, err := newUsageDir(second, projects[1]).list()
	if err != nil || len(kids) != len(names) {
		t.Fatalf("usage/ lists %d names (%v), want %d", len(kids), err, len(names))
	}
	for _, c := range kids {
		if _, ok := second.KnownAttr(c.Node(), nil); ok {
			t.Errorf("usage/%s: a listing gave its size", c.Name)
		}
	}
	if st := second.x.Stats(); st.FoldersRead != 0 {
		t.Errorf("listing a project's usage/ read %d folders of the store", st.FoldersRead)
	}
	again := stat(second)
	if second.usage.reports != nil || second.usage.Scanned.Load() != 0 {
		t.Errorf("the second mount built the reports to stat them (%d sessions read)", second.usage.Scanned.Load())
	}
	for k, a := range sizes {
		if again[k] != a {
			t.Errorf("%s: second mount %+v, first %+v", k, again[k], a)
		}
	}
	read(second, again)
	c2.Close()

	// A session of project a changes: every report is counted again (a
	// project's report depends on the others': a call copied into two
	// projects counts in the one created first).
	fd, err := os.OpenFile(filepath.Join(dir, projects[0], "s00.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd.WriteString(`{"type":"message","id":"more1","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1000000,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":1000002,"cost":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"total":2}},"timestamp":1}}` + "\n")
	fd.Close()
	time.Sleep(2100 * time.Millisecond)
	third, c3 := persistView(t, dir, cacheDir)
	changed := stat(third)
	if third.usage.reports == nil {
		t.Error("the reports were not built again after a session changed")
	}
	if changed["/daily.csv"] == sizes["/daily.csv"] {
		t.Error("the store's daily.csv kept its size after a call was added")
	}
	read(third, changed)
	c3.Close()
}

// persistView is the view a new mount of dir makes with its persistent
// cache in cacheDir.
func persistView(t *testing.T, dir, cacheDir string) (*View, *persist.Cache) {
	t.Helper()
	c := persist.Open(persist.Options{Dir: cacheDir, Store: dir, Build: "test", Log: func(msg string) { t.Errorf("cache: %s", msg) }})
	t.Cleanup(func() { c.Close() })
	v := New(Options{SessionsDir: dir, CacheBytes: 256 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	v.Index().Keep(c)
	return v, c
}
