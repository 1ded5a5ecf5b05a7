package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pifs/pifs/fs"
)

// daemonEnv names the descriptor through which a background child reports
// that the mount is ready, or why it failed.
const daemonEnv = "PIFS_DAEMON_READY_FD"

// serve mounts and serves until unmounted. ready is the pipe to the
// parent when this is the background child of --daemon (nil otherwise).
func serve(cfg config, ready *os.File) int {
	logPath := cfg.logFile
	if logPath == "" && ready != nil {
		logPath = defaultLogFile()
	}
	var logFile *os.File
	logger := newLogger(os.Stderr, cfg, false)
	if logPath != "" {
		f, err := openLog(logPath)
		if err != nil {
			return fail(ready, nil, exitError, fmt.Errorf("log file: %w", err))
		}
		defer f.Close()
		logFile = f
		logger = newLogger(f, cfg, true)
	}
	cfg.mount.Logger = logger
	raiseFileLimit(logger)
	// Signals that come while mounting are handled once mounted.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	if cfg.pidFile != "" {
		if err := checkPidFile(cfg.pidFile, logger); err != nil {
			return fail(ready, logFile, exitError, err)
		}
	}
	heap := cfg.cacheBytes
	if cfg.mount.SearchDir != "" {
		heap -= fs.SearchBytes(heap) // SQLite's memory is not the Go heap's
	}
	mem := newMemory(heap)
	cfg.mount.Parsed = mem.parsed
	spareProc()
	m, err := fs.Mount(cfg.mountpoint, cfg.mount)
	if err != nil {
		return fail(ready, logFile, exitCode(err), err)
	}
	mem.watch(m.Squeeze)
	// The mount answers: from here on, every failure unmounts.
	if _, err := os.Stat(cfg.mountpoint); err != nil {
		m.Detach()
		return fail(ready, logFile, exitMountFailed, fmt.Errorf("the new mount does not answer: %w", err))
	}
	if cfg.pidFile != "" {
		if err := writePidFile(cfg.pidFile); err != nil {
			if m.Unmount() != nil {
				m.Detach()
			}
			return fail(ready, logFile, exitError, fmt.Errorf("pid file: %w", err))
		}
		defer os.Remove(cfg.pidFile)
	}
	line := startupLine(cfg)
	if m.Polls() {
		line += "; " + m.Watching() + " for changes"
	}
	logger.Info(line)
	if err := sdNotify("READY=1\nSTATUS=" + line); err != nil {
		logger.Warn("telling systemd the mount is ready: " + err.Error())
	}
	if logPath != "" {
		line += "; logging to " + logPath
	}
	if ready != nil {
		os.Chdir("/") // keep no directory busy
		// Later output, panics included, goes to the log, and the parent
		// sees the end of what it copies from our stderr.
		dupTo(int(logFile.Fd()), 2)
		fmt.Fprintf(ready, "ok\t%s\n", line)
		ready.Close()
	} else if logFile != nil {
		fmt.Fprintf(os.Stderr, "pifs: %s\n", line)
	}

	go func() {
		s := <-sigs
		sdNotify("STOPPING=1")
		logger.Info(fmt.Sprintf("%v: unmounting %s", s, cfg.mountpoint))
		if err := m.Unmount(); err != nil {
			if derr := m.Detach(); derr != nil {
				logger.Error(fmt.Sprintf("unmount: %v; lazy unmount: %v", err, derr))
			} else {
				logger.Warn(fmt.Sprintf("unmount: %v; detached the busy mount lazily: its open files are served until closed (a second signal exits at once)", err))
			}
		}
		s = <-sigs
		logger.Warn(fmt.Sprintf("%v again: exiting now", s))
		m.Detach()
		if cfg.pidFile != "" {
			os.Remove(cfg.pidFile)
		}
		os.Exit(exitError)
	}()
	if stop := startProfile(logger); stop != nil {
		defer stop()
	}
	m.Wait()
	sdNotify("STOPPING=1")
	logger.Info("unmounted " + cfg.mountpoint)
	return exitOK
}

// fail reports a failure to start: to the parent through the ready pipe
// (it prints it), else on stderr; and to the log file when there is one.
func fail(ready, logFile *os.File, code int, err error) int {
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	if logFile != nil {
		fmt.Fprintf(logFile, "pifs: %s\n", msg)
	}
	if ready != nil {
		fmt.Fprintf(ready, "error\t%d\t%s\n", code, msg)
		ready.Close()
	} else {
		fmt.Fprintf(os.Stderr, "pifs: %s\n", msg)
	}
	return code
}

