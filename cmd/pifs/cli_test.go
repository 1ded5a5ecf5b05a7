package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testStore makes a store with one project and one session.
func testStore(t *testing.T) string {
	t.Helper()
	store := filepath.Join(t.TempDir(), "store")
	proj := filepath.Join(store, "--p--")
	os.MkdirAll(proj, 0o755)
	session := `{"type":"session","version":3,"id":"sid","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}
`
	os.WriteFile(filepath.Join(proj, "s1.jsonl"), []byte(session), 0o644)
	return store
}

// emptyDir makes an empty mountpoint that is checked to be left unmounted
// when the test ends.
func emptyDir(t *testing.T) string {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(mnt, 0o755)
	noMountLeft(t, mnt)
	return mnt
}

// noMountLeft fails the test when mnt is still a mount at its end, and
// clears it.
func noMountLeft(t *testing.T, mnt string) {
	t.Cleanup(func() {
		if mounted(mnt) {
			t.Errorf("%s left mounted", mnt)
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
	})
}

// pifsStatus runs the binary and returns its combined output and exit code.
func pifsStatus(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("pifs %v: %v", args, err)
	}
	return string(out), 0
}

// gone tells whether pid has exited (a zombie nobody reaps counts as gone).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// waitGone waits for a process that is not our child to exit.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; !gone(pid); i++ {
		if i == 200 {
			t.Fatalf("process %d still running after 10s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file %s: %q, %v", file, data, err)
	}
	return pid
}

