// Package txn is the transaction of one open control file: the lines
// written through it, checked as they come and carried out all at once,
// whatever the control does with them (see docs/reference.md, "Controls").
package txn

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/pifs/pifs/internal/spill"
)

// How a transaction works.
//
// A control (name, leaf, append, fork, new) takes commands, one per line.
// Writes arrive in pieces of at most 128 KiB: each open file keeps the
// start of a line until its newline comes, and takes a last line without
// newline at close (Flush).
//
// Everything written through one open file is one transaction (bash's echo
// and printf make one write(2) per line). Each write's complete lines are
// checked as they come, after the transaction's earlier lines, by the
// control's Check. The first bad line fails its write with its errno,
// discards the whole transaction and refuses every later write of that
// open file. The transaction takes effect all at once, at close (Flush:
// the kernel sends one at every close of a descriptor of the open file, so
// a shell's `cmd >&3`, which closes a duplicate of 3 afterwards, commits),
// at fsync, or when the same open file is read (so that `exec 3<>fork;
// echo ID >&3; read -r p <&3` works): the control's Run carries out every
// line against the store as it is then; a line that fails now refuses the
// whole transaction at that close, fsync or read. A refusal's reason goes
// to the control (Refused), and to the caller as an errno. A transaction is
// bounded (MaxBytes, or Options.Limit): past it, ErrTooLong.
//
// Memory stays bounded whatever is written: a transaction's lines, and
// what its checks build from them, are kept in spills (package spill),
// which go to an unlinked temporary file past 1 MiB.

// MaxLine bounds the line an open control buffers (a message may carry
// images, so it is generous).
const MaxLine = 64 << 20

// MaxBytes bounds what one open file's transaction holds: the lines
// written to it, and what a control builds from them (see Bounded), 256
// MiB each, unless Options.Limit says otherwise.
const MaxBytes = 256 << 20

// ErrTooLong: a line written to a control is longer than MaxLine, or a
// transaction passes its bound.
var ErrTooLong = errors.New("line too long")

// Refusal is a refused write: the sentence that says why and what to do
// instead (for the session's errors file and the log), and the sentinel
// that gives the errno.
type Refusal struct {
	Kind error
	Msg  string
}

func (e *Refusal) Error() string { return e.Msg }
func (e *Refusal) Unwrap() error { return e.Kind }

// Refuse makes a refusal; format must say what is wrong and what to do.
func Refuse(kind error, format string, args ...any) error {
	return &Refusal{kind, fmt.Sprintf(format, args...)}
}

// LineError places an error in the batch: "append: line 2: ...".
func LineError(ctl string, n int, err error) error {
	return fmt.Errorf("%s: line %d: %w", ctl, n, err)
}

// sizeMiB says a bound in MiB, or in bytes when it is not a whole MiB.
func sizeMiB(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Control is what a writable file does with the lines written to it; C is
// who opened it.
type Control[C any] interface {
	// Name is the control's file name, for messages.
	Name() string
	// Check checks lines, the next complete lines of a transaction, after
	// those checked before, without carrying anything out. state is what
	// the previous check of the transaction returned (nil at first), and
	// first the number of lines before these (for messages). x is the
	// transaction: its caller, and where its spills go.
	Check(x *Txn[C], state any, first int, lines [][]byte) (any, error)
	// Run carries out a whole transaction, all or none, checking it again
	// against the store as it is now; state is what the transaction's
	// last check returned (nil when it was not checked), from which it may
	// take what does not depend on the store. It returns what reading the
	// same open file gives afterwards (nil: the file's own content).
	Run(x *Txn[C], state any, lines *spill.Lines) (reply []byte, err error)
	// Refused records why a write was refused.
	Refused(err error)
}

// Closer is a check's state that holds a spill: it is closed when the
// transaction ends or is discarded.
type Closer interface{ Close() }

// Options are what a transaction takes from the mount.
type Options struct {
	// Limit bounds the transaction (0: MaxBytes).
	Limit int64
	// SpillDir is where a spill past 1 MiB goes ("": os.TempDir()).
	SpillDir string
	// Held, when set, is told each new count of the bytes the transaction
	// holds in memory.
	Held func(n int64)
	// Content is what reading the open file gives before any reply.
	Content func() ([]byte, error)
	// Committed, when set, is called after a transaction took effect.
	Committed func()
}

// Txn is the transaction of one open file of a control, opened by Caller.
type Txn[C any] struct {
	Caller C
	ctl    Control[C]
	o      Options

	mu      sync.Mutex
	pending []byte       // the start of a line whose newline has not come yet
	lines   *spill.Lines // the transaction's complete lines, checked (nil: none)
	state   any          // what the last check returned
	size    int64        // bytes written in this transaction
	held    spill.Held   // what the transaction's spills hold in memory
	// failed is why the transaction was refused: every later write of
	// this open file is refused too. laterSaid tells that one of those
	// was recorded already (one is enough in errors).
	failed    error
	laterSaid bool
	// reply is what the commands run through this open file gave back
	// (the paths of new sessions); reads return it from the start,
	// whatever the file offset, so `exec 3<>fork; echo ID >&3; read -r p
	// <&3` works.
	reply    []byte
	replyPos int
}

// New opens a transaction of ctl for caller.
func New[C any](ctl Control[C], caller C, o Options) *Txn[C] {
	t := &Txn[C]{Caller: caller, ctl: ctl, o: o}
	if o.Held != nil {
		t.held.Peak = func(n int64) { o.Held(n + int64(cap(t.pending))) }
	}
	return t
}

// Limit is the bound of the transaction (see MaxBytes).
func (t *Txn[C]) Limit() int64 {
	if t.o.Limit > 0 {
		return t.o.Limit
	}
	return MaxBytes
}

// NewSpill starts a spill of this transaction.
func (t *Txn[C]) NewSpill() *spill.Lines { return spill.New(t.o.SpillDir, &t.held) }

// Bounded refuses what a control built from the transaction's lines (the
// entries of a session control, in out) when it passes the transaction's
// bound, and when its spill failed; ctl names the control.
func (t *Txn[C]) Bounded(ctl string, out *spill.Lines) error {
	if err := out.Err(); err != nil {
		return err
	}
	if limit := t.Limit(); out.Size() > limit {
		return Refuse(ErrTooLong, "%s: the entries a transaction (everything written through one open file before it is closed, synced or read) makes are bounded to %s; write in several opens", ctl, sizeMiB(limit))
	}
	return nil
}

// drop gives back what the transaction holds: its lines and its state.
func (t *Txn[C]) drop() {
	t.lines.Close()
	if c, ok := t.state.(Closer); ok {
		c.Close()
	}
	t.lines, t.state = nil, nil
}

// Write checks the complete lines of data, with what came before them, as
// the next part of the transaction. A control has no offset: every write
// appends.
func (t *Txn[C]) Write(data []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return 0, t.refuseLater()
	}
	if limit := t.Limit(); t.size+int64(len(data)) > limit {
		return 0, t.fail(Refuse(ErrTooLong, "%s: a transaction (everything written through one open file before it is closed, synced or read) is bounded to %s; write in several opens", t.ctl.Name(), sizeMiB(limit)))
	}
	end := bytes.LastIndexByte(data, '\n')
	rest := data[end+1:]
	if len(rest) > MaxLine || (end < 0 && len(t.pending)+len(data) > MaxLine) {
		return 0, t.fail(Refuse(ErrTooLong, "%s: a line is longer than %d MiB; write shorter lines", t.ctl.Name(), MaxLine>>20))
	}
	t.size += int64(len(data))
	if end < 0 {
		t.pending = append(t.pending, data...)
		t.held.Add(0)
		return len(data), nil
	}
	batch := append(t.pending, data[:end]...)
	// The caller's buffer is reused once Write returns.
	t.pending = append([]byte(nil), rest...)
	if err := t.add(bytes.Split(batch, []byte{'\n'})); err != nil {
		return 0, err
	}
	return len(data), nil
}