// startupLine says what is mounted where, without reading a session.
func startupLine(cfg config) string {
	mode := "read-write"
	if cfg.mount.ReadOnly || hasOption(cfg.mount.MountOptions, "ro") {
		mode = "read-only"
	}
	projects, flat := 0, 0
	if ents, err := os.ReadDir(cfg.mount.SessionsDir); err == nil {
		for _, e := range ents {
			switch {
			case e.IsDir():
				projects++
			case strings.HasSuffix(e.Name(), ".jsonl"):
				flat++
			}
		}
	}
	what := fmt.Sprintf("%d project folders", projects)
	if flat > 0 {
		what += fmt.Sprintf(", %d flat session files", flat)
	}
	if _, err := os.Stat(cfg.mount.SessionsDir); err != nil {
		what = "not created yet: waiting for it"
	}
	layout := "new sessions go in their working directory's folder"
	if cfg.mount.Flat {
		layout = "new sessions go flat at its top"
	}
	return fmt.Sprintf("mounted %s on %s (%s, %s, cache %s); sessions directory %s; %s", cfg.mount.SessionsDir, cfg.mountpoint, mode, what, formatSize(cfg.cacheBytes), cfg.where, layout)
}

func hasOption(opts []string, want string) bool {
	for _, o := range opts {
		for _, opt := range strings.Split(o, ",") {
			if strings.TrimSpace(opt) == want {
				return true
			}
		}
	}
	return false
}

// checkPidFile refuses a pid file that names a running pifs; one whose
// process is gone is stale and will be replaced.
func checkPidFile(path string, logger *slog.Logger) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return nil
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		if name, _, _ := strings.Cut(string(cmdline), "\x00"); filepath.Base(name) == "pifs" {
			return fmt.Errorf("pid file %s names pifs process %d, still running: stop it (kill %d) or use another --pid-file", path, pid, pid)
		}
	}
	logger.Info(fmt.Sprintf("replacing the stale pid file %s (process %d is gone)", path, pid))
	return nil
}

// writePidFile writes our pid, replacing the file atomically.
func writePidFile(path string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readyPipe is the descriptor a background child reports on (nil
// otherwise).
func readyPipe() *os.File {
	fd, err := strconv.Atoi(os.Getenv(daemonEnv))
	if err != nil || fd < 3 {
		return nil
	}
	os.Unsetenv(daemonEnv)
	return os.NewFile(uintptr(fd), "ready")
}

// startDaemon runs pifs again in the background, in its own session, and
// waits until it reports that the mount is ready or why it failed. The
// child's stderr comes here until then, so that what fusermount3 says
// reaches the user.
func startDaemon(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return exitError
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return exitError
	}
	er, ew, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return exitError
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return exitError
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), daemonEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, ew
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return exitError
	}
	w.Close()
	ew.Close()
	null.Close()
	// What the child wrote to stderr before it reported (fusermount3's
	// complaint) waits in the pipe; a process that keeps the pipe open
	// (fusermount3 with auto_unmount) must not make us wait.
	line, _ := bufio.NewReader(r).ReadString('\n')
	status, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
	if status == "ok" {
		drain(er, os.Stderr)
		fmt.Fprintf(os.Stderr, "pifs: %s\n", rest)
		cmd.Process.Release()
		return exitOK
	}
	cmd.Wait()
	drain(er, os.Stderr)
	code, msg, _ := strings.Cut(rest, "\t")
	n, err := strconv.Atoi(code)
	if status != "error" || err != nil {
		n, msg = exitError, "the background process exited before the mount was ready"
		if cmd.ProcessState != nil {
			msg += " (" + cmd.ProcessState.String() + ")"
		}
	}
	fmt.Fprintf(os.Stderr, "pifs: %s\n", msg)
	return n
}

// drain copies what is in the pipe r now to w, without waiting for more.
func drain(r *os.File, w io.Writer) {
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	rc.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.Read(int(fd), buf)
			if n > 0 {
				w.Write(buf[:n])
			}
			if n <= 0 || err != nil {
				return true
			}
		}
	})
	r.Close()
}
