package view

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pifs/pifs/internal/spill"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// How writes work (docs/reference.md, "Controls").
//
// A control (name, leaf, append, fork, new) takes commands, one per line.
// Writes arrive in pieces of at most 128 KiB: each open file keeps the
// start of a line until its newline comes, and takes a last line without
// newline at close (Flush).
//
// Everything written through one open file is one transaction (bash's echo
// and printf make one write(2) per line). Each write's complete lines are
// checked as they come, after the transaction's earlier lines, by the
// control's check: a session control first prepares each line with the
// session unlocked (for append: parses, checks and encodes it), then builds
// it against the session, locked. The first bad line fails its write with
// its errno, discards the whole transaction and refuses every later write
// of that open file. The transaction takes effect all at once, at close
// (Flush: the kernel sends one at every close of a descriptor of the open
// file, so a shell's `cmd >&3`, which closes a duplicate of 3 afterwards,
// commits), at fsync, or when the same open file is read (so that `exec
// 3<>fork; echo ID >&3; read -r p <&3` works): the control's run builds
// every line again, from the lines as prepared, against the session as it
// is then (pi may have appended meanwhile) and appends the result in one
// O_APPEND write(2); a line that fails now refuses the whole transaction at
// that close, fsync or read. A refusal's reason goes to the caller as an
// errno, to the session's errors file and to the log. A transaction is
// bounded (maxTxn): past it, EFBIG.
//
// Memory stays bounded whatever is written: a transaction's lines, and the
// entries its checks build from them, are kept in spills (package spill),
// which go to an unlinked temporary file past 1 MiB; a session control
// keeps of its lines only the ids of their entries. At commit, a batch built
// against the very version of the session the file still is goes out as it
// is, from its spill (a file mapped, not copied), in one write(2); one
// built against an older version is built again from the lines read back,
// prepared again under the session's lock.

// maxLine bounds the line an open control buffers (a message may carry
// images, so it is generous).
const maxLine = 64 << 20

// maxTxn bounds what one open file's transaction holds: the lines written
// to it, and the entries a session control builds from them, 256 MiB each
// (Options.TxnBytes for another bound).
const maxTxn = 256 << 20

// txnBytes is the bound of a transaction (see maxTxn).
func (v *View) txnBytes() int64 {
	if v.opts.TxnBytes > 0 {
		return v.opts.TxnBytes
	}
	return maxTxn
}

