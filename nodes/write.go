package nodes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
	"github.com/pifs/pifs/view"
)

// How writes work (SPEC.md, "Writes").
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

// maxLine bounds the line an open control buffers (a message may carry
// images, so it is generous).
const maxLine = 64 << 20

// maxTxn bounds what one open file's transaction holds, lines and the
// entries checked from them: 256 MiB.
const maxTxn = 256 << 20

// control is what a writable file does with the lines written to it.
type control interface {
	// check checks lines, the next complete lines of a transaction, after
	// those checked before, without carrying anything out. state is what
	// the previous check of the transaction returned (nil at first), and
	// first the number of lines before these (for messages).
	check(state any, first int, lines [][]byte) (any, error)
	// run carries out a whole transaction, all or none, checking it again
	// against the store as it is now; state is what the transaction's
	// last check returned (nil when it was not checked), from which it may
	// take what does not depend on the store. It returns what reading the
	// same open file gives afterwards (nil: the file's own content).
	run(state any, lines [][]byte) (reply []byte, err error)
	// refused records why a write was refused.
	refused(err error)
}

// controlHandle is a control opened for writing.
type controlHandle struct {
	f *file

	mu      sync.Mutex
	pending []byte   // the start of a line whose newline has not come yet
	txn     [][]byte // the transaction's complete lines, checked
	state   any      // what the last check returned
	size    int      // bytes written in this transaction
	// failed is why the transaction was refused: every later write of
	// this open file is refused too. laterSaid tells that one of those
	// was recorded already (one is enough in errors).
	failed    error
	laterSaid bool
	// reply is what the commands run through this handle gave back (the
	// paths of new sessions); reads return it from the start, whatever
	// the file offset, so `exec 3<>fork; echo ID >&3; read -r p <&3` works.
	reply    []byte
	replyPos int
}

var (
	_ = (fs.FileWriter)((*controlHandle)(nil))
	_ = (fs.FileFlusher)((*controlHandle)(nil))
	_ = (fs.FileFsyncer)((*controlHandle)(nil))
	_ = (fs.FileReader)((*controlHandle)(nil))
)

// Write checks the complete lines of data, with what came before them, as
// the next part of the transaction. The offset means nothing to a control:
// every write appends.
func (h *controlHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed != nil {
		return 0, h.refuseLater()
	}
	if h.size+len(data) > maxTxn {
		return 0, h.fail(refuse(view.ErrTooLong, "%s: a transaction (everything written through one open file before it is closed, synced or read) is bounded to %d MiB; write in several opens", h.f.name(), maxTxn>>20))
	}
	end := bytes.LastIndexByte(data, '\n')
	rest := data[end+1:]
	if len(rest) > maxLine || (end < 0 && len(h.pending)+len(data) > maxLine) {
		return 0, h.fail(&refusal{view.ErrTooLong, fmt.Sprintf("%s: a line is longer than %d MiB; write shorter lines", h.f.name(), maxLine>>20)})
	}
	h.size += len(data)
	if end < 0 {
		h.pending = append(h.pending, data...)
		return uint32(len(data)), 0
	}
	batch := append(h.pending, data[:end]...)
	// The caller's buffer is reused once Write returns.
	h.pending = append([]byte(nil), rest...)
	if errno := h.add(bytes.Split(batch, []byte{'\n'})); errno != 0 {
		return 0, errno
	}
	return uint32(len(data)), 0
}

// add checks lines and adds them to the transaction.
func (h *controlHandle) add(lines [][]byte) syscall.Errno {
	state, err := h.f.ctl.check(h.state, len(h.txn), lines)
	if err != nil {
		return h.fail(err)
	}
	h.state = state
	h.txn = append(h.txn, lines...)
	return 0
}

// Flush takes a last line that has no newline and commits the
// transaction. It comes at every close of a descriptor of this open file
// (twice after dup): only the first finds something to do.
func (h *controlHandle) Flush(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed == nil && len(h.pending) > 0 {
		line := h.pending
		h.pending = nil
		if errno := h.add([][]byte{line}); errno != 0 {
			return errno
		}
	}
	return h.commit()
}

// Fsync commits the transaction's complete lines (vim's :w syncs before it
// closes).
func (h *controlHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.commit()
}

