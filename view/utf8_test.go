package view

import (
	"testing"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// TestGrammarInvalidUTF8: a working directory or name that is not valid
// UTF-8, written to new or fork, is taken as pi would read it (each
// invalid sequence U+FFFD), and its project folder is valid UTF-8.
func TestGrammarInvalidUTF8(t *testing.T) {
	const bad = "a\xff\xfe|\xe2\x82|\xf0\x9f\x98|\xed\xa0\x80|\xc0\xafz"
	js := jsjson.ValidText(bad)
	so, err := tree.ParseNewLine([]byte("/w/"+bad), false)
	if err != nil || so.Cwd != "/w/"+js {
		t.Fatalf("new %q: cwd %q (%v), want %q", "/w/"+bad, so.Cwd, err, "/w/"+js)
	}
	if p := sessions.ProjectFolder(so.Cwd); !utf8.ValidString(p) {
		t.Errorf("project folder %q is not valid UTF-8", p)
	}
	so, err = tree.ParseNewLine([]byte(`{"cwd":"/w/`+bad+`","name":"`+bad+`"}`), false)
	if err != nil || so.Cwd != "/w/"+js || so.Name != js {
		t.Fatalf("new {cwd,name}: %+v (%v)", so, err)
	}
	r, err := tree.ParseForkLine([]byte(`{"cwd":"/w/` + bad + `","name":"` + bad + `"}`))
	if err != nil || r.Cwd != "/w/"+js || r.Name != js {
		t.Fatalf("fork {cwd,name}: %+v (%v)", r, err)
	}
}
