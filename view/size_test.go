package view

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/internal/gen"
)

// sizeStore is the demo store, the fixtures and a generated session,
// copied to a temporary store.
func sizeStore(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	fix := filepath.Join(store, "--home-user-fixtures--")
	gens := filepath.Join(store, "--home-user-gen--")
	for _, c := range [][]string{
		{"cp", "-r", "../testdata/demo/.", store},
		{"mkdir", fix, gens},
		{"sh", "-c", "cp ../testdata/fixtures/*.jsonl " + fix},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", c, err, out)
		}
	}
	f, err := os.Create(filepath.Join(gens, "gen.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := gen.Session(f, 300, 800); err != nil {
		t.Fatal(err)
	}
	return store
}

// sizedView is a computed file whose size is known without its content.
type sizedView interface {
	File
	sizer
}

// TestSizeBeforeContent: on a fresh root, the size of each view a
// session folder and its branches show, asked first as stat asks it, is
// the length of the content read after; and asking keeps no view's bytes
// but info.json's.
func TestSizeBeforeContent(t *testing.T) {
	v := New(Options{SessionsDir: sizeStore(t), CacheBytes: 256 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	// Reading session after session would render the next ones ahead.
	v.ahead.window = 0
	sessionsSeen, views := 0, 0
	for _, p := range v.st.projects() {
		files, err := v.st.sessionFiles(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			s := sessionRef{v, p, f.Name}
			var ids []string
			err := s.with(func(ss *session) error {
				for _, e := range ss.tree.Entries() {
					if e.ID != "" {
						ids = append(ids, e.ID)
					}
				}
				return nil
			})
			if err != nil {
				continue // not a session
			}
			sessionsSeen++
			vs := []sizedView{newContextFile(s, "", false), newTranscriptFile(s, "", false), newHTMLFile(s, "", false), newInfoFile(s), newNameFile(s)}
			for _, id := range ids {
				vs = append(vs, newContextFile(s, id, true), newTranscriptFile(s, id, true), newHTMLFile(s, id, true))
			}
			sizes := make([]int64, len(vs))
			for i, v := range vs {
				if sizes[i], _, err = v.size(); err != nil {
					t.Fatalf("%s/%s: view %d: %v", p, f.Name, i, err)
				}
			}
			s.with(func(ss *session) error {
				for k, v := range ss.renders {
					if _, ok := v.([]byte); ok && k != infoName {
						t.Errorf("%s/%s: stat kept the bytes of %q", p, f.Name, k)
					}
				}
				return nil
			})
			for i, v := range vs {
				data, _, err := v.content()
				if err != nil {
					t.Fatalf("%s/%s: view %d: %v", p, f.Name, i, err)
				}
				if int64(len(data)) != sizes[i] {
					t.Errorf("%s/%s: view %d (%T): size %d, content %d bytes", p, f.Name, i, v, sizes[i], len(data))
				}
				views++
			}
		}
	}
	if sessionsSeen < 15 || views < 1000 {
		t.Errorf("only %d views of %d sessions compared", views, sessionsSeen)
	}
	t.Logf("%d views of %d sessions", views, sessionsSeen)
}
