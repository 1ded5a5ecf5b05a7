package txn

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/spill"
)

// lineCtl is a control that takes any line but "bad", and whose run
// gives back the lines it carried out, one reply line each.
type lineCtl struct {
	checked  []string // "first:line" for each line checked
	runs     [][]string
	refused  []error
	closed   int
	runError error
}

type ctlState struct{ c *lineCtl }

func (s *ctlState) Close() { s.c.closed++ }

func (c *lineCtl) Name() string { return "ctl" }

func (c *lineCtl) Check(x *Txn[string], state any, first int, lines [][]byte) (any, error) {
	for i, l := range lines {
		c.checked = append(c.checked, fmt.Sprintf("%d:%s", first+i, l))
		if string(l) == "bad" {
			return state, LineError(c.Name(), first+i+1, Refuse(errInvalid, "bad line"))
		}
	}
	if state == nil {
		state = &ctlState{c}
	}
	return state, nil
}

func (c *lineCtl) Run(x *Txn[string], state any, lines *spill.Lines) ([]byte, error) {
	if c.runError != nil {
		return nil, c.runError
	}
	var run []string
	var reply []byte
	err := lines.Each(func(i int, l []byte) error {
		run = append(run, string(l))
		reply = append(reply, x.Caller+":"+string(l)+"\n"...)
		return nil
	})
	c.runs = append(c.runs, run)
	return reply, err
}

func (c *lineCtl) Refused(err error) { c.refused = append(c.refused, err) }

var errInvalid = errors.New("invalid")

// TestLines: lines split across writes are checked once complete, each
// after the ones before it (first counts them), a last line without
// newline at the first close; the transaction runs once, at that close,
// with every line, and gives its check's state back.
func TestLines(t *testing.T) {
	c := &lineCtl{}
	x := New[string](c, "me", Options{})
	for _, w := range []string{"on", "e\ntw", "o\nthree\n", "four"} {
		if n, err := x.Write([]byte(w)); err != nil || n != len(w) {
			t.Fatalf("write %q: %d, %v", w, n, err)
		}
	}
	if want := []string{"0:one", "1:two", "2:three"}; fmt.Sprint(c.checked) != fmt.Sprint(want) {
		t.Errorf("checked %q before the close, want %q", c.checked, want)
	}
	if len(c.runs) != 0 {
		t.Fatal("ran before the close")
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil { // the close of a duplicate
		t.Fatal(err)
	}
	if want := "[[one two three four]]"; fmt.Sprint(c.runs) != want {
		t.Errorf("runs %v, want %s", c.runs, want)
	}
	if c.closed != 1 {
		t.Errorf("the check's state closed %d times, want once", c.closed)
	}
	x.Close()
	if c.closed != 1 {
		t.Errorf("the check's state closed %d times after Close, want once", c.closed)
	}
}

// TestRefused: a bad line fails its write, nothing of the transaction
// runs, every later write of the open file is refused with the same error,
// told once more to the control, and the close says it too.
func TestRefused(t *testing.T) {
	c := &lineCtl{}
	x := New[string](c, "me", Options{})
	if _, err := x.Write([]byte("good\n")); err != nil {
		t.Fatal(err)
	}
	_, err := x.Write([]byte("bad\n"))
	if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "ctl: line 2: bad line") {
		t.Fatalf("bad line: %v", err)
	}
	for range 2 {
		if _, err2 := x.Write([]byte("good\n")); err2 != err {
			t.Errorf("a later write: %v, want %v", err2, err)
		}
	}
	if err2 := x.Flush(); err2 != err {
		t.Errorf("close: %v, want %v", err2, err)
	}
	if len(c.runs) != 0 {
		t.Errorf("ran %v after a refusal", c.runs)
	}
	if len(c.refused) != 2 || !strings.Contains(c.refused[0].Error(), "nothing of this transaction was written") ||
		!strings.Contains(c.refused[1].Error(), "a later write") || !errors.Is(c.refused[1], errInvalid) {
		t.Errorf("refusals told: %q", c.refused)
	}
	if c.closed != 1 {
		t.Errorf("the check's state closed %d times, want once", c.closed)
	}
}

// TestBound: a write past the transaction's bound is refused whole
// (ErrTooLong), and so is what a control builds past it.
func TestBound(t *testing.T) {
	c := &lineCtl{}
	x := New[string](c, "me", Options{Limit: 10})
	if _, err := x.Write([]byte("12345\n")); err != nil {
		t.Fatal(err)
	}
	_, err := x.Write([]byte("67890\n"))
	if !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "bounded to 10 bytes") {
		t.Errorf("past the bound: %v", err)
	}
	if err := x.Flush(); !errors.Is(err, ErrTooLong) || len(c.runs) != 0 {
		t.Errorf("close after the bound: %v, runs %v", err, c.runs)
	}

	y := New[string](c, "me", Options{Limit: 2 << 20})
	out := y.NewSpill()
	defer out.Close()
	out.Add(bytes.Repeat([]byte("x"), 1<<20))
	if err := y.Bounded("ctl", out); err != nil {
		t.Errorf("1 MiB built under a 2 MiB bound: %v", err)
	}
	out.Add(bytes.Repeat([]byte("x"), 1<<20))
	if err := y.Bounded("ctl", out); !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "bounded to 2 MiB") {
		t.Errorf("2 MiB and more built under a 2 MiB bound: %v", err)
	}
}

// TestRead: a read commits what was written and gives the reply from the
// start, whatever the offset, then what follows it; before anything is
// written, the file's content at the offset. Held is told what the
// transaction holds, and Committed each commit.
func TestRead(t *testing.T) {
	c := &lineCtl{}
	var held int64
	commits := 0
	x := New[string](c, "me", Options{
		Content:   func() ([]byte, error) { return []byte("content"), nil },
		Held:      func(n int64) { held = max(held, n) },
		Committed: func() { commits++ },
	})
	buf := make([]byte, 3)
	if got, err := x.Read(buf, 2); err != nil || string(got) != "nte" {
		t.Errorf("read before a write: %q, %v", got, err)
	}
	x.Write([]byte("a\nb\n"))
	var got []byte
	for off := int64(100); ; off++ {
		b, err := x.Read(buf, off)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			break
		}
		got = append(got, b...)
	}
	if string(got) != "me:a\nme:b\n" || commits != 1 {
		t.Errorf("reply %q after %d commits", got, commits)
	}
	if err := x.Sync(); err != nil || commits != 1 {
		t.Errorf("sync with nothing new: %v, %d commits", err, commits)
	}
	if held <= 0 || held > spill.At+4096 {
		t.Errorf("held at most %d bytes", held)
	}
}

// TestRunRefused: a transaction refused when it runs is discarded, the
// control told why, and the open file refuses every later write.
func TestRunRefused(t *testing.T) {
	c := &lineCtl{runError: Refuse(errInvalid, "gone")}
	x := New[string](c, "me", Options{})
	x.Write([]byte("a\n"))
	if err := x.Sync(); !errors.Is(err, errInvalid) {
		t.Errorf("sync: %v", err)
	}
	if _, err := x.Write([]byte("b\n")); !errors.Is(err, errInvalid) {
		t.Errorf("a write after: %v", err)
	}
	if len(c.refused) != 2 {
		t.Errorf("refusals told: %q", c.refused)
	}
}
