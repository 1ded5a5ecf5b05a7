package oracle

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func corpusFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestCorpusDumpsValid(t *testing.T) {
	Dir(t)
	store := t.TempDir()
	Corpus(t, store)
	files := corpusFiles(t, store)
	if len(files) < 10 {
		t.Fatalf("corpus wrote %d session files, want >= 10: %v", len(files), files)
	}
	if _, err := os.Stat(filepath.Join(store, "--home-user-proj--")); err != nil {
		t.Fatalf("project folder missing: %v", err)
	}
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total >= 2<<20 {
		t.Errorf("corpus is %d bytes, want < 2 MiB", total)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			v := Dump(t, f, false)
			if !v.Valid || v.Empty || v.Error != nil {
				t.Fatalf("valid=%v empty=%v error=%v", v.Valid, v.Empty, v.Error)
			}
			if len(v.Entries) < 1 {
				t.Fatalf("no entries")
			}
			if len(v.Errors) != 0 {
				t.Errorf("pi errors on a corpus file: %v", v.Errors)
			}
			if len(v.Roots) < 1 || len(v.Tips) < 1 || len(v.Paths) != len(v.Entries) {
				t.Errorf("roots=%d tips=%d paths=%d entries=%d", len(v.Roots), len(v.Tips), len(v.Paths), len(v.Entries))
			}
			if v.Usage == nil || v.Stats == nil || len(v.ContextAtLeaf) == 0 {
				t.Errorf("usage=%v stats=%v contextAtLeaf=%s usageError=%v", v.Usage, v.Stats, v.ContextAtLeaf, v.UsageError)
			}
			if leaf, ok := v.LeafID.(string); !ok || v.Contexts[leaf] == nil {
				t.Errorf("no context for leaf %v", v.LeafID)
			}
		})
	}
}

func TestDumpDoesNotModifyFile(t *testing.T) {
	Dir(t)
	dir := t.TempDir()
	old := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]string{
		// no final newline: pi's loadEntriesFromFile appends one
		"no-final-newline.jsonl": `{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/user/proj"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1735689601000}}`,
		// version 1: pi migrates and rewrites the file on open
		"v1.jsonl": `{"type":"session","id":"s2","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/home/user/proj"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1735689601000}}
{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":1735689602000}}
`,
		// empty: pi's open writes a header into it
		"empty.jsonl": ``,
	}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		v := Dump(t, p, true)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, []byte(content)) {
			t.Errorf("%s: file changed by dump:\n got %q\nwant %q", name, got, content)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !st.ModTime().Equal(old) {
			t.Errorf("%s: mtime changed: %v", name, st.ModTime())
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if _, ok := cases[e.Name()]; !ok {
				t.Errorf("%s: dump left %s next to the session", name, e.Name())
			}
		}
		switch name {
		case "empty.jsonl":
			if v.Valid || !v.Empty {
				t.Errorf("%s: valid=%v empty=%v, want false/true", name, v.Valid, v.Empty)
			}
		default:
			if !v.Valid || len(v.Entries) == 0 {
				t.Errorf("%s: valid=%v entries=%d error=%v", name, v.Valid, len(v.Entries), v.Error)
			}
		}
		if name == "v1.jsonl" {
			// in-memory migration: ids/parentIds generated, hookMessage → custom
			if len(v.Entries) != 2 || !bytes.Contains(v.Entries[1], []byte(`"role":"custom"`)) || !bytes.Contains(v.Header, []byte(`"version":3`)) {
				t.Errorf("v1 not migrated: header %s entries %s", v.Header, v.Entries)
			}
		}
	}
}

func TestParseViewUsage(t *testing.T) {
	v, err := ParseView([]byte(`{"valid":true,"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"total":3,"cost":0.5},"errors":{}}`))
	if err != nil || v.Usage == nil || v.Usage.Total != 3 || v.Usage.Cost != 0.5 {
		t.Fatalf("v=%+v err=%v", v, err)
	}
	v, err = ParseView([]byte(`{"valid":true,"usage":{"input":null,"output":2,"cacheRead":0,"cacheWrite":0,"total":null,"cost":0},"errors":null}`))
	if err != nil || v.Usage != nil || v.Errors == nil {
		t.Fatalf("v=%+v err=%v", v, err)
	}
}

// TestPiCLI runs pi's own CLI under the Node 22 the oracle installs: the
// binary is Node 22, and pi names the pinned version.
func TestPiCLI(t *testing.T) {
	out, err := exec.Command(Node22(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "v22.") {
		t.Fatalf("Node22 runs %q, want v22.*", out)
	}
	if v := strings.TrimSpace(string(Pi(t, NodeOptions{Env: []string{"PI_CODING_AGENT_DIR=" + t.TempDir()}}, "--version"))); v != Version {
		t.Fatalf("pi --version = %q, want %s", v, Version)
	}
}