// TestRefusals: each mistake is refused before mounting, with its exit
// code and a message naming the fix, in the foreground and with --daemon,
// and nothing is left mounted.
func TestRefusals(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	full := filepath.Join(tmp, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	noMountLeft(t, full)
	noMountLeft(t, file)
	live := emptyDir(t)
	if out, code := pifsStatus(t, bin, nil, "--daemon", "--pid-file", filepath.Join(tmp, "live.pid"), "--sessions-dir", store, live); code != 0 {
		t.Fatalf("pifs --daemon: %d %s", code, out)
	}
	livePid := readPid(t, filepath.Join(tmp, "live.pid"))
	defer func() { syscall.Kill(livePid, syscall.SIGTERM); waitGone(t, livePid) }()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no mountpoint", []string{"--sessions-dir", store}, exitUsage, "missing MOUNTPOINT"},
		{"three arguments", []string{store, full, full}, exitUsage, "too many arguments"},
		{"unknown flag", []string{"--bogus", full}, exitUsage, "unknown flag: --bogus"},
		{"bad size", []string{"--cache-size", "lots", "--sessions-dir", store, emptyDir(t)}, exitUsage, "--cache-size: invalid size"},
		{"bad -o", []string{"--sessions-dir", store, "-o", "ro,bogus", emptyDir(t)}, exitUsage, `unknown mount option "bogus"`},
		{"auto_unmount", []string{"--sessions-dir", store, "-o", "auto_unmount", emptyDir(t)}, exitUsage, "auto_unmount is not supported"},
		{"store twice", []string{"--sessions-dir", store, store, full}, exitUsage, "given twice"},
		{"missing mountpoint", []string{"--sessions-dir", store, filepath.Join(tmp, "nope")}, exitMountpoint, "does not exist; create it with: mkdir -p"},
		{"file mountpoint", []string{"--sessions-dir", store, file}, exitMountpoint, "is not a directory"},
		{"not empty", []string{"--sessions-dir", store, full}, exitMountpoint, "is not empty; use an empty directory, or --nonempty"},
		{"inside the store", []string{"--sessions-dir", store, filepath.Join(store, "--p--")}, exitMountpoint, "inside the sessions directory"},
		{"over the store", []string{"--sessions-dir", store, "--nonempty", filepath.Dir(store)}, exitMountpoint, "inside the mountpoint"},
		{"already mounted", []string{"--sessions-dir", store, live}, exitMountpoint, "is already a mount (fuse.pifs of " + store + "); unmount it first: fusermount3 -u " + live},
		{"store is a file", []string{"--sessions-dir", file, emptyDir(t)}, exitSessionsDir, "is not a directory"},
		{"fusermount3 refuses", []string{"--sessions-dir", store, "-o", "max_read=x", emptyDir(t)}, exitMountFailed, "fusermount3: mount failed: Invalid argument"},
	}
	for _, c := range cases {
		for _, daemon := range []bool{false, true} {
			args := c.args
			if daemon {
				args = append([]string{"--daemon"}, args...)
			}
			out, code := pifsStatus(t, bin, nil, args...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("%s (daemon %v): exit %d, %q; want exit %d and %q", c.name, daemon, code, out, c.code, c.want)
			}
		}
	}
	// --nonempty mounts over files, and hides them until unmounted.
	pid := filepath.Join(tmp, "full.pid")
	if out, code := pifsStatus(t, bin, nil, "--daemon", "--nonempty", "--pid-file", pid, "--sessions-dir", store, full); code != 0 {
		t.Fatalf("--nonempty: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(full, "--p--", "s1", "leaf")); err != nil {
		t.Errorf("--nonempty mount: %v", err)
	}
	fullPid := readPid(t, pid)
	syscall.Kill(fullPid, syscall.SIGTERM)
	waitGone(t, fullPid)
}

// foreground starts pifs in the foreground and returns once its start-up
// line says it is mounted; lines gives the rest of what it logs.
func foreground(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd, lines, _ := foregroundLine(t, bin, env, args...)
	return cmd, lines
}

// foregroundLine is foreground that also returns the start-up line.
func foregroundLine(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, *bufio.Scanner, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := bufio.NewScanner(stderr)
	line := expectLine(t, lines, "mounted ")
	return cmd, lines, line
}

// expectLine reads log lines until one contains want.
func expectLine(t *testing.T, lines *bufio.Scanner, want string) string {
	t.Helper()
	var seen []string
	for lines.Scan() {
		if strings.Contains(lines.Text(), want) {
			return lines.Text()
		}
		seen = append(seen, lines.Text())
	}
	t.Fatalf("no log line with %q; got:\n%s", want, strings.Join(seen, "\n"))
	return ""
}

// exitCodeOf waits for cmd and returns its exit code.
func exitCodeOf(cmd *exec.Cmd, lines *bufio.Scanner) int {
	for lines.Scan() {
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// TestSignals: SIGHUP (a closed terminal), SIGINT, SIGTERM and SIGQUIT
// each unmount cleanly and exit 0.
func TestSignals(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT} {
		mnt := emptyDir(t)
		cmd, lines := foreground(t, bin, nil, "--sessions-dir", store, mnt)
		if !mounted(mnt) {
			t.Fatalf("%v: not mounted after the start-up line", sig)
		}
		cmd.Process.Signal(sig)
		expectLine(t, lines, "unmounting "+mnt)
		if code := exitCodeOf(cmd, lines); code != 0 || mounted(mnt) {
			t.Errorf("%v: exit %d, mounted %v", sig, code, mounted(mnt))
		}
	}
}

// TestSecondSignal: a busy mount is detached lazily on the first signal
// (it leaves the mount table at once) and served until its files close;
// a second signal exits at once.
func TestSecondSignal(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	mnt := emptyDir(t)
	cmd, lines := foreground(t, bin, nil, "--sessions-dir", store, mnt)
	holder := exec.Command("sh", "-c", `cd "$0" && echo in && exec sleep 600`, filepath.Join(mnt, "--p--"))
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "in\n" {
		t.Fatalf("holder: %q", line)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	expectLine(t, lines, "detached the busy mount lazily")
	if mounted(mnt) {
		t.Errorf("still in the mount table after a lazy unmount")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	expectLine(t, lines, "again: exiting now")
	if code := exitCodeOf(cmd, lines); code != exitError {
		t.Errorf("exit %d after a second signal, want %d", code, exitError)
	}
}

// TestDeadMount: after kill -9 the mountpoint is a dead pifs mount; the
// next pifs clears it and replaces the stale pid file.
func TestDeadMount(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	mnt := emptyDir(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	log := filepath.Join(t.TempDir(), "log")
	args := []string{"--daemon", "--sessions-dir", store, "--pid-file", pidFile, "--log-file", log, mnt}
	if out, code := pifsStatus(t, bin, nil, args...); code != 0 {
		t.Fatalf("pifs --daemon: %d %s", code, out)
	}
	old := readPid(t, pidFile)
	syscall.Kill(old, syscall.SIGKILL)
	waitGone(t, old)
	// The kernel aborts the connection as the dead process's files are
	// released; a statfs racing with that may see EIO first.
	var st syscall.Statfs_t
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Statfs(mnt, &st)
		if errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED) {
			break
		}
		if !errors.Is(err, syscall.EIO) || time.Now().After(deadline) {
			t.Fatalf("statfs after kill -9: %v, want ENOTCONN or ECONNABORTED", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, code := pifsStatus(t, bin, nil, args...)
	if code != 0 {
		t.Fatalf("mounting again: %d %s", code, out)
	}
	pid := readPid(t, pidFile)
	defer func() { syscall.Kill(pid, syscall.SIGTERM); waitGone(t, pid) }()
	logged, _ := os.ReadFile(log)
	for _, want := range []string{"cleared a dead pifs mount of " + store + " on " + mnt, fmt.Sprintf("replacing the stale pid file %s (process %d is gone)", pidFile, old)} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("log lacks %q:\n%s", want, logged)
		}
	}
	if pid == old {
		t.Errorf("pid file not replaced")
	}
	if _, err := os.Stat(filepath.Join(mnt, "--p--", "s1", "leaf")); err != nil {
		t.Errorf("new mount: %v", err)
	}
	// A live pifs keeps its pid file.
	other := emptyDir(t)
	if out, code := pifsStatus(t, bin, nil, "--daemon", "--sessions-dir", store, "--pid-file", pidFile, other); code != exitError || !strings.Contains(out, fmt.Sprintf("names pifs process %d, still running", pid)) {
		t.Errorf("pid file of a live pifs: %d %s", code, out)
	}
}

// TestDaemonLogs: a daemon says where it logs, and logs there.
func TestDaemonLogs(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	mnt := emptyDir(t)
	state := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	out, code := pifsStatus(t, bin, []string{"XDG_STATE_HOME=" + state}, "--daemon", "--read-only", "--sessions-dir", store, "--pid-file", pidFile, mnt)
	logFile := filepath.Join(state, "pifs", "pifs.log")
	want := fmt.Sprintf("pifs: mounted %s on %s (read-only, 1 project folders, cache 256MiB); sessions directory from --sessions-dir, one folder per working directory as found there; new sessions go in their working directory's folder; logging to %s\n", store, mnt, logFile)
	if code != 0 || out != want {
		t.Fatalf("pifs --daemon: %d %q, want %q", code, out, want)
	}
	pid := readPid(t, pidFile)
	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)
	logged, _ := os.ReadFile(logFile)
	for _, want := range []string{"mounted " + store, "terminated: unmounting " + mnt, "unmounted " + mnt} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("log lacks %q:\n%s", want, logged)
		}
	}
}

// TestNotify: under systemd (Type=notify) pifs sends READY=1 once the
// mount answers and STOPPING=1 when it unmounts, to the abstract socket
// $NOTIFY_SOCKET names.
func TestNotify(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	mnt := emptyDir(t)
	name := fmt.Sprintf("@pifs-test-%d", os.Getpid())
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "\x00" + name[1:], Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cmd, lines := foreground(t, bin, []string{"NOTIFY_SOCKET=" + name}, "--sessions-dir", store, mnt)
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // a guard against hanging, not a timed assertion
	buf := make([]byte, 4096)
	n, _ := conn.Read(buf)
	if got := string(buf[:n]); !strings.HasPrefix(got, "READY=1\nSTATUS=mounted "+store+" on "+mnt) {
		t.Errorf("first notification %q", got)
	}
	if !mounted(mnt) {
		t.Errorf("READY=1 before the mount")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	n, _ = conn.Read(buf)
	if got := string(buf[:n]); got != "STOPPING=1" {
		t.Errorf("notification on SIGTERM: %q", got)
	}
	if code := exitCodeOf(cmd, lines); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestMountHelper: mount -t fuse.pifs and an fstab line run mount.fuse3,
// which runs "pifs STORE MOUNTPOINT -o OPTIONS" and waits for it to
// return; findmnt shows the store as the source; umount ends it.
func TestMountHelper(t *testing.T) {
	bin := buildPifs(t)
	for _, prog := range []string{"mount", "umount", "mount.fuse3"} {
		if _, err := exec.LookPath(prog); err != nil {
			skipOrFail(t, prog+" is not installed")
		}
	}
	if os.Getuid() != 0 {
		skipOrFail(t, "mount -t needs root")
	}
	store := testStore(t)
	mnt := emptyDir(t)
	// mount(8) runs mount.fuse3 with PATH set to the system's directories:
	// pifs must be installed there. Whatever is there already comes back.
	const installed = "/usr/local/sbin/pifs"
	saved := installed + ".before-pifs-test"
	if _, err := os.Lstat(installed); err == nil {
		if err := os.Rename(installed, saved); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Rename(saved, installed) })
	}
	if err := os.Symlink(bin, installed); err != nil {
		skipOrFail(t, "cannot install pifs for mount(8): "+err.Error())
	}
	t.Cleanup(func() { os.Remove(installed) })
	var env []string
	log := filepath.Join(t.TempDir(), "log")
	fstab := filepath.Join(t.TempDir(), "fstab")
	os.WriteFile(fstab, []byte(fmt.Sprintf("# a test fstab\n%s %s fuse.pifs defaults,noauto,user,_netdev,x-systemd.automount,allow_other,ro,cache_size=64MiB,log_file=%s 0 0\n", store, mnt, log)), 0o644)
	for _, args := range [][]string{
		{"-t", "fuse.pifs", store, mnt, "-o", "ro,noatime"},
		{"-T", fstab, mnt},
	} {
		cmd := exec.Command("mount", args...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mount %v: %v\n%s", args, err, out)
		}
		out, err := exec.Command("findmnt", "-n", "-o", "SOURCE,FSTYPE,OPTIONS", mnt).Output()
		if f := strings.Fields(string(out)); err != nil || len(f) != 3 || f[0] != store || f[1] != "fuse.pifs" || !strings.HasPrefix(f[2], "ro,") {
			t.Errorf("mount %v: findmnt: %q, %v", args, out, err)
		}
		if got, err := os.ReadFile(filepath.Join(mnt, "--p--", "s1", "leaf")); err != nil || string(got) != "a1\n" {
			t.Errorf("mount %v: leaf = %q, %v", args, got, err)
		}
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Fatalf("umount: %v %s", err, out)
		}
	}
	if logged, _ := os.ReadFile(log); !strings.Contains(string(logged), "(read-only, 1 project folders, cache 64MiB)") {
		t.Errorf("the fstab line's log_file and cache_size: %s", logged)
	}
}

