// Package trash moves files into the user's trash and back, as the
// freedesktop.org Trash Specification (1.0) says, so that trash-cli
// (trash-list, trash-restore), desktop file managers and pi's own delete
// (which runs the `trash` command) see the same trash.
//
// A trash directory holds files/NAME, the trashed file, and
// info/NAME.trashinfo, where it was and when it was trashed. A file goes to
// the home trash ($XDG_DATA_HOME/Trash) when it is on the same file system
// (the same mount, found as trash-cli finds it: up to where the device
// changes), else to the trash at the top of its own file system:
// $topdir/.Trash/$uid when $topdir/.Trash is a real folder with the sticky
// bit, else $topdir/.Trash-$uid. Every move is a rename that never replaces
// a file: nothing is copied, nothing is unlinked.
//
// A trash directory at the top of a file system is used (and read) only
// when it is the user's: a real folder, not a symbolic link, owned by the
// user and writable by no one else, and so are its files/ and info/ (as
// GLib takes $topdir/.Trash/$uid and $topdir/.Trash-$uid only when they
// are folders of the user's); $topdir/.Trash only when it is a real
// folder with the sticky bit, owned by root or the user (the owner of a
// sticky folder may remove what is in it). Another user could otherwise
// make one beforehand and take, or swap, what is trashed there. When none
// may be used, the file is not trashed (ErrNotOwn).
//
// It knows nothing of sessions; the caller names the folder whose trashed
// files it wants (the sessions directory), and a folder no trash may be in.
package trash

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/mountinfo"
	"github.com/pifs/pifs/internal/rename"
)

// ErrInside is returned for a file whose trash would be inside the folder
// the Trash must keep out of (Trash.Outside).
var ErrInside = errors.New("the trash would be inside the sessions directory")

// ErrNotOwn is returned for a trash directory the user may not trust: not
// a real folder of the user's, or one other users may write. No file goes
// there, and nothing is read from it. errors.Is(err, fs.ErrPermission)
// holds for it too.
var ErrNotOwn = fmt.Errorf("not a trash folder of the user's: %w", fs.ErrPermission)

// ErrTaken is returned by Restore when a file is at the original path
// already; errors.Is(err, fs.ErrExist) holds for it too.
var ErrTaken = fmt.Errorf("a file is there already: %w", fs.ErrExist)

// Trash is one user's trash. Its zero value is not usable: make it with
// New, or fill in Home and UID.
type Trash struct {
	// Home is the home trash, $XDG_DATA_HOME/Trash.
	Home string
	// UID names the trash directories at the top of other file systems.
	UID int
	// Outside, when set, is a folder that no trash may be in: Put refuses
	// a file whose trash would be there. pifs sets the sessions directory,
	// where pi would find the trashed sessions.
	Outside string
	// Now gives the deletion date (nil: time.Now).
	Now func() time.Time
}

// New finds the user's trash from the environment as the XDG Base
// Directory Specification says: $XDG_DATA_HOME/Trash, or
// $HOME/.local/share/Trash when XDG_DATA_HOME is unset, empty or not an
// absolute path.
func New(getenv func(string) string, uid int) (*Trash, error) {
	data := getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(data) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return nil, errors.New("no trash: neither $XDG_DATA_HOME nor $HOME is an absolute path")
		}
		data = filepath.Join(home, ".local", "share")
	}
	return &Trash{Home: filepath.Join(filepath.Clean(data), "Trash"), UID: uid}, nil
}

// Item is one trashed file.
type Item struct {
	// Dir is the trash directory that holds it.
	Dir string
	// Name is its name in Dir/files, and Dir/info/Name.trashinfo its
	// trash info.
	Name string
	// Original is the absolute path it was trashed from.
	Original string
	// Deleted is its deletion date, in local time as the trash info
	// records it (zero when that cannot be read).
	Deleted time.Time
}

// File is where the trashed file is now.
func (it Item) File() string { return filepath.Join(it.Dir, "files", it.Name) }

// InfoFile is its .trashinfo file.
func (it Item) InfoFile() string { return filepath.Join(it.Dir, "info", it.Name+".trashinfo") }

// maxNames bounds the names tried for one file in files/ (NAME, NAME_1…).
const maxNames = 10000