// commit carries out the transaction's lines. h.mu is held.
func (h *controlHandle) commit() syscall.Errno {
	if h.failed != nil {
		return h.f.r.errno(h.failed)
	}
	if len(h.txn) == 0 {
		return 0
	}
	lines, state := h.txn, h.state
	h.txn, h.state, h.size = nil, nil, len(h.pending)
	reply, err := h.f.ctl.run(state, lines)
	if err != nil {
		return h.fail(err)
	}
	h.reply = append(h.reply, reply...)
	h.f.r.settle()
	return 0
}

// fail discards the transaction, refuses the rest of this open file and
// records why.
func (h *controlHandle) fail(err error) syscall.Errno {
	h.txn, h.state, h.pending = nil, nil, nil
	h.failed = err
	h.f.ctl.refused(fmt.Errorf("%w; nothing of this transaction was written (it is everything written through the open file since it was opened or last closed, synced or read)", err))
	return h.f.r.errno(err)
}

// refuseLater refuses a write after the transaction was refused.
func (h *controlHandle) refuseLater() syscall.Errno {
	if !h.laterSaid {
		h.laterSaid = true
		h.f.ctl.refused(&refusal{h.failed, fmt.Sprintf("%s: a later write through the same open file was refused too: its transaction was refused before; close the file and open it again", h.f.name())})
	}
	return h.f.r.errno(h.failed)
}

// Read commits the transaction, then gives what the commands replied, from
// the start and ignoring the offset; before any reply, the file's current
// content.
func (h *controlHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if errno := h.commit(); errno != 0 {
		return nil, errno
	}
	if h.reply != nil {
		n := copy(dest, h.reply[h.replyPos:])
		h.replyPos += n
		return fuse.ReadResultData(dest[:n]), 0
	}
	data, _, err := h.f.src.content()
	if err != nil {
		return nil, h.f.r.errno(err)
	}
	return (&snapshot{data}).Read(ctx, dest, off)
}

// name is the control's file name, for messages.
func (f *file) name() string {
	if f.EmbeddedInode() == nil {
		return "control"
	}
	if name, _ := f.Parent(); name != "" {
		return name
	}
	return "control"
}

// refuse makes a refusal; format must say what is wrong and what to do.
func refuse(kind error, format string, args ...any) error {
	return &refusal{kind, fmt.Sprintf(format, args...)}
}

// lineError places an error in the batch: "append: line 2: ...".
func lineError(ctl string, n int, err error) error {
	return fmt.Errorf("%s: line %d: %w", ctl, n, err)
}

// refusals keeps why recent writes to each session were refused: the
// session's errors file.
type refusals struct {
	mu    sync.Mutex
	lines map[string][]string // by session file path, oldest first
	last  map[string]time.Time
}

// keepRefusals is how many lines an errors file keeps.
const keepRefusals = 100

func (rs *refusals) add(path, msg string) {
	now := time.Now()
	line := sessions.Now() + " " + strings.ReplaceAll(msg, "\n", " ") + "\n"
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.lines == nil {
		rs.lines, rs.last = map[string][]string{}, map[string]time.Time{}
	}
	l := append(rs.lines[path], line)
	if len(l) > keepRefusals {
		l = append([]string(nil), l[len(l)-keepRefusals:]...)
	}
	rs.lines[path] = l
	rs.last[path] = now
}

func (rs *refusals) get(path string) ([]byte, time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return []byte(strings.Join(rs.lines[path], "")), rs.last[path]
}

// refused records a refused write to the session.
func (s sessionRef) refused(err error) {
	s.r.refused.add(s.project+"/"+s.name, err.Error())
	s.r.log.Warn(fmt.Sprintf("%s/%s: write refused: %v", s.project, s.name, err))
}

