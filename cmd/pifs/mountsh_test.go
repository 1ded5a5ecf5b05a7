package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMountScript: ./mount.sh with an empty sessions directory mounts a demo copy; a
// closed terminal (SIGHUP to its process group) or a TERM to the script
// unmounts, and the demo copy is removed; --help is pifs's help.
func TestMountScript(t *testing.T) {
	buildPifs(t) // skips without FUSE
	script, _ := filepath.Abs(filepath.Join("..", "..", "mount.sh"))
	if out, err := exec.Command(script, "--help").Output(); err != nil || !strings.HasPrefix(string(out), "Usage: pifs") {
		t.Fatalf("mount.sh --help: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		empty, tmp := t.TempDir(), t.TempDir()
		mnt := filepath.Join(t.TempDir(), "mnt")
		noMountLeft(t, mnt)
		cmd := exec.Command(script, mnt)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PI_CODING_AGENT_SESSION_DIR="+empty)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stderr)
		expectLine(t, lines, "mounting a copy of the demo store")
		expectLine(t, lines, "mounted "+tmp)
		if !mounted(mnt) {
			t.Fatalf("not mounted")
		}
		if sig == syscall.SIGHUP {
			syscall.Kill(-cmd.Process.Pid, sig) // the terminal's whole process group
		} else {
			cmd.Process.Signal(sig) // the script alone
		}
		if code := exitCodeOf(cmd, lines); code != 0 || mounted(mnt) {
			t.Errorf("%v: exit %d, mounted %v", sig, code, mounted(mnt))
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "pifs-demo.*")); len(left) > 0 {
			t.Errorf("%v: demo copy left: %v", sig, left)
		}
	}
}
