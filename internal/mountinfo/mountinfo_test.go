package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := `22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
36 22 0:32 / /tmp/a\040b rw,nosuid,nodev,relatime shared:2 - fuse.pifs /home/u/.pi/agent/sessions rw,user_id=0,group_id=0
37 22 0:33 / /mnt/x rw master:1 propagate_from:2 - tmpfs tmp\134fs rw
38 22 0:34 / /mnt/short rw
`
	got, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{"/", "ext4", "/dev/sda1"},
		{"/tmp/a b", "fuse.pifs", "/home/u/.pi/agent/sessions"},
		{"/mnt/x", "tmpfs", `tmp\fs`},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestRead: this process's own table has the root mount.
func TestRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/self/mountinfo on " + runtime.GOOS)
	}
	ms, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	root := false
	for _, m := range ms {
		root = root || m.Point == "/"
	}
	if !root {
		t.Errorf("no mount on / among %d", len(ms))
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		``:               ``,
		`plain`:          `plain`,
		`a\040b`:         `a b`,
		`\011tab\012nl`:  "\ttab\nnl",
		`back\134slash`:  `back\slash`,
		`\400`:           `\400`, // past a byte: as it is
		`\08x`:           `\08x`,
		`end\04`:         `end\04`,
		`\`:              `\`,
		`\\040`:          `\ `,
		`\101\102\103\x`: `ABC\x`,
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// escape is the kernel's mangling of a mount table field (seq_file's
// mangle_path with " \t\n\\"): those bytes as \ooo.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; strings.IndexByte(" \t\n\\", c) >= 0 {
			fmt.Fprintf(&b, `\%03o`, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// FuzzUnescape: a field as the kernel writes it reads back as the path;
// and any text unescapes as octal escapes spell it, one byte each, the
// rest as it is.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"", "/tmp/a b", "tab\there", `back\slash`, `\040`, `\777`, `\0`, "\xff\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := Unescape(escape(s)); got != s {
			t.Fatalf("Unescape(escape(%q)) = %q", s, got)
		}
		var want strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+3 < len(s) {
				var n int
				if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &n); err == nil && n <= 0xFF && strings.Trim(s[i+1:i+4], "01234567") == "" {
					want.WriteByte(byte(n))
					i += 3
					continue
				}
			}
			want.WriteByte(s[i])
		}
		if got := Unescape(s); got != want.String() {
			t.Fatalf("Unescape(%q) = %q, want %q", s, got, want.String())
		}
	})
}

func TestRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		filepath.Join(dir, "link"):               filepath.Join(dir, "real"),
		filepath.Join(dir, "link", "not/yet"):    filepath.Join(dir, "real", "not/yet"),
		filepath.Join(dir, "missing", "a", ".."): filepath.Join(dir, "missing"),
		dir:                                      dir,
	} {
		got, err := RealPath(in)
		if err != nil || got != want {
			t.Errorf("RealPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// A file in the way is no folder to go on from.
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := RealPath(filepath.Join(dir, "file", "x")); err == nil {
		t.Errorf("RealPath under a file = %q, want an error", got)
	}
}