// TestVersion: --version and -V give pifs's version, the commit and the
// go-fuse version from the build info.
func TestVersion(t *testing.T) {
	bin := buildPifs(t)
	mod, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/hanwen/go-fuse/v2").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--version", "-V"} {
		out, code := pifsStatus(t, bin, nil, flag)
		lines := strings.Split(out, "\n")
		if code != 0 || len(lines) < 4 || !strings.HasPrefix(lines[0], "pifs ") || !strings.HasPrefix(lines[1], "commit:  ") ||
			lines[2] != "go-fuse: "+strings.TrimSpace(string(mod)) || !strings.HasPrefix(lines[3], "go:      go1.") {
			t.Errorf("pifs %s: %d\n%s", flag, code, out)
		}
		if rev, err := exec.Command("go", "version", "-m", bin).Output(); err == nil && bytes.Contains(rev, []byte("vcs.revision=")) {
			_, r, _ := bytes.Cut(rev, []byte("vcs.revision="))
			if want := string(bytes.Fields(r)[0]); !strings.Contains(lines[1], want) {
				t.Errorf("commit line %q lacks %s", lines[1], want)
			}
		}
	}
	out, _ := pifsStatus(t, bin, nil, "--version")
	ld := filepath.Join(t.TempDir(), "pifs")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7", "-o", ld, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	if got, _ := exec.Command(ld, "-V").Output(); !strings.HasPrefix(string(got), "pifs v9.8.7\n") {
		t.Errorf("-ldflags version: %s (default build: %s)", got, out)
	}
}

