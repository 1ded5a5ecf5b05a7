// Command pifs mounts a store of pi coding-agent sessions as a file system.
//
//	pifs [flags] MOUNTPOINT
//	pifs [flags] SESSIONS-DIR MOUNTPOINT [-o OPTIONS]
//
// The second form is the one mount.fuse3 uses for mount -t fuse.pifs and
// fstab lines; it returns once mounted, as --daemon does. This package only
// reads the command line, sets up logging, signals and the background
// process; package mount does the rest.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pifs/pifs/fs"
	"github.com/pifs/pifs/sessions"
	"github.com/spf13/pflag"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// config is what the command line asks for.
type config struct {
	mountpoint string
	daemon     bool
	verbose    int
	logFile    string
	pidFile    string
	cacheBytes int64
	// where tells which sessions directory was taken and why.
	where string
	mount fs.Options
}

// usageError is a mistake on the command line (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func run(args []string) int {
	cfg, done, err := parseArgs(args, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pifs: %v\n", err)
		if errors.As(err, new(usageError)) {
			fmt.Fprintln(os.Stderr, "Try 'pifs --help' for more information.")
			return exitUsage
		}
		return exitSessionsDir
	}
	if done {
		return exitOK
	}
	ensurePath()
	child := readyPipe()
	if cfg.daemon && child == nil {
		return startDaemon(args)
	}
	return serve(cfg, child)
}

// parseArgs reads the flags and arguments; done means that --help or
// --version was answered.
func parseArgs(args []string, stdout io.Writer) (cfg config, done bool, err error) {
	flags := pflag.NewFlagSet("pifs", pflag.ContinueOnError)
	flags.SortFlags = false
	flags.SetOutput(io.Discard)
	flags.Usage = func() {}
	var (
		sessionsDir = flags.String("sessions-dir", "", "read sessions from `DIR` (default: as pi chooses it:\n$PI_CODING_AGENT_SESSION_DIR, sessionDir in settings.json,\n$PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions)")
		daemon      = flags.Bool("daemon", false, "run in the background; return once the mount is ready")
		foreground  = flags.BoolP("foreground", "f", false, "stay in the foreground, also in the mount helper form")
		readOnly    = flags.Bool("read-only", false, "refuse every write with EROFS (also -o ro)")
		allowOther  = flags.Bool("allow-other", false, "let other users in (implies default_permissions)")
		nonEmpty    = flags.Bool("nonempty", false, "mount over a directory that is not empty")
		mountOpts   = flags.StringArrayP("options", "o", nil, "mount `OPTIONS`, comma-separated, fstab style (see below)")
		cacheSize   = flags.String("cache-size", "256MiB", "memory pifs may keep for parsed sessions, a `SIZE`\nlike 256MiB, 1GiB, 500M or bytes")
		cacheDir    = flags.String("cache-dir", "", "keep what pifs learns of the store's files in `DIR`\nacross mounts, in an eighth of --cache-size (default\n$XDG_CACHE_HOME/pifs or ~/.cache/pifs; none: keep nothing)")
		index       = flags.String("index", "", "keep the full-text index of search/ and by-file/ in\n`DIR` (default: the --cache-dir; none: no index, and those\nfolders say so)")
		logFile     = flags.String("log-file", "", "append the log to `FILE` (default: stderr; with --daemon\n$XDG_STATE_HOME/pifs/pifs.log or ~/.local/state/pifs/pifs.log)")
		verbose     = flags.CountP("verbose", "v", "log more: debug detail (start-up, unmount and warnings\nare always logged)")
		debug       = flags.Bool("debug", false, "log every FUSE request (implies -v)")
		poll        = flags.Duration("poll", 0, "also look for changes every `INTERVAL` (e.g. 1s), for\na store other machines write over NFS (quiet sessions less\noften); 0 uses the kernel's change events where they work\nand polls every 500ms where not")
		tz          = flags.String("tz", "Local", "time `ZONE` of the usage reports' days and months\n(UTC, Europe/Paris, …; default the local zone)")
		pidFile     = flags.String("pid-file", "", "write the serving process's pid to `FILE`")
		showVersion = flags.BoolP("version", "V", false, "print the version, commit and go-fuse version, and exit")
		help        = flags.BoolP("help", "h", false, "show this help and exit")
	)
	if err := flags.Parse(args); err != nil {
		return cfg, false, usagef("%v", err)
	}
	switch {
	case *help:
		printHelp(stdout, flags)
		return cfg, true, nil
	case *showVersion:
		io.WriteString(stdout, versionText())
		return cfg, true, nil
	}
	cfg.daemon = *daemon
	cfg.verbose = *verbose
	cfg.logFile = *logFile
	cfg.pidFile = *pidFile
	cfg.mount = fs.Options{ReadOnly: *readOnly, AllowOther: *allowOther, NonEmpty: *nonEmpty, Debug: *debug}
	size := *cacheSize
	diskCache := *cacheDir
	indexDir := *index
	dir := *sessionsDir
	pollEvery := *poll
	// pifs's own -o options; the rest go to package mount.
	for _, opts := range *mountOpts {
		var rest []string
		for _, opt := range strings.Split(opts, ",") {
			key, val, hasVal := strings.Cut(strings.TrimSpace(opt), "=")
			switch {
			case key == "cache_size" && hasVal:
				size = val
			case key == "cache_dir" && hasVal:
				diskCache = val
			case key == "index" && hasVal:
				indexDir = val
			case key == "log_file" && hasVal:
				cfg.logFile = val
			case key == "pid_file" && hasVal:
				cfg.pidFile = val
			case key == "sessions_dir" && hasVal:
				dir = val
			case key == "poll" && hasVal:
				d, err := time.ParseDuration(val)
				if err != nil {
					return cfg, false, usagef("-o poll=%s: %v; give an interval such as 1s or 500ms", val, err)
				}
				pollEvery = d
			case key == "debug" && !hasVal:
				cfg.mount.Debug = true
			case key == "verbose" && !hasVal:
				cfg.verbose++
			case key == "foreground" && !hasVal:
				*foreground = true
			default:
				rest = append(rest, opt)
			}
		}
		cfg.mount.MountOptions = append(cfg.mount.MountOptions, strings.Join(rest, ","))
	}
	if cfg.cacheBytes, err = parseSize(size); err != nil {
		return cfg, false, usagef("--cache-size: %v", err)
	}
	if pollEvery < 0 || (pollEvery > 0 && pollEvery < 10*time.Millisecond) {
		return cfg, false, usagef("--poll %v: give an interval of at least 10ms (or 0, the default: change events)", pollEvery)
	}
	cfg.mount.PollInterval = pollEvery
	switch flags.NArg() {
	case 1:
		cfg.mountpoint = flags.Arg(0)
	case 2:
		// The mount helper form: mount.fuse3 runs "pifs SOURCE MOUNTPOINT
		// -o OPTIONS" and expects it to return once mounted.
		if dir != "" {
			return cfg, false, usagef("the sessions directory is given twice: as --sessions-dir (or -o sessions_dir) and as the first of two arguments")
		}
		dir = flags.Arg(0)
		cfg.mountpoint = flags.Arg(1)
		cfg.daemon = !*foreground
	case 0:
		return cfg, false, usagef("missing MOUNTPOINT")
	default:
		return cfg, false, usagef("too many arguments: %s", strings.Join(flags.Args(), " "))
	}
	if *foreground {
		cfg.daemon = false
	}
	if cfg.mountpoint, err = filepath.Abs(cfg.mountpoint); err != nil {
		return cfg, false, err
	}
	loc, err := sessions.ResolveLocation(dir, os.Getenv)
	if err != nil {
		return cfg, false, fmt.Errorf("sessions directory: %w", err)
	}
	if dir != "" && loc.Flat {
		// A store named on the command line keeps the layout it has.
		if flat, known := sessions.LaidOut(loc.Dir); known && !flat {
			loc.Flat = false
			loc.Reason += ", one folder per working directory as found there"
		}
	}
	cfg.mount.SessionsDir, cfg.mount.Flat = loc.Dir, loc.Flat
	cfg.where = loc.Reason
	for _, w := range loc.Warnings {
		cfg.where += "; " + w
	}
	if cfg.mount.TimeZone, err = time.LoadLocation(*tz); err != nil {
		return cfg, false, usagef("--tz %s: %v; give an IANA zone such as UTC or Europe/Paris", *tz, err)
	}
	if cfg.logFile != "" {
		if cfg.logFile, err = filepath.Abs(cfg.logFile); err != nil {
			return cfg, false, err
		}
	}
	if cfg.pidFile != "" {
		if cfg.pidFile, err = filepath.Abs(cfg.pidFile); err != nil {
			return cfg, false, err
		}
	}
	cfg.mount.CacheBytes = cfg.cacheBytes
	switch diskCache {
	case "none":
	case "":
		cfg.mount.CacheDir = defaultCacheDir()
	default:
		if cfg.mount.CacheDir, err = filepath.Abs(diskCache); err != nil {
			return cfg, false, err
		}
	}
	switch indexDir {
	case "none":
	case "":
		cfg.mount.SearchDir = cfg.mount.CacheDir
	default:
		if cfg.mount.SearchDir, err = filepath.Abs(indexDir); err != nil {
			return cfg, false, err
		}
	}
	return cfg, false, nil
}

