package sessions

import (
	"os"
	"path/filepath"
)

// ResolvePath is pi's resolvePath (utils/paths.js) on POSIX, with this
// process's working directory as the base: "~" and a leading "~/" become
// the home directory, a file:// URL its path, a relative path is taken
// from the working directory, and the result is cleaned. pi gives an
// opened session the cwd ResolvePath(header cwd) (SessionManager.open; a
// header without a string cwd gets the working directory), and writes it
// into the header of an export. A path pi could not resolve (a bad file
// URL, no home directory) is returned as it is: pi cannot open such a
// session.
func ResolvePath(p string) string {
	wd, _ := os.Getwd()
	q, err := expandPath(p, func() (string, error) { return homeDir(os.Getenv) })
	if err != nil {
		return p
	}
	if !filepath.IsAbs(q) {
		q = filepath.Join(wd, q)
	}
	return filepath.Clean(q)
}