// Put moves the file at path into the trash and returns where it went. The
// trash info is written first, under a name no other file takes
// (O_EXCL), then the file is renamed next to it without replacing
// anything; a name taken in files/ is given up and the next tried (NAME,
// NAME_1, NAME_2…, as trash-cli names them). The original path recorded is
// the real path of the file's folder (symbolic links resolved, as
// trash-cli records it) and its name; absolute in the home trash,
// relative to the top of the file system elsewhere.
func (t *Trash) Put(path string) (Item, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Item{}, err
	}
	if _, err := os.Lstat(abs); err != nil {
		return Item{}, err
	}
	base := filepath.Base(abs)
	if base == "." || base == ".." || base == "/" {
		return Item{}, fmt.Errorf("cannot trash %s", path)
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return Item{}, err
	}
	original := filepath.Join(parent, base)
	cands, err := t.candidates(parent)
	if err != nil {
		return Item{}, err
	}
	var errs []error
	for _, c := range cands {
		it, err := t.putIn(c, abs, original)
		if err == nil {
			return it, nil
		}
		if errors.Is(err, ErrInside) {
			return Item{}, err
		}
		errs = append(errs, fmt.Errorf("%s: %w", c.dir, err))
	}
	return Item{}, fmt.Errorf("could not trash %s: %w", path, errors.Join(errs...))
}

// trashDir is a trash directory a file may go to, and the folder relative
// paths in its trash info start from.
type trashDir struct {
	dir, base string
	// home: the home trash, whose trash info holds absolute paths.
	home bool
	// top: $topdir/.Trash/$uid, whose $topdir/.Trash is checked.
	top bool
}

// candidates are the trash directories a file in folder parent (a real
// path) may go to, in the order the specification gives.
func (t *Trash) candidates(parent string) ([]trashDir, error) {
	vol, err := volumeOf(parent)
	if err != nil {
		return nil, err
	}
	var out []trashDir
	home, err := mountinfo.RealPath(t.Home)
	if err != nil {
		return nil, err
	}
	if hv, err := volumeOf(home); err == nil && hv == vol {
		out = append(out, trashDir{dir: home, base: filepath.Dir(home), home: true})
	}
	if t.topTrashOK(vol) {
		out = append(out, trashDir{dir: filepath.Join(vol, ".Trash", strconv.Itoa(t.UID)), base: vol, top: true})
	}
	out = append(out, trashDir{dir: filepath.Join(vol, ".Trash-"+strconv.Itoa(t.UID)), base: vol})
	return out, nil
}

// topTrashOK tells whether $topdir/.Trash may be used: a folder, not a
// symbolic link, with the sticky bit set, owned by root or the user.
func (t *Trash) topTrashOK(vol string) bool {
	fi, err := os.Lstat(filepath.Join(vol, ".Trash"))
	if err != nil || !fi.IsDir() || fi.Mode()&os.ModeSticky == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (st.Uid == 0 || int(st.Uid) == t.UID)
}

// own checks that d is a folder of the user's that no other user may
// change: not a symbolic link, owned by the user, writable by its owner
// alone (ErrNotOwn otherwise).
func (t *Trash) own(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link", ErrNotOwn, d)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a folder", ErrNotOwn, d)
	case !ok || int(st.Uid) != t.UID:
		return fmt.Errorf("%w: %s belongs to user %d, not %d", ErrNotOwn, d, st.Uid, t.UID)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: other users may write %s (mode %04o)", ErrNotOwn, d, fi.Mode().Perm())
	}
	return nil
}

// owns tells whether the user's trash directory c, at the top of a file
// system, and its files/ and info/ may be trusted (see own); the home
// trash always is.
func (t *Trash) owns(c trashDir) bool {
	if c.home {
		return true
	}
	for _, d := range []string{c.dir, filepath.Join(c.dir, "files"), filepath.Join(c.dir, "info")} {
		if t.own(d) != nil {
			return false
		}
	}
	return true
}