// defaultCacheDir is where the persistent cache is kept when not told: the
// XDG cache directory ("" when there is no home to put it in).
func defaultCacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pifs")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "pifs")
	}
	return ""
}

// ensurePath gives a minimal PATH (as at boot, or under mount(8)) the
// directories where fusermount3 lives.
func ensurePath() {
	path := os.Getenv("PATH")
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
		if !strings.Contains(":"+path+":", ":"+d+":") {
			path = strings.TrimPrefix(path+":"+d, ":")
		}
	}
	os.Setenv("PATH", path)
}

// exitCode maps an error from fs.Mount to the documented exit code.
func exitCode(err error) int {
	switch fs.KindOf(err) {
	case fs.KindMountpoint:
		return exitMountpoint
	case fs.KindSessionsDir:
		return exitSessionsDir
	case fs.KindMount:
		if strings.Contains(err.Error(), "mount option") {
			return exitUsage
		}
		return exitMountFailed
	}
	return exitError
}

// newLogger logs at the level -v and --debug ask for: to a file as
// slog's key=value lines with the time, to a terminal as "pifs: ..." lines.
func newLogger(w io.Writer, cfg config, file bool) *slog.Logger {
	level := slog.LevelInfo
	if cfg.verbose > 0 || cfg.mount.Debug {
		level = slog.LevelDebug
	}
	if !file {
		return slog.New(newTermHandler(w, level))
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.MessageKey && len(groups) == 0 {
				a.Value = slog.StringValue(strings.TrimPrefix(a.Value.String(), "pifs: "))
			}
			return a
		},
	}))
}

// defaultLogFile is where a daemon logs when not told: the XDG state
// directory.
func defaultLogFile() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pifs", "pifs.log")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "pifs", "pifs.log")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("pifs-%d.log", os.Getuid()))
}

func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}
