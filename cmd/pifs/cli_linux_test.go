package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// mountsAt counts the mounts stacked at mnt in /proc/self/mountinfo.
func mountsAt(t *testing.T, mnt string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == mnt {
			n++
		}
	}
	return n
}

// TestMountRace: of two pifs started at the same instant on one
// mountpoint, exactly one mounts; the other exits 3 and says why. Nothing
// is stacked, and nothing is left once the one that mounted is stopped.
// Both run in the foreground, to start as close together as can be.
func TestMountRace(t *testing.T) {
	bin := buildPifs(t)
	store := testStore(t)
	for round := 0; round < 10; round++ {
		mnt := emptyDir(t)
		type result struct {
			mounted bool
			code    int
			out     string
		}
		var cmds [2]*exec.Cmd
		var stderr [2]io.Reader
		for i := range cmds {
			cmds[i] = exec.Command(bin, "--sessions-dir", store, mnt)
			var err error
			if stderr[i], err = cmds[i].StderrPipe(); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		var results [2]chan result
		for i := range cmds {
			results[i] = make(chan result, 1)
			go func(c *exec.Cmd, stderr io.Reader, ch chan result) {
				var out strings.Builder
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					out.WriteString(sc.Text() + "\n")
					if strings.HasPrefix(sc.Text(), "pifs: mounted ") {
						ch <- result{mounted: true, out: out.String()}
						for sc.Scan() {
						}
						return
					}
				}
				c.Wait()
				ch <- result{code: c.ProcessState.ExitCode(), out: out.String()}
			}(cmds[i], stderr[i], results[i])
		}
		r := [2]result{<-results[0], <-results[1]}
		n := mountsAt(t, mnt)
		winner, loser := -1, -1
		for i := range r {
			if r[i].mounted {
				winner = i
			} else {
				loser = i
			}
		}
		// Stop what mounted. With two mounts stacked, the first signalled
		// unmounts the top one, which may be the other's: each gets its
		// signal, then a kill, and what is left is unmounted lazily.
		for i, c := range cmds {
			if r[i].mounted {
				c.Process.Signal(syscall.SIGTERM)
				done := make(chan struct{})
				go func() { c.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					c.Process.Kill()
					<-done
				}
			}
		}
		for i := 0; i < 2 && mountsAt(t, mnt) > 0; i++ {
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
		switch {
		case n != 1:
			t.Errorf("round %d: %d mounts stacked at %s", round, n, mnt)
		case winner < 0 || loser < 0 || r[loser].code != exitMountpoint:
			t.Errorf("round %d: want one mounted and one exit %d; got %+v", round, exitMountpoint, r)
		case r[loser].out != "pifs: mountpoint "+mnt+" is already a mount (fuse.pifs of "+store+"); unmount it first: fusermount3 -u "+mnt+"\n":
			t.Errorf("round %d: the pifs that did not mount says %q", round, r[loser].out)
		}
		if names, _ := os.ReadDir(mnt); len(names) != 0 {
			t.Errorf("round %d: %d files left in the mountpoint", round, len(names))
		}
	}
}

// vm is a field of /proc/PID/status (VmHWM, VmRSS), in bytes.
func vm(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			fmt.Sscan(rest, &kb)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestMemoryBound: a session with a 48 MiB line takes the mount to at
// most the budget, two and a half times the session and 64 MiB at its
// peak (its bytes once, its info.json once, work in flight); once the
// mount gives it up for another session, the memory goes back to the
// system: the bound holds idle too.
func TestMemoryBound(t *testing.T) {
	bin := buildPifs(t)
	store := filepath.Join(t.TempDir(), "store")
	os.MkdirAll(filepath.Join(store, "--p--"), 0o755)
	const size, budget, fixed = 48 << 20, 8 << 20, 64 << 20
	big := `{"type":"session","version":3,"id":"big","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"` +
		strings.Repeat("a long line ", size/12) + `"}}` + "\n"
	small := `{"type":"session","version":3,"id":"small","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n"
	os.WriteFile(filepath.Join(store, "--p--", "big.jsonl"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(store, "--p--", "small.jsonl"), []byte(small), 0o644)
	mnt := emptyDir(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	if out, code := pifsStatus(t, bin, nil, "--daemon", "--cache-size", "8MiB", "--pid-file", pidFile, "--log-file", filepath.Join(t.TempDir(), "log"), "--sessions-dir", store, mnt); code != 0 {
		t.Fatalf("pifs --daemon: %d %s", code, out)
	}
	pid := readPid(t, pidFile)
	defer func() { syscall.Kill(pid, syscall.SIGTERM); waitGone(t, pid) }()
	info, err := os.ReadFile(filepath.Join(mnt, "--p--", "big", "info.json"))
	if err != nil || len(info) < size {
		t.Fatalf("big/info.json: %d bytes, %v", len(info), err)
	}
	held := vm(t, pid, "VmRSS")
	peak := vm(t, pid, "VmHWM")
	t.Logf("peak %d MiB for a session of %d MiB and a budget of %d MiB, bound %d MiB", peak>>20, size>>20, budget>>20, (budget+size*5/2+fixed)>>20)
	if peak > budget+size*5/2+fixed {
		t.Errorf("peak %d MiB for a session of %d MiB and a budget of %d MiB", peak>>20, size>>20, budget>>20)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "--p--", "small", "info.json")); err != nil {
		t.Fatal(err)
	}
	var rss int64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if rss = vm(t, pid, "VmRSS"); rss <= budget+fixed {
			break
		}
	}
	if rss > budget+fixed {
		t.Errorf("idle once the big session is given up: %d MiB (%d MiB while it was held), want at most %d MiB", rss>>20, held>>20, (budget+fixed)>>20)
	}
}

// TestMemoryBoundManyEntries: `ls entries/` of a session of 200,000 short
// entries, more names than an 8 MiB budget holds nodes for, keeps the
// mount within the documented bound: the budget, the session parsed (its
// file and 500 bytes an entry), 200 bytes a name while the folder is
// listed, and 64 MiB, at its peak; idle after it, the same without the
// listing. The kernel is handed the names alone and holds no node for
// them (with a node per name the mount peaks at 281 MiB and idles at 249).
func TestMemoryBoundManyEntries(t *testing.T) {
	bin := buildPifs(t)
	store := filepath.Join(t.TempDir(), "store")
	os.MkdirAll(filepath.Join(store, "--p--"), 0o755)
	const n, budget, fixed, perEntry, perName = 200000, 8 << 20, 64 << 20, 500, 200
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"many","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}` + "\n")
	parent := "null"
	for i := range n {
		id := fmt.Sprintf("%08x", i)
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"message number %d of the session","timestamp":1704067201000}}`+"\n", id, parent, i)
		parent = `"` + id + `"`
	}
	size := int64(b.Len())
	os.WriteFile(filepath.Join(store, "--p--", "many.jsonl"), []byte(b.String()), 0o644)
	mnt := emptyDir(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	if out, code := pifsStatus(t, bin, nil, "--daemon", "--cache-size", "8MiB", "--cache-dir", "none", "--pid-file", pidFile, "--log-file", filepath.Join(t.TempDir(), "log"), "--sessions-dir", store, mnt); code != 0 {
		t.Fatalf("pifs --daemon: %d %s", code, out)
	}
	pid := readPid(t, pidFile)
	defer func() { syscall.Kill(pid, syscall.SIGTERM); waitGone(t, pid) }()
	out, err := exec.Command("sh", "-c", "ls "+filepath.Join(mnt, "--p--", "many", "entries")+" | wc -l").Output()
	if err != nil || strings.TrimSpace(string(out)) != fmt.Sprint(n) {
		t.Fatalf("ls entries/ | wc -l: %q, %v", out, err)
	}
	bound := budget + size + n*perEntry + fixed
	if peak, listing := vm(t, pid, "VmHWM"), bound+n*perName; peak > listing {
		t.Errorf("peak %d MiB listing %d entries of a %d MiB session at an 8 MiB budget, want at most %d MiB", peak>>20, n, size>>20, listing>>20)
	}
	var rss int64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if rss = vm(t, pid, "VmRSS"); rss <= bound {
			break
		}
	}
	if rss > bound {
		t.Errorf("idle after ls entries/: %d MiB, want at most %d MiB", rss>>20, bound>>20)
	}
	t.Logf("%d entries, %d MiB session: peak %d MiB, then %d MiB, bound %d MiB", n, size>>20, vm(t, pid, "VmHWM")>>20, rss>>20, bound>>20)
}

// TestNoFuse: on a machine without fuse3 (its fusermount3 and fusermount
// gone from every folder PATH and go-fuse look in), pifs says what is
// missing and how to install it, exits with the mountpoint's code and
// mounts nothing. The folders are hidden under empty tmpfs mounts in a
// mount namespace of the pifs process alone.
func TestNoFuse(t *testing.T) {
	bin := buildPifs(t)
	if os.Getuid() != 0 {
		skipOrFail(t, "hiding fusermount3 takes a mount namespace: run as root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		skipOrFail(t, "no unshare(1)")
	}
	store := testStore(t)
	mnt := emptyDir(t)
	// The folders go-fuse and pifs's own PATH look in, resolved (/bin is
	// often a link to /usr/bin), each hidden once; mount(8) itself is in
	// the last.
	var hide []string
	seen := map[string]bool{}
	for _, d := range []string{"/usr/local/bin", "/usr/local/sbin", "/usr/sbin", "/sbin", "/bin", "/usr/bin"} {
		if r, err := filepath.EvalSymlinks(d); err == nil && !seen[r] {
			seen[r] = true
			hide = append(hide, "mount -t tmpfs none "+r)
		}
	}
	mountCmd, _ := exec.LookPath("mount")
	if r, _ := filepath.EvalSymlinks(filepath.Dir(mountCmd)); !strings.HasSuffix(hide[len(hide)-1], " "+r) {
		t.Fatalf("mount(8) is in %s, which would be hidden before its last use: %v", r, hide)
	}
	script := strings.Join(hide, " && ") + ` && exec "$@"`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", bin, "--sessions-dir", store, mnt)
	cmd.Env = append(os.Environ(), "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("unshare: %v\n%s", err, out)
	}
	for _, want := range []string{"FUSE is not installed", "fusermount3", "apt install fuse3", "dnf install fuse3", "macFUSE"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the message lacks %q: %s", want, out)
		}
	}
	if strings.Contains(string(out), "exec:") {
		t.Errorf("the message is go-fuse's: %s", out)
	}
	if code != exitMountpoint {
		t.Errorf("exit %d, want %d (%s)", code, exitMountpoint, out)
	}
	if mounted(mnt) {
		t.Errorf("%s is mounted", mnt)
	}
}
