package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version may be set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version from the build info is shown (set by
// go install …/cmd/pifs@v1.2.3).
var version = ""

// versionText is what --version prints: pifs's version, the commit it was
// built from, and the go-fuse and Go versions.
func versionText() string {
	v, commit, fuseVersion := version, "unknown", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		var rev, when, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			commit = rev
			if when != "" {
				commit += " (" + when + ")"
			}
			if modified == "true" {
				commit += " with local changes"
			}
		}
		for _, d := range info.Deps {
			if d.Path == "github.com/hanwen/go-fuse/v2" {
				fuseVersion = d.Version
				if d.Replace != nil {
					fuseVersion += " => " + d.Replace.Path + " " + d.Replace.Version
				}
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pifs %s\n", v)
	fmt.Fprintf(&b, "commit:  %s\n", commit)
	fmt.Fprintf(&b, "go-fuse: %s\n", fuseVersion)
	fmt.Fprintf(&b, "go:      %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
