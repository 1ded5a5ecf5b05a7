package gen

import (
	"bytes"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

func TestSessionIsValid(t *testing.T) {
	var buf bytes.Buffer
	if err := Session(&buf, 6000, 1600); err != nil {
		t.Fatal(err)
	}
	l, err := sessions.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 6000 {
		t.Fatalf("%d entries", len(l.Entries))
	}
	tr := tree.New(l)
	if len(tr.Tips()) < 3 || len(tr.Labels()) < 5 {
		t.Fatalf("tips %d labels %d", len(tr.Tips()), len(tr.Labels()))
	}
}
