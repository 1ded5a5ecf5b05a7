package view

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/search"
)

// TestSearchFolderShape: search/ is looked up, never listed, and holds
// README and status; a query's folder is another (another inode number)
// after the store changed, and is volatile (the kernel keeps it no
// longer than a request) even on a mount of one user; its listing and
// its hits cost one query per version; a mount told to keep no index has
// no search/, one whose index is off says why.
func TestSearchFolderShape(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "--p--")
	os.MkdirAll(proj, 0o755)
	file := filepath.Join(proj, "s1.jsonl")
	os.WriteFile(file, []byte(`{"type":"session","version":3,"id":"id-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"find the wombat","timestamp":1767225601000}}
`), 0o644)
	idx, err := search.Open(search.Options{Dir: t.TempDir(), Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	v := New(Options{SessionsDir: dir, Search: idx, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	idx.Start(v.Index())
	idle := func() {
		select {
		case <-idx.Idle():
		case <-time.After(time.Minute):
			t.Fatal("the index is never idle")
		}
	}
	idle()

	kids, _ := v.List(v.Root())
	for _, k := range kids {
		if k.Name == searchName {
			t.Error("search/ is listed at the root")
		}
	}
	sd, err := v.Lookup(v.Root(), searchName)
	if err != nil {
		t.Fatal(err)
	}
	sdir := sd.Node().(Folder)
	if kids, _ := v.List(sdir); len(kids) != 3 || kids[0].Name != readmeName || kids[1].Name != errorsName || kids[2].Name != statusName {
		t.Errorf("ls search/: %v", kids)
	}
	// A query that cannot be read is no folder; search/errors says why.
	if _, err := v.Lookup(sdir, `-wombat`); !errors.Is(err, ErrNotFound) {
		t.Errorf("lookup of a query that only excludes: %v, want ErrNotFound", err)
	}
	ef, _ := v.Lookup(sdir, errorsName)
	if data, _ := v.Content(ef.Node().(File)); !strings.HasSuffix(string(data), ` "-wombat": `+syntaxReason(t, "-wombat")+"\n") {
		t.Errorf("search/errors: %q", data)
	}
	if !v.PerCaller(ef.Node()) {
		t.Error("search/errors is kept by the kernel")
	}
	q, err := v.Lookup(sdir, "wombat")
	if err != nil {
		t.Fatal(err)
	}
	if !v.PerCaller(q.Node()) {
		t.Error("a query's folder is kept by the kernel")
	}
	statements := func() int64 { return idx.Stats().Statements }
	before := statements()
	qdir := q.Node().(Folder)
	kids, err = v.List(qdir)
	if err != nil || len(kids) != 3 || kids[0].Name != "hits" || kids[2].Name != "s1" || kids[2].Mode != 0o120000 {
		t.Fatalf("ls search/wombat/: %v %v", kids, err)
	}
	ran := statements() - before
	h, _ := v.Lookup(qdir, "hits")
	data, _ := v.Content(h.Node().(File))
	if !strings.HasPrefix(string(data), "--p--/s1/entries/a1.json\tuser\t") || !strings.Contains(string(data), "wombat") {
		t.Errorf("hits: %q", data)
	}
	if target, _ := v.Target(kids[2].Node().(Link)); target != "../../--p--/s1" {
		t.Errorf("link: %q", target)
	}
	v.Attr(qdir, nil)
	if again := statements() - before - ran; ran == 0 || again != 0 {
		t.Errorf("listing ran %d statements, hits and stat then %d", ran, again)
	}

	// The store changes: the same name is another folder.
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"another wombat","timestamp":1767225602000}}` + "\n")
	f.Close()
	idx.Changed(v.Index().Update(file))
	idle()
	q2, _ := v.Lookup(sdir, "wombat")
	if q2.Ino == q.Ino {
		t.Error("the query's folder keeps its inode number after the store changed")
	}
	h, _ = v.Lookup(q2.Node().(Folder), "hits")
	if data, _ := v.Content(h.Node().(File)); strings.Count(string(data), "\n") != 2 {
		t.Errorf("hits after the append: %q", data)
	}

	// No index asked for: no search/; one that could not be opened: why.
	if none := New(Options{SessionsDir: dir}); func() error { _, err := none.Lookup(none.Root(), searchName); return err }() == nil {
		t.Error("search/ on a mount without an index")
	}
	off := New(Options{SessionsDir: dir, SearchOff: "in use"})
	sd, err = off.Lookup(off.Root(), searchName)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := off.Lookup(sd.Node().(Folder), statusName)
	if data, _ := off.Content(st.Node().(File)); string(data) != "index off: in use\n" {
		t.Errorf("status of an index off: %q", data)
	}
	if _, err := off.Lookup(sd.Node().(Folder), "wombat"); err == nil {
		t.Error("a query with the index off")
	}
}

// syntaxReason is why package search refuses query q.
func syntaxReason(t *testing.T, q string) string {
	t.Helper()
	var syn *search.SyntaxError
	if _, err := search.Parse(q, nil); !errors.As(err, &syn) {
		t.Fatalf("%q is read: %v", q, err)
	}
	return syn.Msg
}
