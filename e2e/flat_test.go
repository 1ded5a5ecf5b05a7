package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
)

// TestFlatStoreMatchesPi: a store in pi's flat layout (sessions
// written by pi's own SessionManager into a directory the user chose), and
// a mixed store (pi's default per-cwd folders plus flat files at the top),
// mounted, show every session pi lists, in the project folder pi gives its
// header's cwd, with pi's list fields in info.json; and nothing else.
func TestFlatStoreMatchesPi(t *testing.T) {
	t.Run("flat", func(t *testing.T) {
		store := filepath.Join(t.TempDir(), "chosen")
		oracle.FlatCorpus(t, store)
		// Header cwds that are not clean paths (pi writes resolved ones,
		// other writers may not): pi groups them with the clean path.
		unclean := []string{"/home/user/proj/", "/home/user//proj/."}
		var made []string
		for i, cwd := range unclean {
			made = append(made, writeWithCwd(t, store, fmt.Sprintf("0197c600-0000-7000-8000-00000000000%d", i), cwd))
		}
		listed := map[string]bool{}
		for _, s := range oracle.List(t, "/home/user/proj", store) {
			listed[s.Path] = true
		}
		for _, f := range made {
			if !listed[f] {
				t.Fatalf("pi's list(/home/user/proj) lacks %s", f)
			}
		}
		checkStoreAgainstPiList(t, store, oracle.ListAll(t, store))
	})
	t.Run("mixed", func(t *testing.T) {
		store := filepath.Join(t.TempDir(), "sessions")
		oracle.MixedCorpus(t, store)
		// pi lists a mixed store in two calls: listAll(dir) takes the files
		// at the top, listAll() those one folder down.
		flat, nested := oracle.ListAll(t, store), oracle.ListDefault(t, store)
		if len(flat) == 0 || len(nested) == 0 {
			t.Fatalf("mixed corpus: %d flat and %d nested sessions", len(flat), len(nested))
		}
		checkStoreAgainstPiList(t, store, append(flat, nested...))
	})
}

// writeWithCwd writes a small session with the given id and header cwd
// flat into store and returns its path.
func writeWithCwd(t *testing.T, store, id, cwd string) string {
	t.Helper()
	header, _ := json.Marshal(map[string]any{"type": "session", "version": 3, "id": id, "timestamp": "2025-07-03T10:00:00.000Z", "cwd": cwd})
	msg := `{"type":"message","id":"e1","parentId":null,"timestamp":"2025-07-03T10:00:01.000Z","message":{"role":"user","content":"from ` + cwd + `","timestamp":1751536801000}}`
	path := filepath.Join(store, "2025-07-03T10-00-00-000Z_"+id+".jsonl")
	if err := os.WriteFile(path, []byte(string(header)+"\n"+msg+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mountSessions lists the session folders of a mount: every folder in
// every project folder, the root's and the projects' own views aside.
func mountSessions(t *testing.T, mnt string) []string {
	t.Helper()
	notProjects := map[string]bool{"by-id": true, "by-cwd": true, "by-file": true, "usage": true, "active": true}
	var out []string
	top, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range top {
		if !p.IsDir() || notProjects[p.Name()] {
			continue
		}
		des, err := os.ReadDir(filepath.Join(mnt, p.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range des {
			if d.IsDir() && d.Name() != "usage" && d.Name() != "by-name" && d.Name() != "by-file" && d.Name() != "active" {
				out = append(out, p.Name()+"/"+d.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}

func checkStoreAgainstPiList(t *testing.T, store string, pi []oracle.Listed) {
	t.Helper()
	mnt := testMount(t, store)
	var want []string
	for _, s := range pi {
		rel := sessions.ProjectFolder(s.Cwd) + "/" + strings.TrimSuffix(filepath.Base(s.Path), ".jsonl")
		want = append(want, rel)
		t.Run(rel, func(t *testing.T) {
			dir := filepath.Join(mnt, rel)
			raw, err := os.ReadFile(filepath.Join(dir, "info.json"))
			if err != nil {
				t.Fatalf("pi lists %s (cwd %q): %v", s.Path, s.Cwd, err)
			}
			var info struct {
				ID, Cwd, FirstMessage, Created, Modified string
				Name                                     *string
				ParentSession                            any
				MessageCount                             int
			}
			if err := json.Unmarshal(raw, &info); err != nil {
				t.Fatalf("info.json: %v\n%s", err, raw)
			}
			if info.ID != fmt.Sprint(s.ID) || info.Cwd != s.Cwd || !reflect.DeepEqual(info.Name, s.Name) ||
				info.MessageCount != s.MessageCount || info.FirstMessage != s.FirstMessage ||
				(s.Created != nil && info.Created != *s.Created) || (s.Modified != nil && info.Modified != *s.Modified) ||
				fmt.Sprint(info.ParentSession) != fmt.Sprint(s.ParentSessionPath) {
				t.Errorf("info.json %+v\npi's list %+v", info, s.Info)
			}
			link, err := os.Readlink(filepath.Join(mnt, "by-id", fmt.Sprint(s.ID)))
			if want := "../" + rel; err != nil || link != want {
				t.Errorf("by-id/%v -> %q, %v; want %q", s.ID, link, err, want)
			}
		})
	}
	sort.Strings(want)
	if got := mountSessions(t, mnt); !reflect.DeepEqual(got, want) {
		t.Errorf("the mount shows the sessions\n  %s\npi lists\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestMountWaitsForStore: pifs mounts a sessions directory that
// does not exist yet, empty, and shows the first session as soon as pi
// creates the directory and writes it, in either layout.
func TestMountWaitsForStore(t *testing.T) {
	testMount(t, t.TempDir()) // skips (or fails under PIFS_REQUIRE_FUSE=1) without FUSE
	oracle.Dir(t)
	for _, mode := range []string{"default", "flat"} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			store := filepath.Join(root, "not", "yet", "sessions")
			mnt := t.TempDir()
			o := fs.Options{SessionsDir: store, Debug: testing.Verbose(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PollInterval: 100 * time.Millisecond}
			if testing.Verbose() {
				o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
			}
			m, err := fs.Mount(mnt, o)
			if err != nil {
				t.Fatalf("mounting a sessions directory that does not exist yet: %v", err)
			}
			t.Cleanup(func() {
				if err := m.Unmount(); err != nil {
					t.Errorf("unmount: %v", err)
				}
			})
			if got := mountSessions(t, mnt); len(got) != 0 {
				t.Fatalf("sessions before pi ran: %q", got)
			}
			if _, err := os.Stat(filepath.Join(root, "not")); err == nil {
				t.Fatal("the mount made the store")
			}

			cwd := "/home/user/first run"
			out, err := oracleCommand(t, filepath.Join("testdata", "pi_create.mjs"), mode, store, cwd).Output()
			if err != nil {
				t.Fatalf("pi_create.mjs: %v", err)
			}
			file := strings.TrimSpace(string(out))
			if want := sessions.NewSessionDir(store, mode == "flat", cwd); filepath.Dir(file) != want {
				t.Fatalf("pi wrote %s, not in %s", file, want)
			}
			dir := filepath.Join(mnt, sessions.ProjectFolder(cwd), strings.TrimSuffix(filepath.Base(file), ".jsonl"))
			deadline := time.Now().Add(5 * time.Second)
			for {
				raw, err := os.ReadFile(filepath.Join(dir, "info.json"))
				if err == nil && strings.Contains(string(raw), `"first run"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s not in the mount 5s after pi created it: %v (mount shows %q)", dir, err, mountSessions(t, mnt))
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
