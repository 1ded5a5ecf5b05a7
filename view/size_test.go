package view

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pifs/pifs/cache"
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
	// Every size is asked first, in every session, then every content:
	// reading session after session renders the next ones ahead.
	type sized struct {
		where string
		view  sizedView
		key   string // what the cache keeps its bytes under
		size  int64
	}
	var all []sized
	sessionsSeen, views, diffs := 0, 0, 0
	for _, p := range v.projects() {
		files, err := v.sessionFiles(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			s := newSessionRef(v, p, f.Name)
			var ids []string
			err := s.with(func(ss *session) error {
				for _, e := range ss.Tree.Entries() {
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
			var vs []sized
			for _, v := range []sizedView{newContextFile(s, "", false), newTranscriptFile(s, "", false), newHTMLFile(s, "", false), newInfoFile(s), newNameFile(s)} {
				vs = append(vs, sized{view: v})
			}
			for i, k := range []string{contextName, transcriptName, htmlName, infoName, nameName} {
				vs[i].key = k
			}
			for _, name := range []string{filesTextName, filesJSONName, patchName} {
				vs = append(vs, sized{view: newFilesView(s, "", false, name), key: name})
			}
			vs = append(vs, sized{view: newReplyFile(s, "", false), key: replyName},
				sized{view: newModelFile(s), key: modelName}, sized{view: newThinkingFile(s), key: thinkingName},
				sized{view: newTreeTimesFile(s), key: v.timesKey(time.Now())})
			changes := &changesDir{inSession{s}, "", false, s.activity}
			list, err := changes.list()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list {
				vs = append(vs, sized{view: c.Node().(sizedView), key: changesName + "/" + c.Name})
				diffs++
			}
			for _, id := range ids {
				vs = append(vs, sized{view: newContextFile(s, id, true), key: contextName + "\x00" + id},
					sized{view: newTranscriptFile(s, id, true), key: transcriptName + "\x00" + id},
					sized{view: newHTMLFile(s, id, true), key: htmlName + "\x00" + id},
					sized{view: newFilesView(s, id, true, patchName), key: patchName + "\x00" + id},
					sized{view: newReplyFile(s, id, true), key: replyName + "\x00" + id})
			}
			for i := range vs {
				vs[i].where = fmt.Sprintf("%s/%s: view %d (%T)", p, f.Name, i, vs[i].view)
				if vs[i].size, _, err = vs[i].view.size(); err != nil {
					t.Fatalf("%s: %v", vs[i].where, err)
				}
			}
			s.with(func(ss *session) error {
				if _, ok := cache.HeldSessionPageCount(ss); !ok {
					t.Errorf("%s/%s: transcript.html: no count kept for its read", p, f.Name)
				}
				// The read renders transcript.md from the count stat made
				// (a branch's at the leaf is the session's).
				for _, at := range append([]string{""}, ids...) {
					if _, ok := cache.HeldTranscriptCount(ss, at); !ok && (at == "" || at != ss.Tree.LeafID()) {
						t.Errorf("%s/%s: transcript.md at %q: no count kept for its read", p, f.Name, at)
					}
				}
				for _, sv := range vs {
					if b, ok := ss.Held(sv.key); ok && sv.key != infoName {
						if _, isBytes := b.([]byte); isBytes {
							t.Errorf("%s: stat kept the bytes of %q", sv.where, sv.key)
						}
					}
				}
				return nil
			})
			all = append(all, vs...)
		}
	}
	for _, sv := range all {
		data, _, err := sv.view.content()
		if err != nil {
			t.Fatalf("%s: %v", sv.where, err)
		}
		if int64(len(data)) != sv.size {
			t.Errorf("%s: size %d, content %d bytes", sv.where, sv.size, len(data))
		}
		views++
	}
	if diffs == 0 {
		t.Error("no session of the store changed a file: changes/ was not compared")
	}
	if sessionsSeen < 15 || views < 1000 {
		t.Errorf("only %d views of %d sessions compared", views, sessionsSeen)
	}
	t.Logf("%d views of %d sessions", views, sessionsSeen)
}