// TestHelp: --help gives usage, examples, the unmount command, the
// controls, the exit codes and the man page, without pflag's type noise.
func TestHelp(t *testing.T) {
	bin := buildPifs(t)
	for _, flag := range []string{"--help", "-h"} {
		out, code := pifsStatus(t, bin, nil, flag)
		if code != 0 {
			t.Errorf("%s: exit %d", flag, code)
		}
		for _, want := range []string{"Usage: pifs [flags] MOUNTPOINT", "SESSIONS-DIR MOUNTPOINT", "Examples:", "fusermount3 -u MOUNTPOINT",
			"append, fork and new are controls", "Exit status:", "  3  unusable mountpoint", "  5  the mount itself failed", "man pifs",
			"--cache-size SIZE", "-V, --version", "--log-file FILE", "(default 256MiB)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", flag, want)
			}
		}
		for _, noise := range []string{"[=true|false]", "string", "stringArray", "(default false)"} {
			if strings.Contains(out, noise) {
				t.Errorf("%s shows %q", flag, noise)
			}
		}
	}
}

// TestPoll: --poll makes the mount poll the store, says so at start-up,
// and shows another writer's append within the interval and a bit, by
// polling alone (-o noevents: as when the writer is another machine).
func TestPoll(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	mnt := emptyDir(t)
	cmd, lines, line := foregroundLine(t, bin, nil, "--poll", "100ms", "-o", "noevents", "--sessions-dir", store, mnt)
	if !strings.Contains(line, "polling every 100ms for changes") {
		t.Errorf("the start-up line does not say the mount polls: %s", line)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		exitCodeOf(cmd, lines)
	}()
	leaf := filepath.Join(mnt, "--p--", "s1", "leaf")
	if got, err := os.ReadFile(leaf); err != nil || string(got) != "a1\n" {
		t.Fatalf("leaf: %q, %v", got, err)
	}
	f, err := os.OpenFile(filepath.Join(store, "--p--", "s1.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","id":"a2","parentId":"a1","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"again"}}` + "\n")
	f.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := os.ReadFile(leaf)
		if string(got) == "a2\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaf still %q 5 s after the append: the poll did not see it", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
