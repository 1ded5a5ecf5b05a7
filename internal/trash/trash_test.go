package trash

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixed is the deletion date the tests trash at.
var fixed = time.Date(2024, 5, 6, 7, 8, 9, 0, time.Local)

// homeTrash is a Trash whose home trash is in a temporary folder, on the
// same file system as the tests' other temporary folders.
func homeTrash(t *testing.T) *Trash {
	t.Helper()
	return &Trash{Home: filepath.Join(t.TempDir(), "data", "Trash"), UID: os.Getuid(), Now: func() time.Time { return fixed }}
}

// tmpfs mounts a tmpfs (root only): a file system of its own, whose top
// holds its trash.
func tmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatalf("mount tmpfs: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestNew(t *testing.T) {
	for _, c := range []struct {
		data, home, want string
	}{
		{"/x/data", "/h", "/x/data/Trash"},
		{"", "/h", "/h/.local/share/Trash"},
		{"relative", "/h", "/h/.local/share/Trash"},
		{"/x/data/", "/h", "/x/data/Trash"},
	} {
		env := map[string]string{"XDG_DATA_HOME": c.data, "HOME": c.home}
		tr, err := New(func(k string) string { return env[k] }, 7)
		if err != nil || tr.Home != c.want || tr.UID != 7 {
			t.Errorf("XDG_DATA_HOME=%q HOME=%q: %+v %v, want %s", c.data, c.home, tr, err, c.want)
		}
	}
	if _, err := New(func(string) string { return "" }, 0); err == nil {
		t.Error("no home and no data home: no error")
	}
}

func TestEncodePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/home/u/a b/c.jsonl", "/home/u/a%20b/c.jsonl"},
		{"/x/--home-u-proj--/2024-01-01T00-00-00-000Z_id.jsonl", "/x/--home-u-proj--/2024-01-01T00-00-00-000Z_id.jsonl"},
		{"/p/100%/é", "/p/100%25/%C3%A9"},
		{"rel/~a+b", "rel/~a%2Bb"},
		{"/\x00\xff", "/%00%FF"},
	} {
		if got := EncodePath(c.in); got != c.want {
			t.Errorf("EncodePath(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := DecodePath(c.want); got != c.in {
			t.Errorf("DecodePath(%q) = %q, want %q", c.want, got, c.in)
		}
	}
	// What others write: unescaped reserved characters, a stray "%".
	for in, want := range map[string]string{"/a!b(c)": "/a!b(c)", "/50%": "/50%", "/%zz%4": "/%zz%4", "/%41%2f": "/A/"} {
		if got := DecodePath(in); got != want {
			t.Errorf("DecodePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzPath(f *testing.F) {
	for _, s := range []string{"/a b", "%", "/é/%41", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		enc := EncodePath(p)
		if got := DecodePath(enc); got != p {
			t.Fatalf("DecodePath(EncodePath(%q)) = %q", p, got)
		}
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c <= ' ' || c >= 0x7f || c == '\n' {
				t.Fatalf("EncodePath(%q) = %q holds byte %#x", p, enc, c)
			}
		}
		// Parsing what Put writes gives the path back.
		if p != "" {
			got, _, err := ParseInfo(formatInfo(p, fixed))
			if err != nil || got != p {
				t.Fatalf("ParseInfo(formatInfo(%q)) = %q, %v", p, got, err)
			}
		}
	})
}

func TestParseInfo(t *testing.T) {
	good := "[Trash Info]\nPath=/a/b%20c\nDeletionDate=2004-08-31T22:32:08\n"
	p, d, err := ParseInfo([]byte(good))
	if err != nil || p != "/a/b c" || !d.Equal(time.Date(2004, 8, 31, 22, 32, 8, 0, time.Local)) {
		t.Errorf("ParseInfo: %q %v %v", p, d, err)
	}
	p, d, err = ParseInfo([]byte("# comment\r\n[Trash Info]\r\nPath=x\r\nDeletionDate=soon\r\n[Other]\r\nPath=y\r\n"))
	if err != nil || p != "x" || !d.IsZero() {
		t.Errorf("ParseInfo with CRLF, a bad date, another group: %q %v %v", p, d, err)
	}
	for _, bad := range []string{"", "Path=/a\n", "[Trash Info]\nDeletionDate=2004-08-31T22:32:08\n", "[Other]\nPath=/a\n", "[Trash Info]\nPath=\n"} {
		if _, _, err := ParseInfo([]byte(bad)); err == nil {
			t.Errorf("ParseInfo(%q): no error", bad)
		}
	}
}

// TestHomeTrash: a file on the home trash's file system goes there, with
// its trash info (absolute path, date); List finds it under its folder
// and not under another; Restore puts it back byte for byte and removes
// the trash info.
func TestHomeTrash(t *testing.T) {
	tr := homeTrash(t)
	store := filepath.Join(t.TempDir(), "store")
	file := filepath.Join(store, "--p q--", "s1.jsonl")
	content := "{\"type\":\"session\"}\nbytes \x00\xff\n"
	write(t, file, content)
	fi0, _ := os.Stat(file)

	it, err := tr.Put(file)
	if err != nil {
		t.Fatal(err)
	}
	if it.Dir != tr.Home || it.Name != "s1.jsonl" || it.Original != file || !it.Deleted.Equal(fixed) {
		t.Errorf("Put: %+v", it)
	}
	if _, err := os.Lstat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file is still there: %v", err)
	}
	if got := read(t, it.File()); got != content {
		t.Errorf("trashed content %q", got)
	}
	info := read(t, it.InfoFile())
	want := "[Trash Info]\nPath=" + strings.ReplaceAll(file, " ", "%20") + "\nDeletionDate=2024-05-06T07:08:09\n"
	if info != want {
		t.Errorf("trash info\n%s\nwant\n%s", info, want)
	}
	for _, d := range []string{tr.Home, filepath.Join(tr.Home, "files"), filepath.Join(tr.Home, "info")} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want a folder 0700", d, fi.Mode(), err)
		}
	}

	items, err := tr.List(store)
	if err != nil || len(items) != 1 || items[0] != it {
		t.Fatalf("List(store) = %+v, %v; want [%+v]", items, err, it)
	}
	if items, err := tr.List(filepath.Join(store, "--p q--")); err != nil || len(items) != 1 {
		t.Errorf("List(project) = %+v, %v", items, err)
	}
	if items, err := tr.List(store + "2"); err != nil || len(items) != 0 {
		t.Errorf("List(a folder whose name starts like it) = %+v, %v", items, err)
	}

	if err := tr.Restore(it); err != nil {
		t.Fatal(err)
	}
	if got := read(t, file); got != content {
		t.Errorf("restored content %q", got)
	}
	if fi, _ := os.Stat(file); !fi.ModTime().Equal(fi0.ModTime()) || fi.Mode() != fi0.Mode() {
		t.Errorf("restored file %v %v, was %v %v", fi.ModTime(), fi.Mode(), fi0.ModTime(), fi0.Mode())
	}
	if _, err := os.Lstat(it.InfoFile()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("trash info left: %v", err)
	}
	if items, err := tr.List(store); err != nil || len(items) != 0 {
		t.Errorf("List after Restore = %+v, %v", items, err)
	}
}

