package mangen

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestConvert: each construct of the subset becomes the roff that shows
// it, and text is escaped where roff would read it otherwise.
func TestConvert(t *testing.T) {
	md := "# tool(1)\n\nAbout this file: left out.\n\n## Name\n\ntool — does things\n\n" +
		"## Options\n\nSome `--flag` text, **strong**, *emphasis*, a [link](other.md#x) and a\n" +
		".dot at a line start, a back\\slash, an arrow →.\n\n" +
		"| flag | meaning | example |\n|---|---|---|\n| `-o`, `--opt X` | sets \\| pipes | `tool -o x` |\n| `--bare` | alone | |\n\n" +
		"### Sub section\n\n- one\n  continued\n- two\n\n1. first\n2. second\n\n```sh\n.x -y \\z\n```\n"
	got, err := Page{Source: "in.md", Generator: "gen", Center: "User Commands"}.Convert([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := `.\" Generated from in.md by gen: edit that file, not this one.
.TH TOOL 1 "" tool "User Commands"
.SH NAME
tool \- does things
.SH OPTIONS
Some \fB\-\-flag\fR text, \fBstrong\fR, \fIemphasis\fR, a link and a
\&.dot at a line start, a back\eslash, an arrow \[u2192].
.TP
\fB\-o\fR, \fB\-\-opt X\fR
sets | pipes
.IP
example: \fBtool \-o x\fR
.TP
\fB\-\-bare\fR
alone
.SS "Sub section"
.IP \(bu 2
one
continued
.IP \(bu 2
two
.IP 1. 4
first
.IP 2. 4
second
.PP
.RS 4
.nf
\&.x \-y \ez
.fi
.RE
`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command("groff", "-man", "-ww", "-z")
		cmd.Stdin = strings.NewReader(string(got))
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff -man -ww -z: %v\n%s", err, out)
		}
	}
}

// TestRefuses: a construct outside the subset is an error naming its
// line, never text silently dropped from the man page.
func TestRefuses(t *testing.T) {
	for _, md := range []string{
		"",
		"no title\n## A\n",
		"# tool(1)\ntext but no section\n",
		"# tool(1)\n## A\n#### deep\n",
		"# tool(1)\n## A\n    indented code\n",
		"# tool(1)\n## A\n> quote\n",
		"# tool(1)\n## A\n<div>html</div>\n",
		"# tool(1)\n## A\n```\nnever closed\n",
		"# tool(1)\n## A\n| a | b |\n| c | d |\n",
		"# tool(1)\n## A\n| a |\n|---|\n| c |\n",
		"# tool(1)\n## A\n| a | b |\n|---|---|\n| c |\n",
		"# tool(1)\n## A\n| a | b |\n|---|---|\n| | d |\n",
		"# tool(1)\n## A\n- item\n  - nested\n",
		"# tool(1)\n## A\n- item\nlazy continuation\n",
	} {
		if out, err := (Page{}).Convert([]byte(md)); err == nil {
			t.Errorf("%q: no error; made:\n%s", md, out)
		}
	}
}

// FuzzConvert: whatever the Markdown, Convert does not panic, and no text
// of it becomes a roff request: every line that starts with a dot or an
// apostrophe is one of the macros Convert writes itself.
func FuzzConvert(f *testing.F) {
	if ref, err := os.ReadFile("../../docs/reference.md"); err == nil {
		f.Add(string(ref))
	}
	f.Add("# t(1)\n## A\n.x\n'y\n- .z\n  'w\n| .a | 'b | .c |\n|---|---|---|\n| .d | 'e | .f |\n```\n.g\n'h\n```\n### .i\n")
	macros := []string{`.\"`, ".TH ", ".SH ", ".SS ", ".PP", ".TP", ".IP", ".RS ", ".RE", ".nf", ".fi"}
	f.Fuzz(func(t *testing.T, md string) {
		out, err := (Page{Source: "s", Generator: "g", Center: "c"}).Convert([]byte(md))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, ".") && !strings.HasPrefix(line, "'") {
				continue
			}
			if !slices.ContainsFunc(macros, func(m string) bool { return strings.HasPrefix(line, m) }) {
				t.Fatalf("a line of text became a request: %q\nfrom:\n%s", line, md)
			}
		}
	})
}
