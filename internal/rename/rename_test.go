package rename

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestNoReplace(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	os.WriteFile(a, []byte("A"), 0o644)
	os.WriteFile(b, []byte("B"), 0o644)
	err := NoReplace(a, b)
	if !errors.Is(err, fs.ErrExist) || !errors.Is(err, syscall.EEXIST) {
		t.Errorf("onto a file: %v", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "B" {
		t.Errorf("b replaced: %q", got)
	}
	if got, _ := os.ReadFile(a); string(got) != "A" {
		t.Errorf("a changed: %q", got)
	}
	if err := NoReplace(a, c); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(c); string(got) != "A" {
		t.Errorf("c: %q", got)
	}
	if _, err := os.Lstat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a still there: %v", err)
	}
	if err := NoReplace(a, filepath.Join(dir, "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("of a missing file: %v", err)
	}
}

func TestExchange(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	os.WriteFile(a, []byte("A"), 0o644)
	os.WriteFile(b, []byte("B"), 0o644)
	if err := Exchange(a, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(a); string(got) != "B" {
		t.Errorf("a: %q", got)
	}
	if got, _ := os.ReadFile(b); string(got) != "A" {
		t.Errorf("b: %q", got)
	}
	if err := Exchange(a, c); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("with a missing file: %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "B" {
		t.Errorf("a after a failed exchange: %q", got)
	}
}