// change builds entries against the session's current state and appends
// them to its file in one write. A version 1 or 2 file is migrated first,
// only if it is unchanged since it was read: on a change it is read again
// and the batch built again, once. A batch that build refuses changes
// nothing, not even the version.
func (s sessionRef) change(build func(ss *session, b *tree.Builder) error) error {
	if s.r.opts.ReadOnly {
		return view.ErrReadOnly
	}
	return s.r.st.withFreshSession(s.project, s.name, func(ss *session) error {
		for retried := false; ; retried = true {
			b := ss.tree.NewBuilder()
			if err := build(ss, b); err != nil {
				return err
			}
			if len(b.Lines) == 0 {
				return nil
			}
			if ss.log.Migrated {
				err := sessions.MigrateFile(ss.log)
				if errors.Is(err, sessions.ErrChanged) {
					if retried {
						return refuse(view.ErrBusy, "the session file is of version %v and changed while pifs was migrating it to version 3 before this write; nothing was written, try again when the file is quiet", ss.log.Header.Version)
					}
					if err := s.r.st.reread(ss); err != nil {
						return err
					}
					continue
				}
				if err != nil {
					return err
				}
				s.r.log.Info(fmt.Sprintf("%s: migrated from version %v to %d before a write", ss.path, ss.log.Header.Version, sessions.CurrentVersion))
			}
			if err := sessions.Append(ss.path, b.Lines...); err != nil {
				return err
			}
			// The writer reads its own write at once: the views are
			// refreshed here (the watcher tells the kernel later).
			if err := s.r.st.reread(ss); err != nil {
				s.r.log.Error(fmt.Sprintf("%s: reading back after a write: %v", ss.path, err))
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
	_ control = sessionControl[*tree.PreparedLine]{}
	_ control = forkControl{}
	_ control = newControl{}
)

// sessionTxn is what a session control's check keeps of a transaction:
// its lines as prepared, for run, and the batch they built, for checking
// the next lines.
type sessionTxn[P any] struct {
	prepared []P
	b        *tree.Builder
}

// run builds the transaction's lines again against the session as it is
// now and appends them. The lines check prepared are used as they are.
func (c sessionControl[P]) run(state any, lines [][]byte) ([]byte, error) {
	var prepared []P
	if txn, _ := state.(*sessionTxn[P]); txn != nil && len(txn.prepared) == len(lines) {
		prepared = txn.prepared
	} else {
		var err error
		if prepared, err = c.prepareAll(0, lines); err != nil {
			return nil, err
		}
	}
	return nil, c.s.change(func(ss *session, b *tree.Builder) error {
		return c.build(ss, b, 0, prepared)
	})
}

func (c sessionControl[P]) build(ss *session, b *tree.Builder, first int, prepared []P) error {
	for i, p := range prepared {
		if err := c.add(ss, b, p); err != nil {
			return lineError(c.ctl, first+i+1, err)
		}
	}
	return nil
}

// check prepares lines and builds them on the batch of the earlier ones,
// against the session as it is now; it keeps both for the next check and
// for run, which builds them all again.
func (c sessionControl[P]) check(state any, first int, lines [][]byte) (any, error) {
	if c.s.r.opts.ReadOnly {
		return nil, view.ErrReadOnly
	}
	prepared, err := c.prepareAll(first, lines)
	if err != nil {
		return nil, err
	}
	txn, _ := state.(*sessionTxn[P])
	if txn == nil {
		txn = &sessionTxn[P]{}
	}
	err = c.s.r.st.withFreshSession(c.s.project, c.s.name, func(ss *session) error {
		if txn.b == nil {
			txn.b = ss.tree.NewBuilder()
		} else {
			txn.b.Rebase(ss.tree)
		}
		return c.build(ss, txn.b, first, prepared)
	})
	txn.prepared = append(txn.prepared, prepared...)
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

// check plans the fork lines, after the transaction's earlier ones (the
// session ids they take), creating nothing.
func (c forkControl) check(state any, first int, lines [][]byte) (any, error) {
	if c.s.r.opts.ReadOnly {
		return nil, view.ErrReadOnly
	}
	taken, _ := state.(map[string]bool)
	if taken == nil {
		taken = map[string]bool{}
	}
	err := c.s.r.st.withFreshSession(c.s.project, c.s.name, func(ss *session) error {
		for i, l := range lines {
			if _, err := c.plan(ss, l, taken); err != nil {
				return lineError("fork", first+i+1, err)
			}
		}
		return nil
	})
	return taken, err
}

// check plans the new lines, after the transaction's earlier ones,
// creating nothing.
func (c newControl) check(state any, first int, lines [][]byte) (any, error) {
	if c.r.opts.ReadOnly {
		return nil, view.ErrReadOnly
	}
	taken, _ := state.(map[string]bool)
	if taken == nil {
		taken = map[string]bool{}
	}
	for i, l := range lines {
		if _, err := c.plan(l, taken); err != nil {
			return nil, lineError("new", first+i+1, err)
		}
	}
	return taken, nil
}