// add checks lines and adds them to the transaction.
func (t *Txn[C]) add(lines [][]byte) error {
	if t.lines == nil {
		t.lines = t.NewSpill()
	}
	state, err := t.ctl.Check(t, t.state, t.lines.Len(), lines)
	t.state = state
	if err != nil {
		return t.fail(err)
	}
	for _, l := range lines {
		t.lines.Add(l)
	}
	if err := t.lines.Err(); err != nil {
		return t.fail(err)
	}
	return nil
}

// Flush takes a last line that has no newline and commits the
// transaction. It comes at every close of a descriptor of this open file
// (twice after dup): only the first finds something to do.
func (t *Txn[C]) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed == nil && len(t.pending) > 0 {
		line := t.pending
		t.pending = nil
		if err := t.add([][]byte{line}); err != nil {
			return err
		}
	}
	return t.commit()
}

// Sync commits the transaction's complete lines (vim's :w syncs before it
// closes).
func (t *Txn[C]) Sync() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.commit()
}

// commit carries out the transaction's lines. t.mu is held.
func (t *Txn[C]) commit() error {
	if t.failed != nil {
		return t.failed
	}
	if t.lines == nil || t.lines.Len() == 0 {
		return nil
	}
	reply, err := t.ctl.Run(t, t.state, t.lines)
	t.drop()
	t.size = int64(len(t.pending))
	if err != nil {
		return t.fail(err)
	}
	t.reply = append(t.reply, reply...)
	if t.o.Committed != nil {
		t.o.Committed()
	}
	return nil
}

// fail discards the transaction, refuses the rest of this open file and
// records why.
func (t *Txn[C]) fail(err error) error {
	t.drop()
	t.pending = nil
	t.failed = err
	t.ctl.Refused(fmt.Errorf("%w; nothing of this transaction was written (it is everything written through the open file since it was opened or last closed, synced or read)", err))
	return err
}

// Close ends the open file: what its transaction still holds (after a
// refusal, or when no close committed it) is given back.
func (t *Txn[C]) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop()
	t.pending = nil
}

// refuseLater refuses a write after the transaction was refused.
func (t *Txn[C]) refuseLater() error {
	if !t.laterSaid {
		t.laterSaid = true
		t.ctl.Refused(&Refusal{t.failed, fmt.Sprintf("%s: a later write through the same open file was refused too: its transaction was refused before; close the file and open it again", t.ctl.Name())})
	}
	return t.failed
}

// Read commits the transaction, then gives what the commands replied, from
// the start and ignoring the offset; before any reply, the file's current
// content (Options.Content) at off. It returns the bytes read, in dest or
// not.
func (t *Txn[C]) Read(dest []byte, off int64) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.commit(); err != nil {
		return nil, err
	}
	if t.reply != nil {
		n := copy(dest, t.reply[t.replyPos:])
		t.replyPos += n
		return dest[:n], nil
	}
	if t.o.Content == nil {
		return nil, nil
	}
	data, err := t.o.Content()
	if err != nil {
		return nil, err
	}
	if off >= int64(len(data)) {
		return nil, nil
	}
	return data[off:min(int64(len(data)), off+int64(len(dest)))], nil
}
