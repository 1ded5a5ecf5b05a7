package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
)

// docRecipes are the ```sh blocks of a Markdown file, in order.
func docRecipes(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && line == "```sh":
			cur = &strings.Builder{}
		case cur != nil && line == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s: a ```sh block does not end", path)
	}
	return blocks
}

// TestReadmeRecipes runs every recipe (```sh block) of README.md and of
// the pages under docs/, as written, against the demo store mounted at ~/pi
// (HOME is a temporary folder whose pi is the mount): each must succeed
// and print something, so the docs cannot rot. Each page gets a mount of
// its own, since recipes write; a page's recipes run in order.
func TestReadmeRecipes(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages := append([]string{"../README.md"}, docs...)
	if n := len(docRecipes(t, "../README.md")); n < 5 {
		t.Fatalf("README.md has %d recipes, want at least 5", n)
	}
	for _, page := range pages {
		recipes := docRecipes(t, page)
		if len(recipes) == 0 {
			continue
		}
		t.Run(strings.TrimPrefix(page, "../"), func(t *testing.T) {
			// The sessions were copied just now: an hour earlier, they
			// are not taken as being written (a trash would be refused),
			// and the trash is the recipes' home's.
			store := demoStore(t)
			backdate(t, store, time.Hour)
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
			mnt := testMount(t, store, func(o *fs.Options) { o.SearchDir = t.TempDir() })
			files, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
			indexed(t, mnt, len(files)) // by-file/ shows what the index holds
			if err := os.Symlink(mnt, filepath.Join(home, "pi")); err != nil {
				t.Fatal(err)
			}
			searchWait(t, "search/status says the index is complete", func() (bool, string) {
				b, _ := os.ReadFile(filepath.Join(mnt, "search", "status"))
				return strings.HasPrefix(string(b), "index complete"), string(b)
			})
			for i, r := range recipes {
				if strings.Contains(r, "/events") || strings.HasSuffix(strings.TrimSpace(r), " events") {
					liveRecipe(t, i, r, home, mnt)
					continue
				}
				cmd := exec.Command("timeout", "60", "bash", "-euo", "pipefail", "-c", r)
				cmd.Dir = home
				cmd.Env = append(os.Environ(), "HOME="+home)
				start := time.Now()
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("recipe %d failed: %v\n%s\noutput:\n%s", i+1, err, r, out)
					continue
				}
				if len(strings.TrimSpace(string(out))) == 0 && !strings.Contains(r, "cp ") {
					t.Errorf("recipe %d printed nothing:\n%s", i+1, r)
				}
				t.Logf("recipe %d (%v):\n%s", i+1, time.Since(start).Round(time.Millisecond), out)
			}
		})
	}
}

// backdate moves the mtime of every session file of a store back by d.
func backdate(t *testing.T, store string, d time.Duration) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.jsonl"))
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		mt := fi.ModTime().Add(-d)
		if err := os.Chtimes(f, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}
