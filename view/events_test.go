package view

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pifs/pifs/events"
	"github.com/pifs/pifs/sessions"
)

const evHeader = `{"type":"session","version":3,"id":"sid-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`

// TestEventsPerCaller: on a shared mount a reader is told of the sessions
// its identity may read only, root of all; what it may see is worked out
// once per identity and version of the index, however many readers of
// that identity and changes there are.
func TestEventsPerCaller(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	pub := filepath.Join(dir, "p", "pub.jsonl")
	priv := filepath.Join(dir, "p", "priv.jsonl")
	os.WriteFile(pub, []byte(evHeader+"\n"), 0o644)
	os.WriteFile(priv, []byte(strings.Replace(evHeader, "sid-1", "sid-2", 1)+"\n"), 0o600)
	os.Chmod(priv, 0o600)
	if os.Getuid() != 0 {
		os.Chmod(priv, 0o000) // the user below may be this one: read by no one but root
	}
	v := New(Options{SessionsDir: dir, Shared: true, CacheBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	v.x.All()
	c := Caller{Uid: 4242, Gid: 4242}
	mine, _ := v.Events(&eventsFile{inProject{v, ""}}, c)
	again, _ := v.Events(&eventsFile{inProject{v, "p"}}, c)
	all, _ := v.Events(&eventsFile{inProject{v, ""}}, Caller{})
	before := v.sighted.Load()
	const batches = 3
	for i := 0; i < batches; i++ {
		line := func(id string) [][]byte {
			return [][]byte{[]byte(fmt.Sprintf(`{"type":"label","id":"%s%d","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","targetId":"x","label":"l"}`, id, i))}
		}
		if err := sessions.Append(pub, line("pub")...); err != nil {
			t.Fatal(err)
		}
		if err := sessions.Append(priv, line("priv")...); err != nil {
			t.Fatal(err)
		}
		v.Publish(append(v.x.Update(pub), v.x.Update(priv)...))
	}
	// ids are the ids of the entries r told of so far.
	ids := func(r *events.Reader) string {
		b, err := r.Read(context.Background(), 0, int(r.Size()))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range regexp.MustCompile(`"id":"([^"]*)"`).FindAllSubmatch(b, -1) {
			out = append(out, string(m[1]))
		}
		return strings.Join(out, " ")
	}
	if got := ids(mine); got != "pub0 pub1 pub2" {
		t.Errorf("the user's events: %s", got)
	}
	if got := ids(again); got != "pub0 pub1 pub2" {
		t.Errorf("the user's project events: %s", got)
	}
	if got := ids(all); got != "pub0 priv0 pub1 priv1 pub2 priv2" {
		t.Errorf("root's events: %s", got)
	}
	if n := v.sighted.Load() - before; n != batches {
		t.Errorf("%d sights worked out for %d versions of the index", n, batches)
	}
}
