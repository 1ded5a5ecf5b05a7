package sessions

import (
	"os"
	"path/filepath"
	"strings"
)

// ProjectFolder is the name of the folder pi 1.6 gives a working directory
// in its default layout (session-manager.js getDefaultSessionDirPath):
// the cwd is resolved to an absolute, clean path (as resolvePath does: "~"
// expanded, relative to this process's working directory), its one leading
// "/" dropped, every "/", "\" and ":" replaced by "-", and the result put
// between "--" and "--". So /home/user/proj is "--home-user-proj--" and
// "/" is "----"; spaces, dots and any other character stay as they are.
// Different cwds can share a folder (/a-b and /a/b both give "--a-b--").
func ProjectFolder(cwd string) string {
	wd, _ := os.Getwd()
	return projectFolder(cwd, wd, func() (string, error) { return homeDir(os.Getenv) })
}

func projectFolder(cwd, wd string, home func() (string, error)) string {
	p, err := expandPath(cwd, home)
	if err != nil {
		// pi throws here and creates no session; any stable name will do.
		p = cwd
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(wd, p)
	}
	p = filepath.Clean(p)
	p = strings.TrimPrefix(p, "/")
	p = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(p)
	return "--" + p + "--"
}

// NewSessionDir is the folder in which pi creates a new session file for
// cwd, given the sessions directory store and its layout (Location.Flat):
// in a flat store the store itself, otherwise store/ProjectFolder(cwd).
// This holds for a new session (SessionManager.create) and for a fork into
// cwd (forkFrom, pi --fork). pi's clone (/clone, /fork inside a session:
// createBranchedSession) and /new inside an open session instead write
// next to the session they start from when pi was started without a
// chosen directory (its sessionDir is then the open file's folder).
func NewSessionDir(store string, flat bool, cwd string) string {
	if flat {
		return store
	}
	return filepath.Join(store, ProjectFolder(cwd))
}

// LaidOut tells how an existing store is laid out: flat (session files at
// the top) or one folder per working directory (folders named as pi names
// them, no session file at the top). known is false for a store that shows
// neither (missing, empty).
func LaidOut(store string) (flat, known bool) {
	des, err := os.ReadDir(store)
	if err != nil {
		return false, false
	}
	folders := false
	for _, de := range des {
		name := de.Name()
		switch {
		case !de.IsDir() && strings.HasSuffix(name, ".jsonl"):
			return true, true
		case de.IsDir() && strings.HasPrefix(name, "--") && strings.HasSuffix(name, "--"):
			folders = true
		}
	}
	return false, folders
}
