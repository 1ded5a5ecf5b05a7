package main

// pifs.1 is made from docs/reference.md, the one reference; a test
// fails when they differ (TestManPageGenerated).
//go:generate go run genman.go

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
)

// Exit codes, as --help and docs/reference.md (and so the man page) list
// them; TestDocsExitCodes finds every exit* constant here.
const (
	exitOK          = 0 // mounted and unmounted cleanly
	exitError       = 1 // any other error while running
	exitUsage       = 2 // bad flags, arguments or -o options
	exitMountpoint  = 3 // the mountpoint is unusable, or FUSE is missing (the message says why and how to fix it)
	exitSessionsDir = 4 // the sessions directory is missing or unusable
	exitMountFailed = 5 // the kernel or fusermount3 refused the mount
)

const helpHead = `Usage: pifs [flags] MOUNTPOINT
       pifs [flags] SESSIONS-DIR MOUNTPOINT [-o OPTIONS]   (mount helper form)

Mounts a store of pi coding-agent sessions as a file system: one folder per
project, one per session, with its entries, branches, tree, context,
transcripts and usage reports as files. Runs in the foreground until
unmounted; the mount helper form (used by mount -t fuse.pifs and fstab)
returns once mounted, as --daemon does.

Flags:
`

const helpTail = `
Mount options (-o, comma-separated, as in fstab):
  ro, allow_other, nonempty, debug, verbose, foreground, cache_size=SIZE,
  cache_dir=DIR, index=DIR, log_file=FILE, pid_file=FILE, sessions_dir=DIR,
  poll=INTERVAL: as the flags of the same name; noevents: poll without
  change events; default_permissions, noatime, nosuid, nodev, noexec,
  max_read=N and the like go to the kernel; fstab-only ones (defaults,
  noauto, user, _netdev, nofail, x-systemd.*) are ignored; any other is
  refused.

Examples:
  pifs ~/pi                                   # mount your sessions, foreground
  pifs --daemon --read-only ~/pi              # in the background, no writes
  mount -t fuse.pifs ~/.pi/agent/sessions ~/pi -o ro
  cat ~/pi/<project>/<session>/transcript.md
  echo 'rerun the tests' > ~/pi/<project>/<session>/append

Unmount:
  fusermount3 -u MOUNTPOINT    (or umount, Ctrl-C, or SIGHUP/SIGINT/SIGTERM;
                               a second signal exits at once, detaching a
                               busy mount lazily)

Writing: the files name, leaf, append, fork and new are controls; a write
adds to the session file (see CONTROLS in man pifs). Why a write was refused
is in the session's errors file and in the log.

Exit status:
  0  mounted and unmounted cleanly
  1  an error while running
  2  bad flags, arguments or -o options
  3  unusable mountpoint: missing, not a directory, not empty, already a
     mount, a dead mount that could not be cleared, or overlapping the
     sessions directory; or FUSE is not installed (fuse3, or macFUSE)
  4  the sessions directory is not a directory (one that does not exist
     yet is mounted empty), or could not be resolved
  5  the mount itself failed (fusermount3 or the kernel refused it)

See man pifs for the layout of the mount and every control.
`

// printHelp writes the help: the flags as GNU tools list them, without
// pflag's type names and [=true|false] notes.
func printHelp(w io.Writer, flags *pflag.FlagSet) {
	io.WriteString(w, helpHead)
	type row struct{ left, usage string }
	var rows []row
	width := 0
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		arg, usage := pflag.UnquoteUsage(f)
		if f.Value.Type() != "bool" && f.Value.Type() != "count" {
			left += " " + arg
		}
		// A usage that names its default in words (the local zone, not
		// "Local") says it once.
		if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" && !namesDefault(usage) {
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{left, usage})
		width = max(width, len(left))
	})
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %s\n", width, r.left, strings.ReplaceAll(r.usage, "\n", "\n"+strings.Repeat(" ", width+2)))
	}
	io.WriteString(w, helpTail)
}

// namesDefault tells whether a flag's usage says its default itself.
func namesDefault(usage string) bool { return defaultWords.MatchString(usage) }

// defaultWords is how a usage names a default: "(default …", "; default …",
// "default: …".
var defaultWords = regexp.MustCompile(`\bdefault[ :]`)
