package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDeadOtherMount: a dead FUSE mount that is not pifs's is left alone
// and named, with the command that clears it (exit 3).
func TestDeadOtherMount(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	mnt := emptyDir(t)
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR, 0)
	if err != nil {
		skipOrFail(t, err.Error())
	}
	data := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d", fd, os.Getuid(), os.Getgid())
	if err := syscall.Mount("elsewhere", mnt, "fuse.other", syscall.MS_NOSUID|syscall.MS_NODEV, data); err != nil {
		syscall.Close(fd)
		skipOrFail(t, "mount(2) of a FUSE device: "+err.Error())
	}
	syscall.Close(fd) // no server: the mount is dead
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	out, code := pifsStatus(t, bin, nil, "--sessions-dir", store, mnt)
	want := "pifs: mountpoint " + mnt + " is a disconnected fuse.other mount of elsewhere (transport endpoint is not connected); clear it with: fusermount3 -u -z " + mnt + "\n"
	if code != exitMountpoint || out != want {
		t.Errorf("exit %d, %q; want %d, %q", code, out, exitMountpoint, want)
	}
}

// fileLimit is the soft and hard limit of open files of process pid, from
// /proc/PID/limits.
func fileLimit(t *testing.T, pid int) (soft, hard string) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			f := strings.Fields(rest)
			return f[0], f[1]
		}
	}
	t.Fatalf("no open files limit in /proc/%d/limits:\n%s", pid, data)
	return "", ""
}

// TestFileLimitRaised: pifs serves with its soft limit of open files
// raised to the hard limit, in the foreground and as a daemon, and says so
// at debug level.
func TestFileLimitRaised(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	limited := `ulimit -S -n 1024 && ulimit -H -n 4096 && exec "$0" "$@"`

	mnt := emptyDir(t)
	cmd, lines := foreground(t, "sh", nil, "-c", limited, bin, "-v", "--sessions-dir", store, mnt)
	if soft, hard := fileLimit(t, cmd.Process.Pid); soft != "4096" || hard != "4096" {
		t.Errorf("foreground: open files limit %s (hard %s), want 4096", soft, hard)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exitCodeOf(cmd, lines)

	mnt = emptyDir(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	log := filepath.Join(t.TempDir(), "log")
	out, err := exec.Command("sh", "-c", limited, bin, "--daemon", "-v", "--log-file", log, "--pid-file", pidFile, "--sessions-dir", store, mnt).CombinedOutput()
	if err != nil {
		t.Fatalf("pifs --daemon: %v\n%s", err, out)
	}
	pid := readPid(t, pidFile)
	defer func() { syscall.Kill(pid, syscall.SIGTERM); waitGone(t, pid) }()
	if soft, hard := fileLimit(t, pid); soft != "4096" || hard != "4096" {
		t.Errorf("daemon: open files limit %s (hard %s), want 4096", soft, hard)
	}
	if logged, _ := os.ReadFile(log); !strings.Contains(string(logged), "open files: limit raised from ") {
		t.Errorf("the log does not say the limit was raised:\n%s", logged)
	}
}
