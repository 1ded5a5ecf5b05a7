package tree_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pifs/pifs/tree"
)

func TestParseForkLine(t *testing.T) {
	good := []struct {
		line string
		want tree.ForkRequest
	}{
		{``, tree.ForkRequest{}},
		{` `, tree.ForkRequest{}},
		{`u1`, tree.ForkRequest{From: "u1"}},
		{` entries/u1.json `, tree.ForkRequest{From: " entries/u1.json "}},
		{`{"from":"u1","cwd":"/a/../b/","id":"I","name":"N"}`, tree.ForkRequest{From: "u1", SessionOptions: tree.SessionOptions{Cwd: "/b", ID: "I", Name: "N", HasName: true}}},
		{`{"from":null,"name":null,"id":null}`, tree.ForkRequest{}},
		{`{"name":""}`, tree.ForkRequest{SessionOptions: tree.SessionOptions{HasName: true}}},
	}
	for _, c := range good {
		got, err := tree.ParseForkLine([]byte(c.line))
		if err != nil || got != c.want {
			t.Errorf("%q: got %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
	example := `; e.g. {"from":"ID","cwd":"/other/dir","name":"NAME"}`
	bad := []struct{ line, msg string }{
		{`{x`, `malformed JSON; write an entry id, a label, an empty line (the whole session), or {"from":"ID","cwd":"/dir","id":"ID","name":"NAME"}`},
		{`{"bogus":1}`, `unknown field "bogus"; the fields are: from, cwd, id, name`},
		{`{"cwd":"rel"}`, `the working directory "rel" is not an absolute path; write one such as "/home/me/project"`},
		{`{"cwd":1}`, `"cwd" must be a string` + example},
		{`{"id":1}`, `"id" must be a string` + example},
		{`{"name":1}`, `"name" must be a string` + example},
		{`{"from":1}`, `"from" must be a string` + example},
	}
	for _, c := range bad {
		_, err := tree.ParseForkLine([]byte(c.line))
		refusal(t, err, tree.ErrInvalid, c.msg)
	}
}

func TestParseNewLine(t *testing.T) {
	good := []struct {
		line      string
		inProject bool
		want      tree.SessionOptions
	}{
		{`/a/b/`, false, tree.SessionOptions{Cwd: "/a/b"}},
		{"  /a \t", false, tree.SessionOptions{Cwd: "/a"}},
		{`{"cwd":"/x","id":"I","name":"N"}`, false, tree.SessionOptions{Cwd: "/x", ID: "I", Name: "N", HasName: true}},
		{``, true, tree.SessionOptions{}},
		{`{"id":"I","name":"N"}`, true, tree.SessionOptions{ID: "I", Name: "N", HasName: true}},
		{`{}`, true, tree.SessionOptions{}},
	}
	for _, c := range good {
		got, err := tree.ParseNewLine([]byte(c.line), c.inProject)
		if err != nil || got != c.want {
			t.Errorf("%q (in project %v): got %+v, %v; want %+v", c.line, c.inProject, got, err, c.want)
		}
	}
	root := `a working directory (an absolute path), or {"cwd":"/dir","id":"ID","name":"NAME"}`
	project := `an empty line, or {"id":"ID","name":"NAME"}`
	bad := []struct {
		line      string
		inProject bool
		msg       string
	}{
		{``, false, `empty line; write ` + root},
		{`rel/dir`, false, `the working directory "rel/dir" is not an absolute path; write one such as "/home/me/project"`},
		{`{"cwd":"rel"}`, false, `the working directory "rel" is not an absolute path; write one such as "/home/me/project"`},
		{`{"id":"I"}`, false, `"cwd" must be the working directory, an absolute path; e.g. ` + root},
		{`{"cwd":"/x","from":"u1"}`, false, `unknown field "from"; the fields are: cwd, id, name`},
		{`{x`, false, `malformed JSON; write ` + root},
		{`{x`, true, `malformed JSON; write ` + project},
		{`{"cwd":"/x"}`, true, `a project's new creates sessions for the project's own working directory; write {"cwd":...} to the new file at the mount root instead`},
		{`/x`, true, `write ` + project + `; for another working directory, write its path to the new file at the mount root`},
		{`{"from":"x"}`, true, `unknown field "from"; the fields are: id, name`},
		{`{"name":false}`, true, `"name" must be a string; e.g. ` + project},
	}
	for _, c := range bad {
		_, err := tree.ParseNewLine([]byte(c.line), c.inProject)
		refusal(t, err, tree.ErrInvalid, c.msg)
	}
}

// FuzzParseLines: no line written to fork or new makes the grammar fail
// other than with a refusal, and a working directory it takes is absolute
// and clean.
func FuzzParseLines(f *testing.F) {
	for _, s := range []string{"", " ", "u1", "/a/../b/", "rel", `{"from":"u1","cwd":"/a","id":"I","name":"N"}`,
		`{"cwd":1}`, `{x`, `{"name":null}`, "{\"cwd\":\"/\\u0000\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		check := func(cwd string, err error) {
			var r *tree.Refusal
			if err != nil && !errors.As(err, &r) {
				t.Fatalf("%q: %v is no refusal", line, err)
			}
			if err == nil && cwd != "" && (!filepath.IsAbs(cwd) || filepath.Clean(cwd) != cwd) {
				t.Fatalf("%q: cwd %q taken", line, cwd)
			}
		}
		r, err := tree.ParseForkLine(line)
		check(r.Cwd, err)
		for _, inProject := range []bool{false, true} {
			so, err := tree.ParseNewLine(line, inProject)
			check(so.Cwd, err)
		}
	})
}
