package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestManPage: pifs.1 renders without a warning and has the sections the
// users look for, and lists every flag and exit code --help lists.
func TestManPage(t *testing.T) {
	page := filepath.Join("..", "..", "pifs.1")
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed (apt-get install groff-base)")
	}
	out, err := exec.Command("groff", "-man", "-ww", "-z", page).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww -z: %v\n%s", err, out)
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", page)
	cmd.Env = append(os.Environ(), "MANWIDTH=80")
	text, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	plain := strings.NewReplacer("\u2010", "-", "\u2212", "-").Replace(stripOverstrike(string(text)))
	for _, want := range []string{"SYNOPSIS", "DESCRIPTION", "OPTIONS", "FILES", "EXIT STATUS", "EXAMPLES", "FSTAB", "SYSTEMD",
		"--cache-size", "--log-file", "--nonempty", "--pid-file", "--version", "fusermount3 -u",
		"name", "leaf", "append", "fork", "new", "labels/", "by-cwd", "errors", "Type=notify"} {
		if !strings.Contains(plain, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
	help, _ := exec.Command(buildPifs(t), "--help").Output()
	for _, l := range strings.Split(string(help), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "--") || len(f) > 1 && strings.HasPrefix(f[1], "--") {
			flag := f[0]
			if !strings.HasPrefix(flag, "--") {
				flag = f[1]
			}
			if !strings.Contains(plain, flag) {
				t.Errorf("the man page lacks %s", flag)
			}
		}
	}
}

// stripOverstrike removes grotty's bold and underline overstrikes.
func stripOverstrike(s string) string {
	r := []rune(s)
	var out []rune
	for i := 0; i < len(r); i++ {
		if i+1 < len(r) && r[i+1] == '\b' {
			i++
			continue
		}
		out = append(out, r[i])
	}
	return string(out)
}

// TestSystemdUnit: contrib/pifs.service passes systemd-analyze verify,
// with ExecStart pointed at the built binary.
func TestSystemdUnit(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed (Debian package systemd)")
	}
	unit, err := os.ReadFile(filepath.Join("..", "..", "contrib", "pifs.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "\nType=notify\n") || !strings.Contains(string(unit), "\nExecStart=/usr/local/bin/pifs ") {
		t.Errorf("the unit is not Type=notify with ExecStart=/usr/local/bin/pifs")
	}
	path := filepath.Join(t.TempDir(), "pifs.service")
	os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/pifs", buildPifs(t))), 0o644)
	if out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