// TestSymlinkedStore: the original path is the real path of the file's
// folder (as trash-cli records it); List finds it under either path.
func TestSymlinkedStore(t *testing.T) {
	tr := homeTrash(t)
	real := filepath.Join(t.TempDir(), "real")
	write(t, filepath.Join(real, "p", "s.jsonl"), "x\n")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	it, err := tr.Put(filepath.Join(link, "p", "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	realReal, _ := filepath.EvalSymlinks(real)
	if it.Original != filepath.Join(realReal, "p", "s.jsonl") {
		t.Errorf("original %s", it.Original)
	}
	for _, under := range []string{link, real} {
		if items, err := tr.List(under); err != nil || len(items) != 1 {
			t.Errorf("List(%s) = %+v, %v", under, items, err)
		}
	}
}

// TestNameClash: a second file of the same name gets NAME_1; a file left
// in files/ without trash info is never replaced.
func TestNameClash(t *testing.T) {
	tr := homeTrash(t)
	store := t.TempDir()
	a, b, c := filepath.Join(store, "a", "s.jsonl"), filepath.Join(store, "b", "s.jsonl"), filepath.Join(store, "c", "s.jsonl")
	write(t, a, "A")
	write(t, b, "B")
	write(t, c, "C")
	ia, err := tr.Put(a)
	if err != nil {
		t.Fatal(err)
	}
	// An orphan where the next name would go.
	write(t, filepath.Join(tr.Home, "files", "s.jsonl_1"), "orphan")
	ib, err := tr.Put(b)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := tr.Put(c)
	if err != nil {
		t.Fatal(err)
	}
	if ia.Name != "s.jsonl" || ib.Name != "s.jsonl_2" || ic.Name != "s.jsonl_3" {
		t.Errorf("names %s %s %s", ia.Name, ib.Name, ic.Name)
	}
	if got := read(t, filepath.Join(tr.Home, "files", "s.jsonl_1")); got != "orphan" {
		t.Errorf("the orphan was replaced: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(tr.Home, "info", "s.jsonl_1.trashinfo")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a trash info left for the orphan's name: %v", err)
	}
	items, err := tr.List(store)
	if err != nil || len(items) != 3 {
		t.Fatalf("List: %+v %v", items, err)
	}
	for _, it := range []Item{ia, ib, ic} {
		if err := tr.Restore(it); err != nil {
			t.Error(err)
		}
	}
	if read(t, a) != "A" || read(t, b) != "B" || read(t, c) != "C" {
		t.Error("restored contents differ")
	}
}

// TestRestoreOntoFile: a file at the original path is never replaced;
// nothing changes, and the error is fs.ErrExist.
func TestRestoreOntoFile(t *testing.T) {
	tr := homeTrash(t)
	file := filepath.Join(t.TempDir(), "p", "s.jsonl")
	write(t, file, "old")
	it, err := tr.Put(file)
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, "new")
	err = tr.Restore(it)
	if !errors.Is(err, ErrTaken) || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Restore onto a file: %v", err)
	}
	if read(t, file) != "new" || read(t, it.File()) != "old" {
		t.Error("Restore changed a file")
	}
	if _, err := os.Stat(it.InfoFile()); err != nil {
		t.Errorf("trash info gone: %v", err)
	}
	// Its folder gone, Restore makes it again.
	os.RemoveAll(filepath.Dir(file))
	if err := tr.Restore(it); err != nil || read(t, file) != "old" {
		t.Errorf("Restore into a folder that went: %v", err)
	}
}

// TestPutMissing: trashing nothing fails and creates no trash info.
func TestPutMissing(t *testing.T) {
	tr := homeTrash(t)
	if _, err := tr.Put(filepath.Join(t.TempDir(), "nope.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Put of a missing file: %v", err)
	}
	if des, _ := os.ReadDir(filepath.Join(tr.Home, "info")); len(des) != 0 {
		t.Errorf("trash info written: %v", des)
	}
}

