package tree_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// TestExportMatchesPi: for every entry of every session pi wrote (its
// corpus in both layouts) and of the hand-made fixtures, the export pifs
// makes with that entry as the leaf is the text pi's serializeSessionBranch
// writes after SessionManager.branch(id), line for line, and so is the
// export at the session's own leaf. Only the header's timestamp, which pi
// makes at each export, is taken from pi's. ExportSize is the length of
// each.
func TestExportMatchesPi(t *testing.T) {
	store := t.TempDir()
	oracle.Corpus(t, store)
	flat := filepath.Join(t.TempDir(), "flat")
	oracle.FlatCorpus(t, flat)
	files := append(sessionFiles(t, store), sessionFiles(t, flat)...)
	files = append(files, sessionFiles(t, filepath.Join("..", "testdata", "fixtures"))...)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	pi := oracle.Export(t, wd, files...)
	compared := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			exp, ok := pi[f]
			if !ok {
				t.Fatal("pi exported nothing")
			}
			l, err := sessions.Open(f)
			if err != nil {
				if !errors.Is(err, sessions.ErrNotSession) || exp.Open == "" && !empty(f) {
					t.Fatalf("pifs cannot open it (%v), pi could (%q)", err, exp.Open)
				}
				return
			}
			if exp.Open != "" {
				t.Fatalf("pi cannot open it: %s", exp.Open)
			}
			tr := tree.New(l)
			// pi draws random ids when it migrates a version 1 file: pifs's
			// ids stand for pi's by position.
			ents := tr.Entries()
			if len(ents) != len(exp.IDs) {
				t.Fatalf("pifs has %d entries, pi %d", len(ents), len(exp.IDs))
			}
			toPi := map[string]string{}
			fromPi := map[string]string{}
			for i, e := range ents {
				if l.Migrated && e.ID != "" && exp.IDs[i] != "" {
					toPi[e.ID] = exp.IDs[i]
				}
				fromPi[exp.IDs[i]] = e.ID
			}
			cwd := sessions.ResolvePath(l.Header.Cwd)
			for key, want := range exp.Text {
				id := fromPi[key]
				if key == "@leaf" {
					id = tr.LeafID()
				}
				ts := headerTimestamp(t, want)
				got, err := tr.Export(id, ts, cwd)
				if err != nil {
					t.Errorf("%s: %v", key, err)
					continue
				}
				n, err := tr.ExportSize(id, ts, cwd)
				if err != nil || n != int64(len(got)) {
					t.Errorf("%s: ExportSize %d, %v; the export has %d bytes", key, n, err, len(got))
				}
				text := string(got)
				for p, q := range toPi {
					text = strings.ReplaceAll(text, `"`+p+`"`, `"`+q+`"`)
				}
				compareLines(t, key, text, want)
				compared++
			}
			for key, msg := range exp.Err {
				if msg != "cycle" {
					t.Errorf("pi failed to export %s: %s", key, msg)
				}
				// pi loops for ever on a cycle; pifs stops before the repeat.
				if _, err := tr.Export(fromPi[key], "", cwd); err != nil && key != "@leaf" {
					t.Errorf("%s on a cycle: %v", key, err)
				}
			}
		})
	}
	if compared < 200 {
		t.Errorf("only %d exports compared", compared)
	}
	t.Logf("%d exports of %d files compared with pi's", compared, len(files))
}

func empty(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() == 0
}

// headerTimestamp is the timestamp of an export's header line.
func headerTimestamp(t *testing.T, export string) string {
	t.Helper()
	first, _, _ := strings.Cut(export, "\n")
	var h struct{ Timestamp string }
	if err := json.Unmarshal([]byte(first), &h); err != nil || h.Timestamp == "" {
		t.Fatalf("pi's export header %q: %v", first, err)
	}
	return h.Timestamp
}

// compareLines reports the first line where two exports differ.
func compareLines(t *testing.T, what, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s: line %d differs\npifs: %q\npi:   %q", what, i+1, gl, wl)
			return
		}
	}
}

