package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeRecipes are the ```sh blocks of README.md, in order.
func readmeRecipes(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../README.md")
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
	return blocks
}

// TestReadmeRecipes runs every recipe of README.md, as written, against
// the demo store mounted at ~/pi (HOME is a temporary folder whose pi is
// the mount): each must succeed, so the docs cannot rot.
func TestReadmeRecipes(t *testing.T) {
	recipes := readmeRecipes(t)
	if len(recipes) < 5 {
		t.Fatalf("README.md has %d recipes", len(recipes))
	}
	mnt := testMount(t, demoStore(t))
	home := t.TempDir()
	if err := os.Symlink(mnt, filepath.Join(home, "pi")); err != nil {
		t.Fatal(err)
	}
	for i, r := range recipes {
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
}
