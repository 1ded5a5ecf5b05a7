package view

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The write path without a kernel: the migration of a version 1 session
// before a write, when another writer appends meanwhile.

func v1Store(t *testing.T) (sessionRef, string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	data, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "v1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p", "s.jsonl")
	os.WriteFile(path, data, 0o644)
	v := New(Options{SessionsDir: dir, CacheBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return newSessionRef(v, "p", "s"), path
}

// otherWriter appends a version 1 line, as an old pi still writing would.
func otherWriter(t *testing.T, path, text string) {
	t.Helper()
	line := `{"type":"message","timestamp":"2026-03-01T10:00:09.000Z","message":{"role":"user","content":"` + text + `","timestamp":1772359209000}}`
	if err := sessions.Append(path, []byte(line)); err != nil {
		t.Fatal(err)
	}
}

func TestMigrationRetriesOnce(t *testing.T) {
	s, path := v1Store(t)
	var shown []string
	s.with(func(ss *session) error {
		for _, e := range ss.Tree.Entries() {
			shown = append(shown, e.ID)
		}
		return nil
	})
	builds := 0
	err := s.change(func(ss *session, b *tree.Builder) error {
		builds++
		if builds == 1 {
			otherWriter(t, path, "meanwhile")
		}
		b.UserText("mine", 1)
		return nil
	})
	if err != nil || builds != 2 {
		t.Fatalf("change: %v after %d builds", err, builds)
	}
	l, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Migrated || l.Header.Version != 3 {
		t.Fatalf("version %v after the write", l.Header.Version)
	}
	var got []string
	for _, e := range l.Entries {
		got = append(got, e.ID)
	}
	if len(got) != len(shown)+2 || strings.Join(got[:len(shown)], " ") != strings.Join(shown, " ") {
		t.Errorf("ids %v, pifs showed %v", got, shown)
	}
	if last := l.Entries[len(l.Entries)-1]; last.ParentID != got[len(shown)] {
		t.Errorf("the write hangs under %s, not under the other writer's entry %s", last.ParentID, got[len(shown)])
	}
}

func TestMigrationBusy(t *testing.T) {
	s, path := v1Store(t)
	before, _ := os.ReadFile(path)
	builds := 0
	err := s.change(func(ss *session, b *tree.Builder) error {
		builds++
		otherWriter(t, path, "again")
		b.UserText("mine", 1)
		return nil
	})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "try again") || builds != 2 {
		t.Fatalf("change: %v (%d builds)", err, builds)
	}
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), string(before)) || strings.Contains(string(after), "mine") {
		t.Error("a refused migration changed what was there")
	}
	// A refused batch never migrates.
	err = s.change(func(ss *session, b *tree.Builder) error { return refuse(ErrInvalid, "no") })
	if !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	if l, _ := sessions.Open(path); !l.Migrated {
		t.Error("a refused write migrated the file")
	}
}

// TestAppendLargeLineOutsideLock: a large line written to append is parsed,
// checked and encoded with the session unlocked, and a reader of the same
// session (context.json) completes meanwhile. The line is prepared once
// per transaction: the commit builds its entry again, against the session
// as it is then, from the line as prepared when it was written.
func TestAppendLargeLineOutsideLock(t *testing.T) {
	c := deepStore(t)
	ctx := newContextFile(c.s, "", false)
	before, _, err := ctx.content()
	if err != nil {
		t.Fatal(err)
	}
	unlocked := func() bool {
		f, err := c.s.meta()
		return err == nil && c.s.v.cache.IfParsed(f, func(*session) {})
	}

	text := strings.Repeat("large ", (8<<20)/6)
	line := []byte(`{"role":"user","content":"` + text + `"}` + "\n")
	prepares, readsDuring := 0, 0
	prepare := c.prepare
	c.prepare = func(l []byte) (*tree.PreparedLine, error) {
		prepares++
		if !unlocked() {
			t.Error("the session is locked (or not held) while a line is prepared")
		} else {
			got, _, err := ctx.content()
			if err != nil || !bytes.Equal(got, before) {
				t.Errorf("context.json read while the line is prepared: %v, %d bytes, want the %d before it", err, len(got), len(before))
			}
			readsDuring++
		}
		return prepare(l)
	}

	// Through an open file, as the kernel sends it: 128 KiB at a time,
	// then close.
	h := c.s.v.newTxn(newAppendFile(c.s), c, Caller{})
	for len(line) > 0 {
		n := min(len(line), 128<<10)
		if _, err := h.Write(line[:n]); err != nil {
			t.Fatalf("write: %v", err)
		}
		line = line[n:]
	}
	if err := h.Flush(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if prepares != 1 || readsDuring != 1 {
		t.Errorf("the line was prepared %d times, with %d reads meanwhile; want once, and one read", prepares, readsDuring)
	}
	c.s.with(func(ss *session) error {
		e := ss.Tree.Entries()
		if len(e) != 1 || string(e[0].MsgContent) != `"`+text+`"` {
			t.Errorf("after the write: %d entries", len(e))
		}
		return nil
	})
	after, _, _ := ctx.content()
	if !bytes.Contains(after, []byte(text)) {
		t.Error("context.json does not show the written line")
	}
}
