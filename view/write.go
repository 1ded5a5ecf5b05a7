package view

import (
	"errors"
	"fmt"
	"time"

	"github.com/pifs/pifs/internal/spill"
	"github.com/pifs/pifs/internal/txn"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// How writes work (docs/reference.md, "Controls"; package txn for the
// transaction of an open file).
//
// A session control first prepares each line with the session unlocked
// (for append: parses, checks and encodes it), then builds it against the
// session, locked. At commit, the control's run builds every line again,
// from the lines as prepared, against the session as it is then (pi may
// have appended meanwhile) and appends the result in one O_APPEND
// write(2). A refusal's reason goes to the caller as an errno, to the
// session's errors file and to the log.
//
// A session control keeps of its lines only the ids of their entries. At
// commit, a batch built against the very version of the session the file
// still is goes out as it is, from its spill (a file mapped, not copied),
// in one write(2); one built against an older version is built again from
// the lines read back, prepared again under the session's lock.

// Txn is a control opened for writing: the transaction of one open file.
type Txn = txn.Txn[Caller]

// control is what a writable file does with the lines written to it.
type control = txn.Control[Caller]

// writable is a File that takes writes: a control.
type writable interface {
	control() control
}

// Write opens f for writing by caller c: ErrReadOnly when f takes no
// writes or the mount is read-only.
func (v *View) Write(f File, c Caller) (*Txn, error) {
	w, ok := f.(writable)
	if !ok || v.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	if inTrash(f) {
		return nil, v.refuseTrashed(f, w.control().Name())
	}
	ctl := w.control()
	if o, ok := ctl.(opener); ok {
		if err := o.mayOpen(c); err != nil {
			ctl.Refused(err)
			return nil, err
		}
	}
	return v.newTxn(f, ctl, c), nil
}

// newTxn opens a transaction of ctl, a control of f, for caller c.
func (v *View) newTxn(f File, ctl control, c Caller) *Txn {
	return txn.New(ctl, c, txn.Options{
		Limit:    v.opts.TxnBytes,
		SpillDir: v.opts.SpillDir,
		Held:     v.txnHeld,
		Content: func() ([]byte, error) {
			data, _, err := f.content()
			return data, err
		},
		Committed: v.settle,
	})
}

// settle waits, after a write through a control, until the kernel was
// told what it changed, for a second at most.
func (v *View) settle() {
	if v.notifying.Load() {
		v.out.wait(time.Second)
	}
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
	_ control    = sessionControl[*tree.PreparedLine]{}
	_ txn.Closer = (*sessionTxn)(nil)
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

func (x *sessionTxn) Close() { x.out.Close() }

// mayOpen: a write to name, leaf or append appends to the session file.
func (c sessionControl[P]) mayOpen(who Caller) error { return c.s.mayChange(who) }

// Run appends the transaction's entries: those its checks built when the
// session is still the version they were built against, else built again,
// from the lines read back and prepared again, against the session as it
// is now.
func (c sessionControl[P]) Run(x *Txn, state any, lines *spill.Lines) ([]byte, error) {
	st, _ := state.(*sessionTxn)
	return nil, c.s.appendBatch(func(ss *session) ([]byte, func(), error) {
		out, own := (*spill.Lines)(nil), false
		if st != nil && st.version != nil && st.version == ss.File && st.b.Len() > 0 {
			out = st.out
		} else {
			out, own = x.NewSpill(), true
			b := ss.Tree.NewBuilder()
			b.Out = out
			err := lines.Each(func(i int, l []byte) error {
				p, err := c.prepare(l)
				if err != nil {
					return txn.LineError(c.ctl, i+1, err)
				}
				if err := c.add(ss, b, p); err != nil {
					return txn.LineError(c.ctl, i+1, err)
				}
				return x.Bounded(c.ctl, out)
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

// Check prepares lines, the session unlocked, and builds them on the batch
// of the earlier ones, against the session as it is now.
func (c sessionControl[P]) Check(x *Txn, state any, first int, lines [][]byte) (any, error) {
	if c.s.v.opts.ReadOnly {
		return state, ErrReadOnly
	}
	prepared, err := c.prepareAll(first, lines)
	if err != nil {
		return state, err
	}
	st, _ := state.(*sessionTxn)
	if st == nil {
		st = &sessionTxn{out: x.NewSpill()}
	}
	err = c.s.v.withFreshSession(c.s.project, c.s.name, func(ss *session) error {
		if st.b == nil {
			st.b = ss.Tree.NewBuilder()
			st.b.Out = st.out
			st.version = ss.File
		} else {
			st.b.Rebase(ss.Tree)
			if st.version != ss.File {
				st.version = nil
			}
		}
		for i, p := range prepared {
			if err := c.add(ss, st.b, p); err != nil {
				return txn.LineError(c.ctl, first+i+1, err)
			}
		}
		return nil
	})
	if err == nil {
		err = x.Bounded(c.ctl, st.out)
	}
	return st, err
}

// prepareAll prepares lines, the session unlocked: a line refused here
// never holds up the session's readers.
func (c sessionControl[P]) prepareAll(first int, lines [][]byte) ([]P, error) {
	prepared := make([]P, len(lines))
	for i, l := range lines {
		p, err := c.prepare(l)
		if err != nil {
			return nil, txn.LineError(c.ctl, first+i+1, err)
		}
		prepared[i] = p
	}
	return prepared, nil
}

func (c sessionControl[P]) Refused(err error) { c.s.refused(err) }

func (c sessionControl[P]) Name() string { return c.ctl }
