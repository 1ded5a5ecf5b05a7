package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// liveTurn is an assistant message that ends a turn, costing 0.5.
const liveTurn = `{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}}}`

// liveRecipe runs a recipe that follows events until it is stopped: the
// newest session finishes turns (through its append control) until the
// recipe shows one of them, then the recipe is stopped. notify-send is an
// echo on the recipe's PATH. A recipe that notifies must notify; another
// must print a line for a turn besides what it prints at once.
func liveRecipe(t *testing.T, i int, r, home, mnt string) {
	t.Helper()
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "notify-send"), []byte("#!/bin/sh\necho \"notify-send: $*\"\n"), 0o755)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", r)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+bin+":"+os.Getenv("PATH"))
	var out output
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		cmd.Wait()
	}()
	shown := func() bool {
		s := out.String()
		if strings.Contains(r, "notify-send") {
			return strings.Contains(s, "notify-send: pi finished a turn --home-user-")
		}
		return len(strings.Fields(s)) >= 2
	}
	for deadline := time.Now().Add(30 * time.Second); !shown(); {
		if time.Now().After(deadline) {
			t.Errorf("live recipe %d showed no turn:\n%s\noutput:\n%s", i+1, r, out.String())
			return
		}
		if err := os.WriteFile(filepath.Join(mnt, "latest", "append"), []byte(liveTurn+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("live recipe %d:\n%s", i+1, out.String())
}
