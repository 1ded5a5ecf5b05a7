// Package mountinfo reads the mount table of this process's namespace
// (/proc/self/mountinfo, proc(5)) and resolves paths as the table names
// them: mount points are real paths, with every symbolic link resolved.
//
// The mount lifecycle (fs) looks up the mount on a mountpoint; the trash
// (internal/trash) lists the file systems mounted inside a folder. On a
// system without /proc (macOS, FreeBSD) Read fails and callers do without.
package mountinfo

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Mount is one mount of the mount table.
type Mount struct {
	Point  string // where it is mounted
	FSType string // "fuse.pifs"
	Source string
}

// Read reads /proc/self/mountinfo, in its order: a mount listed later is
// mounted on top of one earlier at the same point.
func Read() ([]Mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}

// Parse reads the mountinfo format: the fifth field is the mount point,
// and after the " - " separator come the type and the source, each with
// spaces and other bytes as octal escapes (Unescape). A line without
// those fields is skipped.
func Parse(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, s := range f {
			if s == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+2 >= len(f) {
			continue
		}
		out = append(out, Mount{Point: Unescape(f[4]), FSType: Unescape(f[sep+1]), Source: Unescape(f[sep+2])})
	}
	return out, sc.Err()
}

// Unescape undoes the kernel's escapes of a field of the mount table: a
// backslash and three octal digits (\040 a space, \134 a backslash) are
// the byte they spell; any other backslash is itself.
func Unescape(s string) string {
	k := strings.IndexByte(s, '\\')
	if k < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:k]...)
	for i := k; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, ok := octal3(s[i+1 : i+4]); ok {
				b = append(b, n)
				i += 3
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// octal3 is the byte three octal digits spell; ok is false for other
// text or a value past 0377.
func octal3(s string) (byte, bool) {
	n := 0
	for i := range 3 {
		c := s[i]
		if c < '0' || c > '7' {
			return 0, false
		}
		n = n<<3 | int(c-'0')
	}
	if n > 0xFF {
		return 0, false
	}
	return byte(n), true
}

// RealPath is p made absolute with its symbolic links resolved, as a
// mount point is named; the part of p that does not exist yet is kept as
// it is.
func RealPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(abs) == abs {
			return "", err
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = filepath.Dir(abs)
	}
}