// Dir tells which trash directory a file at path would go to (the first
// that Put would try), or why none may be used: ErrInside when it is in
// Outside. pifs asks it once for the store, to say at the start whether
// sessions can be trashed.
func (t *Trash) Dir(path string) (string, error) {
	parent, err := mountinfo.RealPath(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	cands, err := t.candidates(parent)
	if err != nil {
		return "", err
	}
	c := cands[0]
	return c.dir, t.checkOutside(c.dir)
}

func (t *Trash) checkOutside(dir string) error {
	if t.Outside == "" {
		return nil
	}
	out, err := mountinfo.RealPath(t.Outside)
	if err != nil {
		return err
	}
	if within(dir, out) {
		return fmt.Errorf("%w: the trash for its files is %s, a folder of %s, where pi and pifs would list what is trashed; move the sessions directory below the top of its file system (for example into a folder sessions/) to trash its sessions", ErrInside, dir, t.Outside)
	}
	return nil
}

// putIn trashes the file at abs (whose real path is original) in c.
func (t *Trash) putIn(c trashDir, abs, original string) (Item, error) {
	if err := t.checkOutside(c.dir); err != nil {
		return Item{}, err
	}
	if err := t.ensureTrash(c); err != nil {
		return Item{}, err
	}
	recorded := original
	if !c.home {
		if rel, err := filepath.Rel(c.base, original); err == nil && within(original, c.base) {
			recorded = rel
		}
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	deleted := now()
	info := formatInfo(recorded, deleted)
	base := filepath.Base(original)
	for i := 0; i < maxNames; i++ {
		name := base
		if i > 0 {
			name = base + "_" + strconv.Itoa(i)
		}
		it := Item{Dir: c.dir, Name: name, Original: original, Deleted: deleted.Truncate(time.Second)}
		created, err := createInfo(it.InfoFile(), info)
		if err != nil {
			return Item{}, err
		}
		if !created {
			continue
		}
		err = rename.NoReplace(abs, it.File())
		if err == nil {
			return it, nil
		}
		// Nothing moved: the trash info goes, and only it.
		os.Remove(it.InfoFile())
		if !errors.Is(err, fs.ErrExist) {
			return Item{}, err
		}
	}
	return Item{}, fmt.Errorf("no free name for %s in %s after %d tries", base, c.dir, maxNames)
}

// ensureTrash makes the trash directory and its files/ and info/ when they
// are missing, private to the user (0700), and checks that each is a real
// folder, and for a trash at the top of a file system, that each is the
// user's (own).
func (t *Trash) ensureTrash(c trashDir) error {
	var dirs []string
	switch {
	case c.home:
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return err
		}
	default:
		dirs = append(dirs, c.dir)
	}
	dirs = append(dirs, filepath.Join(c.dir, "files"), filepath.Join(c.dir, "info"))
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if !c.home {
			if err := t.own(d); err != nil {
				return err
			}
			continue
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a folder", d)
		}
	}
	return nil
}

// createInfo writes a trash info file that did not exist; false when the
// name is taken.
func createInfo(path string, content []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return false, err
	}
	return true, nil
}

// List returns the trashed files whose original path is in the folder
// under (or is it), oldest first. It reads the home trash and the trash
// directories of every file system that holds a part of under; trash
// info that cannot be read or parsed is skipped, and so is an item whose
// file is no longer in files/.
func (t *Trash) List(under string) ([]Item, error) {
	abs, real, dirs, err := t.dirsUnder(under)
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, c := range dirs {
		if !t.owns(c) {
			continue
		}
		items, err := readTrash(c)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if !within(it.Original, real) && !within(it.Original, abs) {
				continue
			}
			if _, err := os.Lstat(it.File()); err != nil {
				continue
			}
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Deleted.Equal(b.Deleted) {
			return a.Deleted.Before(b.Deleted)
		}
		if a.Original != b.Original {
			return a.Original < b.Original
		}
		return a.File() < b.File()
	})
	return out, nil
}

// dirsFor lists the trash directories that may hold files from the folder
// real (a real path): the home trash, and those at the top of its file
// system and of every file system mounted inside it.
func (t *Trash) dirsFor(real string) ([]trashDir, error) {
	home, err := mountinfo.RealPath(t.Home)
	if err != nil {
		return nil, err
	}
	out := []trashDir{{dir: home, base: filepath.Dir(home), home: true}}
	vol, err := volumeOf(real)
	if err != nil {
		return nil, err
	}
	vols := []string{vol}
	for _, m := range mountPoints() {
		if m != vol && within(m, real) {
			vols = append(vols, m)
		}
	}
	uid := strconv.Itoa(t.UID)
	for _, v := range vols {
		if t.topTrashOK(v) {
			out = append(out, trashDir{dir: filepath.Join(v, ".Trash", uid), base: v, top: true})
		}
		out = append(out, trashDir{dir: filepath.Join(v, ".Trash-"+uid), base: v})
	}
	return out, nil
}

// readTrash reads every trash info of a trash directory.
func readTrash(c trashDir) ([]Item, error) {
	des, err := os.ReadDir(filepath.Join(c.dir, "info"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".trashinfo")
		if !ok || name == "" || !de.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.dir, "info", de.Name()))
		if err != nil {
			continue
		}
		p, deleted, err := ParseInfo(data)
		if err != nil {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.base, p)
		}
		out = append(out, Item{Dir: c.dir, Name: name, Original: filepath.Clean(p), Deleted: deleted})
	}
	return out, nil
}