// TestExport checks what pi's export does with a path's ends: the first
// entry's parentId becomes null wherever it pointed, a missing parentId is
// added last, a parentId in the middle keeps its place, the header holds
// only type, version, id, timestamp and cwd (no parentSession), and an
// unknown id is an error.
func TestExport(t *testing.T) {
	data := `{"type":"session","version":3,"id":"S","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p/","parentSession":"/x.jsonl"}
{"type":"message","id":"a","parentId":"gone","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}
{"id":"b","type":"custom","customType":"x","parentId":"a","2":"two","timestamp":"2024-01-01T00:00:02.000Z"}
{"type":"custom","id":"c","customType":"y","timestamp":"2024-01-01T00:00:03.000Z","parentId":"b","parentId":"b"}
`
	l, err := sessions.Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tree.New(l)
	got, err := tr.Export("c", tr.ExportTimestamp("c"), sessions.ResolvePath(l.Header.Cwd))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"session","version":3,"id":"S","timestamp":"2024-01-01T00:00:03.000Z","cwd":"/p"}
{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}
{"2":"two","id":"b","type":"custom","customType":"x","parentId":"a","timestamp":"2024-01-01T00:00:02.000Z"}
{"type":"custom","id":"c","customType":"y","timestamp":"2024-01-01T00:00:03.000Z","parentId":"b"}
`
	compareLines(t, "c", string(got), want)
	if _, err := tr.Export("zz", "", "/"); !errors.Is(err, tree.ErrNotFound) {
		t.Errorf("export of an unknown id: %v", err)
	}
	head, err := tr.Export("", "T", "/q")
	if err != nil || string(head) != `{"type":"session","version":3,"id":"S","timestamp":"T","cwd":"/q"}`+"\n" {
		t.Errorf("export before the first entry: %q %v", head, err)
	}
	if ts := tr.ExportTimestamp("zz"); ts != "2024-01-01T00:00:00.000Z" {
		t.Errorf("timestamp of an unknown id: %s", ts)
	}
}

// BenchmarkExport: the export at the leaf of a 100 MB session (the first
// export of a tree, which learns every entry's line, then those after it,
// which copy), and its size once the lines are known.
func BenchmarkExport(b *testing.B) {
	l, err := sessions.Parse(big(b))
	if err != nil {
		b.Fatal(err)
	}
	leaf := tree.New(l).LeafID()
	b.Run("first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			tr := tree.New(l)
			n, err := tr.WriteExport(io.Discard, leaf, "T", "/p")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(n)
		}
	})
	tr := tree.New(l)
	n, _ := tr.ExportSize(leaf, "T", "/p")
	b.Run("again", func(b *testing.B) {
		b.SetBytes(n)
		for i := 0; i < b.N; i++ {
			if _, err := tr.WriteExport(io.Discard, leaf, "T", "/p"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("size", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := tr.ExportSize(leaf, "T", "/p"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestExportLarge: a branch long enough that its entries' lines are
// learnt on every core exports as it does when they are learnt one at a
// time (by exports of its shorter branches first), lines that are not
// JSON.stringify's own included, and ExportSize is its length.
func TestExportLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"S","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n")
	parent := "null"
	const n = 6000
	for i := range n {
		id := fmt.Sprintf("e%05d", i)
		text := strings.Repeat("word ", 100+i%50)
		switch i % 4 {
		case 0: // as pi writes it
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":%q}}`, id, parent, text)
		case 1: // spaced, a number JavaScript writes otherwise
			fmt.Fprintf(&b, `{"type": "custom", "id": %q, "parentId": %s, "customType": "x", "data": {"n": 1.50, "s": "a\/b %s"}}`, id, parent, text)
		case 2: // parentId last
			fmt.Fprintf(&b, `{"type":"custom","id":%q,"customType":"y","data":%q,"parentId":%s}`, id, text, parent)
		default: // an integer-like key, which JavaScript writes first
			fmt.Fprintf(&b, `{"type":"custom","id":%q,"parentId":%s,"customType":"z","7":%q}`, id, parent, text)
		}
		b.WriteByte('\n')
		parent = strconv.Quote(id)
	}
	l, err := sessions.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	leaf := fmt.Sprintf("e%05d", n-1)
	whole := tree.New(l)
	got, err := whole.Export(leaf, "T", "/p")
	if err != nil {
		t.Fatal(err)
	}
	if size, _ := whole.ExportSize(leaf, "T", "/p"); size != int64(len(got)) {
		t.Errorf("ExportSize %d, the export %d bytes", size, len(got))
	}
	// Learnt a few entries at a time: each export adds less than the
	// lines learnt on every core.
	steps := tree.New(l)
	path := steps.PathTo(leaf)
	for i := 0; i < len(path); i += 50 {
		if _, err := steps.ExportSize(path[i].ID, "T", "/p"); err != nil {
			t.Fatal(err)
		}
	}
	want, err := steps.Export(leaf, "T", "/p")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 4<<20 {
		t.Fatalf("the export is %d bytes: too short to be learnt on every core", len(got))
	}
	compareLines(t, leaf, string(got), string(want))
}
