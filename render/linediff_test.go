package render

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkDiff checks that the hunks between a and b, written out as a
// section and read back, turn a into b, and that every hunk's counts and
// context are right.
func checkDiff(t *testing.T, a, b string) []byte {
	t.Helper()
	hunks := lineHunks(splitLines([]byte(a)), splitLines([]byte(b)))
	s := section{from: "a/x", to: "b/x", hunks: hunks}
	text := s.append(nil)
	if a == b {
		if len(hunks) != 0 {
			t.Fatalf("hunks for equal texts: %s", text)
		}
		return text
	}
	parsed, ok := parsePatch(text)
	if !ok {
		t.Fatalf("the diff does not read back:\n%s", text)
	}
	if got := (&section{from: "a/x", to: "b/x", hunks: parsed}).append(nil); !bytes.Equal(got, text) {
		t.Fatalf("read back differently:\n%s\nvs\n%s", got, text)
	}
	got, ok := applyHunks([]byte(a), parsed)
	if !ok || string(got) != b {
		t.Fatalf("applying\n%s\nto %q gives %q (ok %v), want %q", text, a, got, ok, b)
	}
	for i := 1; i < len(hunks); i++ {
		if hunks[i].oldStart <= hunks[i-1].oldStart+hunks[i-1].oldLines {
			t.Fatalf("hunks overlap or touch:\n%s", text)
		}
	}
	return text
}

func TestLineDiff(t *testing.T) {
	for _, c := range [][2]string{
		{"", "a\n"},
		{"a\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"a\nb", "a\nb\n"},
		{"a\nb\n", "a\nb"},
		{"x", "y"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\nFOURTEEN\n15\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\nx\n4\n5\n6\n7\ny\n8\n"},
		{strings.Repeat("a\n", 2000), strings.Repeat("b\n", 2000)}, // beyond maxDiffD
		{strings.Repeat("a\nb\n", 700), strings.Repeat("a\nc\n", 700)},
	} {
		checkDiff(t, c[0], c[1])
	}
}

// TestLineDiffPatch: GNU patch applies what lineHunks writes, and agrees
// on the result.
func TestLineDiffPatch(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Fatal("patch is needed: ", err)
	}
	for _, c := range [][2]string{
		{"a\nb\nc\n", "a\nB\nc\nd"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "0\n1\n2\n3\n5\n6\n7\n8\n9\n10\n11\n"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x"), []byte(c[0]), 0o644); err != nil {
			t.Fatal(err)
		}
		text := checkDiff(t, c[0], c[1])
		cmd := exec.Command("patch", "-p1", "--batch", "--fuzz=0")
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch: %v\n%s\n%s", err, out, text)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "x")); string(got) != c[1] {
			t.Errorf("patch gives %q, want %q", got, c[1])
		}
	}
}

// FuzzLineDiff: for any two texts, the diff reads back as written and
// turns the first into the second.
func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("x\ny", "x\ny2\nz")
	f.Add("", "new\n")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n3\n4\n5\n6\n7\nx\n8\n9")
	f.Fuzz(func(t *testing.T, a, b string) {
		checkDiff(t, a, b)
	})
}

// FuzzParsePatch: any text, read as a patch and applied to any content,
// neither panics nor gives hunks whose counts are wrong.
func FuzzParsePatch(f *testing.F) {
	f.Add("@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n", "alpha\nbeta\n")
	f.Add("@@ -1 +1,2 @@\n-x\n\\ No newline at end of file\n+y\n+z\n", "x")
	f.Add("@@ -0,0 +1 @@\n+a\n", "")
	f.Fuzz(func(t *testing.T, p, content string) {
		hunks, ok := parsePatch([]byte(p))
		if !ok {
			return
		}
		for _, h := range hunks {
			olds, news := 0, 0
			for _, l := range h.lines {
				if l.kind != '+' {
					olds++
				}
				if l.kind != '-' {
					news++
				}
			}
			if olds != h.oldLines || news != h.newLines {
				t.Fatalf("hunk counts %d,%d for %d,%d lines", h.oldLines, h.newLines, olds, news)
			}
		}
		applyHunks([]byte(content), hunks)
	})
}