// sizeMiB says a bound in MiB, or in bytes when it is not a whole MiB.
func sizeMiB(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// control is what a writable file does with the lines written to it.
type control interface {
	// name is the control's file name, for messages.
	name() string
	// check checks lines, the next complete lines of a transaction, after
	// those checked before, without carrying anything out. state is what
	// the previous check of the transaction returned (nil at first), and
	// first the number of lines before these (for messages). x is the
	// transaction: its caller, and where its spills go.
	check(x *Txn, state any, first int, lines [][]byte) (any, error)
	// run carries out a whole transaction, all or none, checking it again
	// against the store as it is now; state is what the transaction's
	// last check returned (nil when it was not checked), from which it may
	// take what does not depend on the store. It returns what reading the
	// same open file gives afterwards (nil: the file's own content).
	run(x *Txn, state any, lines *spill.Lines) (reply []byte, err error)
	// refused records why a write was refused.
	refused(err error)
}

// writable is a File that takes writes: a control.
type writable interface {
	control() control
}

// Txn is a control opened for writing: the transaction of one open file.
type Txn struct {
	v      *View
	f      File
	ctl    control
	caller Caller

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

// Write opens f for writing by caller c: ErrReadOnly when f takes no
// writes or the mount is read-only.
func (v *View) Write(f File, c Caller) (*Txn, error) {
	w, ok := f.(writable)
	if !ok || v.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	if inTrash(f) {
		return nil, v.refuseTrashed(f, w.control().name())
	}
	ctl := w.control()
	if o, ok := ctl.(opener); ok {
		if err := o.mayOpen(c); err != nil {
			ctl.refused(err)
			return nil, err
		}
	}
	t := &Txn{v: v, f: f, ctl: ctl, caller: c}
	t.held.Peak = func(n int64) { v.txnHeld(n + int64(cap(t.pending))) }
	return t, nil
}

// newSpill starts a spill of this transaction.
func (t *Txn) newSpill() *spill.Lines { return spill.New(t.v.opts.SpillDir, &t.held) }

// stateCloser is a check's state that holds a spill.
type stateCloser interface{ close() }

// drop gives back what the transaction holds: its lines and its state.
func (t *Txn) drop() {
	t.lines.Close()
	if c, ok := t.state.(stateCloser); ok {
		c.close()
	}
	t.lines, t.state = nil, nil
}

// Write checks the complete lines of data, with what came before them, as
// the next part of the transaction. The offset means nothing to a control:
// every write appends.
func (t *Txn) Write(data []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return 0, t.refuseLater()
	}
	if limit := t.v.txnBytes(); t.size+int64(len(data)) > limit {
		return 0, t.fail(refuse(ErrTooLong, "%s: a transaction (everything written through one open file before it is closed, synced or read) is bounded to %s; write in several opens", t.ctl.name(), sizeMiB(limit)))
	}
	end := bytes.LastIndexByte(data, '\n')
	rest := data[end+1:]
	if len(rest) > maxLine || (end < 0 && len(t.pending)+len(data) > maxLine) {
		return 0, t.fail(refuse(ErrTooLong, "%s: a line is longer than %d MiB; write shorter lines", t.ctl.name(), maxLine>>20))
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
func (t *Txn) add(lines [][]byte) error {
	if t.lines == nil {
		t.lines = t.newSpill()
	}
	state, err := t.ctl.check(t, t.state, t.lines.Len(), lines)
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
func (t *Txn) Flush() error {
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
func (t *Txn) Sync() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.commit()
}

// commit carries out the transaction's lines. t.mu is held.
func (t *Txn) commit() error {
	if t.failed != nil {
		return t.failed
	}
	if t.lines == nil || t.lines.Len() == 0 {
		return nil
	}
	reply, err := t.ctl.run(t, t.state, t.lines)
	t.drop()
	t.size = int64(len(t.pending))
	if err != nil {
		return t.fail(err)
	}
	t.reply = append(t.reply, reply...)
	t.v.settle()
	return nil
}

// fail discards the transaction, refuses the rest of this open file and
// records why.
func (t *Txn) fail(err error) error {
	t.drop()
	t.pending = nil
	t.failed = err
	t.ctl.refused(fmt.Errorf("%w; nothing of this transaction was written (it is everything written through the open file since it was opened or last closed, synced or read)", err))
	return err
}

// Close ends the open file: what its transaction still holds (after a
// refusal, or when no close committed it) is given back.
func (t *Txn) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop()
	t.pending = nil
}

// refuseLater refuses a write after the transaction was refused.
func (t *Txn) refuseLater() error {
	if !t.laterSaid {
		t.laterSaid = true
		t.ctl.refused(&refusal{t.failed, fmt.Sprintf("%s: a later write through the same open file was refused too: its transaction was refused before; close the file and open it again", t.ctl.name())})
	}
	return t.failed
}

// Read commits the transaction, then gives what the commands replied, from
// the start and ignoring the offset; before any reply, the file's current
// content. It returns the bytes read, in dest or not.
func (t *Txn) Read(dest []byte, off int64) ([]byte, error) {
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
	data, _, err := t.f.content()
	if err != nil {
		return nil, err
	}
	return Window(data, off, len(dest)), nil
}

// settle waits, after a write through a control, until the kernel was
// told what it changed, for a second at most.
func (v *View) settle() {
	if v.notifying.Load() {
		v.out.wait(time.Second)
	}
}

// lineError places an error in the batch: "append: line 2: ...".
func lineError(ctl string, n int, err error) error {
	return fmt.Errorf("%s: line %d: %w", ctl, n, err)
}

// change builds entries against the session's current state and appends
// them to its file in one write (see appendBatch).
func (s sessionRef) change(build func(ss *session, b *tree.Builder) error) error {
	return s.appendBatch(func(ss *session) ([]byte, func(), error) {
		b := ss.Tree.NewBuilder()
		if err := build(ss, b); err != nil || len(b.Lines) == 0 {
			return nil, nil, err
		}
		batch := []byte{'\n'}
		for _, l := range b.Lines {
			batch = append(append(batch, l...), '\n')
		}
		return batch, func() {}, nil
	})
}

// appendBatch appends to the session's file the batch build makes against
// its current state (a newline, then whole lines, as
// sessions.AppendBatch takes it; nil for none), in one write; done is
// called once the batch was written or given up. A version 1 or 2 file is
// migrated first, only if it is unchanged since it was read: on a change
// it is read again and the batch built again, once. A batch that build
// refuses changes nothing, not even the version.
func (s sessionRef) appendBatch(build func(ss *session) (batch []byte, done func(), err error)) error {
	if s.v.opts.ReadOnly {
		return ErrReadOnly
	}
	// pifs's writes to one session go one at a time, whichever copy of
	// the session the cache holds.
	defer s.v.x.LockWrites(s.project + "/" + s.name)()
	return s.v.withFreshSession(s.project, s.name, func(ss *session) error {
		// The version the session was brought to may be older than the
		// file: another transaction may have appended between that look
		// and the session's lock. Look again under it, so that the batch
		// is built against the file as it is now.
		if err := s.v.reread(ss); err != nil {
			return err
		}
		for retried := false; ; retried = true {
			batch, done, err := build(ss)
			if err != nil || batch == nil {
				return err
			}
			if ss.Log.Migrated {
				err := sessions.MigrateFile(ss.Log)
				if errors.Is(err, sessions.ErrChanged) {
					done()
					if retried {
						return refuse(ErrBusy, "the session file is of version %v and changed while pifs was migrating it to version 3 before this write; nothing was written, try again when the file is quiet", ss.Log.Header.Version)
					}
					if err := s.v.reread(ss); err != nil {
						return err
					}
					continue
				}
				if err != nil {
					done()
					return err
				}
				s.v.log.Info(fmt.Sprintf("%s: migrated from version %v to %d before a write", ss.Path, ss.Log.Header.Version, sessions.CurrentVersion))
			}
			err = sessions.AppendBatch(ss.Path, batch)
			done()
			if err != nil {
				return err
			}
			// The writer reads its own write at once: the views are
			// refreshed here (the watcher tells the kernel later).
			if err := s.v.reread(ss); err != nil {
				s.v.log.Error(fmt.Sprintf("%s: reading back after a write: %v", ss.Path, err))
			}
			return nil
		}
	})
}

// sessionControl is a control of a session folder whose lines each build
// entries of that session (name, leaf, append). prepare does for a line
// what needs no session (for append: parse, check and encode it), before
// the session's lock is taken, so that a long line never holds up the
// session's readers; add builds a prepared line into the batch, under the
// lock, against the session as it is then.
type sessionControl[P any] struct {
	s       sessionRef
	ctl     string
	prepare func(line []byte) (P, error)
	add     func(ss *session, b *tree.Builder, p P) error
}

var (
	_ control     = sessionControl[*tree.PreparedLine]{}
	_ stateCloser = (*sessionTxn)(nil)
)

// sessionTxn is what a session control's check keeps of a transaction:
// the batch its lines built, for checking the next lines, and the entries
// of that batch, for run when the session is still as they were built
// against.
type sessionTxn struct {
	b   *tree.Builder
	out *spill.Lines
	// version is the version of the session file every line was built
	// against; nil once a check found another.
	version *sessions.File
}

func (x *sessionTxn) close() { x.out.Close() }

// mayOpen: a write to name, leaf or append appends to the session file.
func (c sessionControl[P]) mayOpen(who Caller) error { return c.s.mayChange(who) }

// run appends the transaction's entries: those its checks built when the
// session is still the version they were built against, else built again,
// from the lines read back and prepared again, against the session as it
// is now.
func (c sessionControl[P]) run(x *Txn, state any, lines *spill.Lines) ([]byte, error) {
	txn, _ := state.(*sessionTxn)
	return nil, c.s.appendBatch(func(ss *session) ([]byte, func(), error) {
		out, own := (*spill.Lines)(nil), false
		if txn != nil && txn.version != nil && txn.version == ss.File && txn.b.Len() > 0 {
			out = txn.out
		} else {
			out, own = x.newSpill(), true
			b := ss.Tree.NewBuilder()
			b.Out = out
			err := lines.Each(func(i int, l []byte) error {
				p, err := c.prepare(l)
				if err != nil {
					return lineError(c.ctl, i+1, err)
				}
				if err := c.add(ss, b, p); err != nil {
					return lineError(c.ctl, i+1, err)
				}
				return c.bounded(x, out)
			})
			if err != nil || b.Len() == 0 {
				out.Close()
				return nil, nil, err
			}
		}
		batch, done, err := out.Batch()
		if err != nil {
			if own {
				out.Close()
			}
			return nil, nil, err
		}
		if own {
			unmap := done
			done = func() { unmap(); out.Close() }
		}
		return batch, done, nil
	})
}

// bounded refuses a batch whose entries pass the transaction's bound, and
// one whose spill failed.
func (c sessionControl[P]) bounded(x *Txn, out *spill.Lines) error {
	if err := out.Err(); err != nil {
		return err
	}
	if limit := x.v.txnBytes(); out.Size() > limit {
		return refuse(ErrTooLong, "%s: the entries a transaction (everything written through one open file before it is closed, synced or read) makes are bounded to %s; write in several opens", c.ctl, sizeMiB(limit))
	}
	return nil
}

// check prepares lines, the session unlocked, and builds them on the batch
// of the earlier ones, against the session as it is now.
func (c sessionControl[P]) check(x *Txn, state any, first int, lines [][]byte) (any, error) {
	if c.s.v.opts.ReadOnly {
		return state, ErrReadOnly
	}
	prepared, err := c.prepareAll(first, lines)
	if err != nil {
		return state, err
	}
	txn, _ := state.(*sessionTxn)
	if txn == nil {
		txn = &sessionTxn{out: x.newSpill()}
	}
	err = c.s.v.withFreshSession(c.s.project, c.s.name, func(ss *session) error {
		if txn.b == nil {
			txn.b = ss.Tree.NewBuilder()
			txn.b.Out = txn.out
			txn.version = ss.File
		} else {
			txn.b.Rebase(ss.Tree)
			if txn.version != ss.File {
				txn.version = nil
			}
		}
		for i, p := range prepared {
			if err := c.add(ss, txn.b, p); err != nil {
				return lineError(c.ctl, first+i+1, err)
			}
		}
		return nil
	})
	if err == nil {
		err = c.bounded(x, txn.out)
	}
	return txn, err
}

// prepareAll prepares lines, the session unlocked: a line refused here
// never holds up the session's readers.
func (c sessionControl[P]) prepareAll(first int, lines [][]byte) ([]P, error) {
	prepared := make([]P, len(lines))
	for i, l := range lines {
		p, err := c.prepare(l)
		if err != nil {
			return nil, lineError(c.ctl, first+i+1, err)
		}
		prepared[i] = p
	}
	return prepared, nil
}

func (c sessionControl[P]) refused(err error) { c.s.refused(err) }

func (c sessionControl[P]) name() string { return c.ctl }