// Restore moves a trashed file back to its original path and then removes
// its trash info, as trash-restore does. A file at the original path is
// never replaced: Restore then changes nothing and returns ErrTaken. The
// original folder is made again when it is gone (as trash-restore does).
func (t *Trash) Restore(it Item) error {
	if err := t.ownsItem(it); err != nil {
		return err
	}
	if _, err := os.Lstat(it.Original); err == nil {
		return fmt.Errorf("cannot restore %s: %w; nothing was restored", it.Original, ErrTaken)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, err := os.Lstat(it.File()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(it.Original), 0o755); err != nil {
		return err
	}
	if err := rename.NoReplace(it.File(), it.Original); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot restore %s: %w; nothing was restored", it.Original, ErrTaken)
		}
		return err
	}
	if err := os.Remove(it.InfoFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("restored %s, but its trash info %s is left: %w", it.Original, it.InfoFile(), err)
	}
	return nil
}

// ownsItem checks that a trashed file is in the home trash or a trash
// directory of the user's (see own).
func (t *Trash) ownsItem(it Item) error {
	if home, err := mountinfo.RealPath(t.Home); err == nil && it.Dir == home {
		return nil
	}
	for _, d := range []string{it.Dir, filepath.Join(it.Dir, "files"), filepath.Join(it.Dir, "info")} {
		if err := t.own(d); err != nil {
			return fmt.Errorf("cannot restore %s: %w; nothing was restored", it.Original, err)
		}
	}
	return nil
}

// Exchange puts a trashed file back at its original path in place of the
// file there, in one step (rename.Exchange): that file takes the trashed
// file's place in the trash, under its name and trash info, so nothing
// is ever without a name. It fails, changing nothing, when either is
// missing or the file system cannot exchange.
func (t *Trash) Exchange(it Item) error {
	if err := t.ownsItem(it); err != nil {
		return err
	}
	return rename.Exchange(it.File(), it.Original)
}

// formatInfo is the content of a .trashinfo file.
func formatInfo(path string, deleted time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("[Trash Info]\nPath=")
	b.WriteString(EncodePath(path))
	b.WriteString("\nDeletionDate=")
	b.WriteString(deleted.Format(dateLayout))
	b.WriteString("\n")
	return b.Bytes()
}

// dateLayout is DeletionDate's format: local time, to the second, without
// a zone (RFC 3339's date and time).
const dateLayout = "2006-01-02T15:04:05"

// EncodePath escapes a path for a trash info's Path key as URLs escape it
// (RFC 2396): every byte but letters, digits, "-", "_", ".", "~" and "/"
// becomes %XX, as trash-cli writes it.
func EncodePath(p string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// DecodePath undoes the escaping of a Path value: each %XX is the byte
// XX; a "%" not followed by two hex digits stays as it is (as trash-cli
// and GLib read it).
func DecodePath(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, ok := unhex(s[i+1]); ok {
				if lo, ok := unhex(s[i+2]); ok {
					b.WriteByte(hi<<4 | lo)
					i += 2
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ParseInfo reads a .trashinfo file: the decoded Path and the
// DeletionDate (zero when missing or not a date) of its [Trash Info]
// group. A file without that group or without a Path is an error.
func ParseInfo(data []byte) (path string, deleted time.Time, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	group, seen, havePath := false, false, false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case strings.HasPrefix(trimmed, "["):
			group = trimmed == "[Trash Info]"
			seen = seen || group
			continue
		case !group:
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "Path":
			if !havePath {
				path, havePath = DecodePath(strings.TrimSpace(value)), true
			}
		case "DeletionDate":
			if d, err := time.ParseInLocation(dateLayout, strings.TrimSpace(value), time.Local); err == nil {
				deleted = d
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", time.Time{}, err
	}
	if !seen || !havePath || path == "" {
		return "", time.Time{}, errors.New("not a trash info file: no [Trash Info] group with a Path")
	}
	return path, deleted, nil
}

// volumeOf is the top of the file system p is on: the highest folder
// above p (or p) on the same device, as trash-cli finds it. A p that does
// not exist is taken from its nearest folder that does.
func volumeOf(p string) (string, error) {
	p = filepath.Clean(p)
	var st syscall.Stat_t
	for {
		err := syscall.Stat(p, &st)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTDIR) {
			return "", &os.PathError{Op: "stat", Path: p, Err: err}
		}
		if p == "/" {
			return "/", nil
		}
		p = filepath.Dir(p)
	}
	for p != "/" {
		parent := filepath.Dir(p)
		var pst syscall.Stat_t
		if err := syscall.Stat(parent, &pst); err != nil {
			return "", &os.PathError{Op: "stat", Path: parent, Err: err}
		}
		if pst.Dev != st.Dev || pst.Ino == st.Ino {
			return p, nil
		}
		p, st = parent, pst
	}
	return "/", nil
}

// mountPoints lists the mount points of this process's namespace (none
// where there is no mount table to read).
func mountPoints() []string {
	ms, _ := mountinfo.Read()
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Point
	}
	return out
}

// within tells whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
