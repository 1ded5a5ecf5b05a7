package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
)

// TestInvalidUTF8ThroughShell: bytes that are not UTF-8, written by the
// shell to append, name, labels/, leaf, fork and new, reach the session
// files as the text pi reads from them (each invalid sequence a U+FFFD):
// every line of the store is valid JSON to Python's json, and pi's
// SessionManager reads the name, label and messages written.
func TestInvalidUTF8ThroughShell(t *testing.T) {
	store, file := writeStore(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	forked := sh(t, s, `
		printf 'bad\377\376\n' > append
		printf 'n\377m\n' > name
		printf '{"role":"user","content":"j\342\202k"}\n' > append
		ln -s a2 "labels/$(printf 'l\377')"
		printf 'l\377\n' > leaf
		printf 'after\360\237\230\n' > append
		printf '/tmp/c\377d\n' > ../../new
		exec 3<>fork
		printf '{"from":"a2","name":"f\377","cwd":"/tmp/e\300\257"}\n' >&3
		read -r path <&3
		exec 3>&-
		printf %s "$path"
	`)
	var files []string
	filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 3 {
		t.Fatalf("%d session files in the store, want the fixture, a new session and a fork: %v", len(files), files)
	}
	// Python's json reads text strictly as UTF-8.
	run(t, "", "python3", append([]string{"-c", `
import json, sys
for f in sys.argv[1:]:
    for n, line in enumerate(open(f, "rb"), 1):
        if line.strip():
            try:
                json.loads(line)
            except ValueError as e:
                sys.exit("%s:%d: %s: %r" % (f, n, e, line))
`}, files...)...)

	js := jsjson.ValidText
	pi := piView(t, file)
	if pi.Name == nil || *pi.Name != js("n\xffm") {
		t.Errorf("pi reads the name %v, want %q", pi.Name, js("n\xffm"))
	}
	if l := string(pi.Labels["a2"]); l != `"`+js("l\xff")+`"` {
		t.Errorf("pi reads the label %s, want %q", l, js("l\xff"))
	}
	var texts []string
	for _, e := range pi.Entries {
		var v struct {
			Message struct{ Content json.RawMessage }
		}
		json.Unmarshal(e, &v)
		texts = append(texts, string(v.Message.Content))
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{js("bad\xff\xfe"), js("j\xe2\x82k"), js("after\xf0\x9f\x98")} {
		if !strings.Contains(joined, want) {
			t.Errorf("pi reads no message %q:\n%s", want, joined)
		}
	}
	if ctx := string(pi.ContextAtLeaf); !strings.Contains(ctx, js("after\xf0\x9f\x98")) || strings.Contains(ctx, js("j\xe2\x82k")) {
		t.Errorf("the leaf moved to the label given in the same bytes: pi's context is %s", ctx)
	}
	// The new session is in the folder pi gives the working directory it
	// reads from its header.
	newDir := filepath.Join(store, sessions.ProjectFolder(js("/tmp/c\xffd")))
	if m, _ := filepath.Glob(filepath.Join(newDir, "*.jsonl")); len(m) != 1 {
		t.Errorf("no session in %s", newDir)
	} else if h := piView(t, m[0]).Header; !strings.Contains(string(h), `"cwd":"`+js("/tmp/c\xffd")+`"`) {
		t.Errorf("new session header %s", h)
	}
	fork := piView(t, filepath.Join(store, forked+".jsonl"))
	if fork.Name == nil || *fork.Name != js("f\xff") || !strings.Contains(string(fork.Header), `"cwd":"`+js("/tmp/e\xc0\xaf")+`"`) {
		t.Errorf("fork %s: name %v, header %s", forked, fork.Name, fork.Header)
	}
}