// TestTopTrash: a file on another file system than the home trash goes to
// the trash at the top of its own: .Trash-$uid, or .Trash/$uid when
// .Trash is a sticky folder (not when it is not sticky, nor a symlink);
// the trash info holds the path relative to the top. A store at the top
// of its file system is refused: its trash would be inside it.
func TestTopTrash(t *testing.T) {
	top := tmpfs(t)
	uid := strconv.Itoa(os.Getuid())
	tr := homeTrash(t)
	store := filepath.Join(top, "agent", "sessions")
	tr.Outside = store
	file := filepath.Join(store, "--p--", "s.jsonl")

	put := func(wantDir string) {
		t.Helper()
		write(t, file, "S")
		it, err := tr.Put(file)
		if err != nil {
			t.Fatal(err)
		}
		if it.Dir != wantDir {
			t.Errorf("trashed into %s, want %s", it.Dir, wantDir)
		}
		if info := read(t, it.InfoFile()); !strings.Contains(info, "\nPath=agent/sessions/--p--/s.jsonl\n") {
			t.Errorf("trash info %q", info)
		}
		if d, err := tr.Dir(file); err != nil || d != wantDir {
			t.Errorf("Dir = %s, %v", d, err)
		}
		items, err := tr.List(store)
		if err != nil || len(items) != 1 || items[0].Original != file {
			t.Fatalf("List = %+v, %v", items, err)
		}
		if err := tr.Restore(items[0]); err != nil || read(t, file) != "S" {
			t.Fatalf("Restore: %v", err)
		}
	}
	put(filepath.Join(top, ".Trash-"+uid))

	// .Trash without the sticky bit is not used.
	if err := os.Mkdir(filepath.Join(top, ".Trash"), 0o777); err != nil {
		t.Fatal(err)
	}
	put(filepath.Join(top, ".Trash-"+uid))
	// With it, it is, and $uid is made in it.
	if err := os.Chmod(filepath.Join(top, ".Trash"), 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	put(filepath.Join(top, ".Trash", uid))
	if fi, err := os.Stat(filepath.Join(top, ".Trash", uid)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf(".Trash/%s: %v %v", uid, fi.Mode(), err)
	}
	// A symlink to a sticky folder is not used.
	os.Rename(filepath.Join(top, ".Trash"), filepath.Join(top, "sticky"))
	if err := os.Symlink("sticky", filepath.Join(top, ".Trash")); err != nil {
		t.Fatal(err)
	}
	put(filepath.Join(top, ".Trash-"+uid))

	// The store at the top: its trash would be a folder of it.
	tr.Outside = top
	flat := filepath.Join(top, "s.jsonl")
	write(t, flat, "F")
	if _, err := tr.Put(flat); !errors.Is(err, ErrInside) {
		t.Errorf("Put with the trash inside the store: %v", err)
	}
	if _, err := tr.Dir(flat); !errors.Is(err, ErrInside) {
		t.Errorf("Dir with the trash inside the store: %v", err)
	}
	if read(t, flat) != "F" {
		t.Error("the refused file changed")
	}
}

// FuzzParseInfo: any bytes parse without a panic; what parses has a Path,
// and a Path written back parses the same.
func FuzzParseInfo(f *testing.F) {
	f.Add([]byte("[Trash Info]\nPath=/a/b%20c\nDeletionDate=2004-08-31T22:32:08\n"))
	f.Add([]byte("[Trash Info]\r\nPath=%zz\r\n[x]\nPath=y"))
	f.Add([]byte("Path=/a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := ParseInfo(data)
		if err != nil {
			return
		}
		if p == "" {
			t.Fatal("parsed with an empty path")
		}
		if q, _, err := ParseInfo(formatInfo(p, fixed)); err != nil || q != p {
			t.Fatalf("path %q written back parses as %q, %v", p, q, err)
		}
	})
}

// TestTrashOfAnotherUser: a trash directory at the top of a file system
// that is not the user's own (another user's, one others may write, a
// symbolic link; or $uid in a .Trash another user owns) is never used:
// nothing goes there, nothing is listed from it, nothing restored from
// it; with no other, the file stays where it is (ErrNotOwn, EACCES). A
// trash of the user's own beside it is used.
func TestTrashOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatal("needs root to make another user's folders")
		}
		t.Skip("needs root to make another user's folders")
	}
	const other = 65534
	uid := strconv.Itoa(os.Getuid())
	for _, c := range []struct {
		what  string
		plant func(top string)
	}{
		{"another user's .Trash-$uid", func(top string) {
			os.Mkdir(filepath.Join(top, ".Trash-"+uid), 0o700)
			os.Chown(filepath.Join(top, ".Trash-"+uid), other, other)
		}},
		{"a .Trash-$uid others may write", func(top string) {
			os.Mkdir(filepath.Join(top, ".Trash-"+uid), 0o777)
			os.Chmod(filepath.Join(top, ".Trash-"+uid), 0o777)
		}},
		{"a .Trash-$uid whose files/ is another user's", func(top string) {
			os.MkdirAll(filepath.Join(top, ".Trash-"+uid, "files"), 0o700)
			os.Chown(filepath.Join(top, ".Trash-"+uid, "files"), other, other)
		}},
		{"a .Trash-$uid that is a symbolic link", func(top string) {
			os.Mkdir(filepath.Join(top, "elsewhere"), 0o700)
			os.Symlink("elsewhere", filepath.Join(top, ".Trash-"+uid))
		}},
		{"another user's $uid in a sticky .Trash, and their .Trash-$uid", func(top string) {
			os.Mkdir(filepath.Join(top, ".Trash"), 0o777)
			os.Chmod(filepath.Join(top, ".Trash"), 0o777|os.ModeSticky)
			os.Mkdir(filepath.Join(top, ".Trash", uid), 0o700)
			os.Chown(filepath.Join(top, ".Trash", uid), other, other)
			os.Mkdir(filepath.Join(top, ".Trash-"+uid), 0o700)
			os.Chown(filepath.Join(top, ".Trash-"+uid), other, other)
		}},
	} {
		t.Run(c.what, func(t *testing.T) {
			top := tmpfs(t)
			tr := homeTrash(t)
			store := filepath.Join(top, "sessions")
			tr.Outside = store
			file := filepath.Join(store, "--p--", "s.jsonl")
			write(t, file, "S")
			c.plant(top)
			// What the other user left for the store, as if trashed.
			for _, d := range []string{filepath.Join(top, ".Trash-"+uid), filepath.Join(top, ".Trash", uid)} {
				if _, err := os.Lstat(d); err == nil {
					write(t, filepath.Join(d, "files", "planted.jsonl"), "P")
					write(t, filepath.Join(d, "info", "planted.jsonl.trashinfo"), "[Trash Info]\nPath=sessions/--p--/planted.jsonl\nDeletionDate=2024-01-01T00:00:00\n")
				}
			}
			if _, err := tr.Put(file); !errors.Is(err, ErrNotOwn) || !errors.Is(err, fs.ErrPermission) {
				t.Errorf("Put: %v, want ErrNotOwn", err)
			}
			if read(t, file) != "S" {
				t.Error("the file moved")
			}
			items, err := tr.List(store)
			if err != nil || len(items) != 0 {
				t.Errorf("List: %+v %v, want nothing", items, err)
			}
			if err := tr.Restore(Item{Dir: filepath.Join(top, ".Trash-"+uid), Name: "planted.jsonl", Original: filepath.Join(store, "--p--", "planted.jsonl")}); err == nil {
				t.Error("restored from another user's trash")
			}
			if _, err := os.Lstat(filepath.Join(store, "--p--", "planted.jsonl")); err == nil {
				t.Error("a planted file reached the store")
			}
		})
	}

	// The user's own .Trash-$uid beside another user's .Trash/$uid.
	top := tmpfs(t)
	tr := homeTrash(t)
	file := filepath.Join(top, "sessions", "--p--", "s.jsonl")
	write(t, file, "S")
	os.Mkdir(filepath.Join(top, ".Trash"), 0o777)
	os.Chmod(filepath.Join(top, ".Trash"), 0o777|os.ModeSticky)
	os.Mkdir(filepath.Join(top, ".Trash", uid), 0o700)
	os.Chown(filepath.Join(top, ".Trash", uid), other, other)
	it, err := tr.Put(file)
	if err != nil || it.Dir != filepath.Join(top, ".Trash-"+uid) {
		t.Fatalf("Put: %+v %v, want the user's .Trash-%s", it, err, uid)
	}
	// A sticky .Trash another user owns is theirs to empty: not used.
	top = tmpfs(t)
	file = filepath.Join(top, "sessions", "--p--", "s.jsonl")
	write(t, file, "S")
	os.Mkdir(filepath.Join(top, ".Trash"), 0o777)
	os.Chmod(filepath.Join(top, ".Trash"), 0o777|os.ModeSticky)
	os.Chown(filepath.Join(top, ".Trash"), other, other)
	if it, err = tr.Put(file); err != nil || it.Dir != filepath.Join(top, ".Trash-"+uid) {
		t.Fatalf("Put: %+v %v, want the user's .Trash-%s", it, err, uid)
	}
}
