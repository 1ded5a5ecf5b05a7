// Command pifs mounts a store of pi coding-agent sessions as a file system.
//
//	pifs [flags] MOUNTPOINT
//
// It only reads the command line; package fs does the rest.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	rdebug "runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/sessions"
	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// daemonEnv names the descriptor through which a daemon child reports that
// the mount is ready (or why it failed).
const daemonEnv = "PIFS_DAEMON_READY_FD"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	flags := pflag.NewFlagSet("pifs", pflag.ContinueOnError)
	flags.SortFlags = false
	var (
		sessionsDir = flags.String("sessions-dir", "", "the sessions directory (default $PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions)")
		daemon      = flags.Bool("daemon", false, "run in the background; return once the mount is ready")
		readOnly    = flags.Bool("read-only", false, "refuse every write with EROFS")
		allowOther  = flags.Bool("allow-other", false, "let other users access the mount (implies default_permissions)")
		mountOpts   = flags.StringArrayP("options", "o", nil, "mount options, comma-separated (fstab style)")
		debug       = flags.Bool("debug", false, "log every FUSE request")
		cacheSize   = flags.Int64("cache-size", fs.DefaultCacheBytes, "bytes kept in memory: parsed sessions and renderings")
		tz          = flags.String("tz", "Local", "time zone of the usage reports' days and months (UTC, Europe/Paris, …)")
		pidFile     = flags.String("pid-file", "", "write the serving process's pid to this file")
		showVersion = flags.Bool("version", false, "print the version and exit")
		help        = flags.BoolP("help", "h", false, "show this help")
	)
	flags.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: pifs [flags] MOUNTPOINT\n\nMounts pi coding-agent sessions as a file system.\n\nFlags:\n%s", flags.FlagUsages())
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		flags.Usage()
		return 2
	}
	switch {
	case *help:
		flags.SetOutput(os.Stdout)
		fmt.Printf("Usage: pifs [flags] MOUNTPOINT\n\nMounts pi coding-agent sessions as a file system.\n\nFlags:\n%s", flags.FlagUsages())
		return 0
	case *showVersion:
		fmt.Printf("pifs %s\n", version)
		return 0
	case flags.NArg() != 1:
		fmt.Fprintln(os.Stderr, "pifs: expected exactly one MOUNTPOINT")
		flags.Usage()
		return 2
	}
	mountpoint := flags.Arg(0)
	loc, err := sessions.ResolveLocation(*sessionsDir, os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return 1
	}
	if *sessionsDir != "" && loc.Flat {
		// A store named by the flag keeps the layout it has.
		if flat, known := sessions.LaidOut(loc.Dir); known && !flat {
			loc.Flat = false
			loc.Reason += ", one folder per working directory as found there"
		}
	}
	zone, err := time.LoadLocation(*tz)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: --tz %s: %v; give an IANA zone such as UTC or Europe/Paris\n", *tz, err)
		return 2
	}
	if *daemon && os.Getenv(daemonEnv) == "" {
		return startDaemon(args)
	}
	ready := readyPipe()

	o := fs.Options{
		SessionsDir:  loc.Dir,
		Flat:         loc.Flat,
		TimeZone:     zone,
		ReadOnly:     *readOnly,
		AllowOther:   *allowOther,
		MountOptions: *mountOpts,
		Debug:        *debug,
		CacheBytes:   *cacheSize,
		Logger:       log.New(os.Stderr, "pifs: ", log.LstdFlags),
	}
	// The Go heap is kept near the cache's budget: what is cached is
	// counted in bytes, and the collector returns the rest.
	rdebug.SetMemoryLimit(o.CacheBytes + 64<<20)
	m, err := fs.Mount(mountpoint, o)
	if err == nil {
		layout := "one folder per working directory"
		if loc.Flat {
			layout = "flat: new sessions at the top"
		}
		o.Logger.Printf("mounted %s on %s (%s; %s)", loc.Dir, mountpoint, loc.Reason, layout)
		for _, w := range loc.Warnings {
			o.Logger.Printf("warning: %s", w)
		}
	}
	if err != nil {
		report(ready, "error: "+err.Error())
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return 1
	}
	if *pidFile != "" {
		if err := os.WriteFile(*pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		}
		defer os.Remove(*pidFile)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		o.Logger.Printf("%v: unmounting %s", s, mountpoint)
		if err := m.Unmount(); err != nil {
			o.Logger.Printf("unmount: %v; detaching it", err)
			lazyUnmount(mountpoint)
		}
	}()
	report(ready, "ok")
	m.Wait()
	return 0
}

// startDaemon runs pifs again in the background, in its own session, and
// waits until that process reports that the mount is ready.
func startDaemon(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return 1
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return 1
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return 1
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), daemonEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		return 1
	}
	w.Close()
	null.Close()
	line, _ := bufio.NewReader(r).ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "ok" {
		cmd.Process.Release()
		return 0
	}
	if line == "" {
		line = "the background process exited before the mount was ready"
		cmd.Wait()
	}
	fmt.Fprintf(os.Stderr, "pifs: %s\n", strings.TrimPrefix(line, "error: "))
	return 1
}

// readyPipe is the descriptor a daemon child reports on (nil otherwise).
func readyPipe() io.WriteCloser {
	fd, err := strconv.Atoi(os.Getenv(daemonEnv))
	if err != nil || fd < 3 {
		return nil
	}
	os.Unsetenv(daemonEnv)
	return os.NewFile(uintptr(fd), "ready")
}

func report(w io.WriteCloser, msg string) {
	if w == nil {
		return
	}
	fmt.Fprintln(w, msg)
	w.Close()
}

// lazyUnmount detaches a mount that is still busy, so that pifs never
// leaves a dead mount behind.
func lazyUnmount(mountpoint string) {
	if err := syscall.Unmount(mountpoint, syscall.MNT_DETACH); err == nil {
		return
	}
	for _, prog := range []string{"fusermount3", "fusermount"} {
		if exec.Command(prog, "-u", "-z", mountpoint).Run() == nil {
			return
		}
	}
}
