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
)

// How writes work (SPEC.md, "Writes").
//
// A control (name, leaf, append, fork, new) takes commands, one per line.
// Writes arrive in pieces of at most 128 KiB: each open file keeps the
// start of a line until its newline comes, and takes a last line without
// newline at close (Flush). The complete lines of one write are one batch:
// every line is checked before any takes effect, and a batch that changes a
// session is appended to its file in one write(2). A refused batch changes
// nothing; its reason goes to the caller as an errno, to the session's
// errors file and to the log.

// maxLine bounds the line an open control buffers (a message may carry
// images, so it is generous).
const maxLine = 64 << 20

// control is what a writable file does with the lines written to it.
type control interface {
	// run carries out the complete lines of one write, all or none. It
	// returns what reading the same open file gives afterwards (nil: the
	// file's own content).
	run(lines [][]byte) (reply []byte, err error)
	// refused records why a write was refused.
	refused(err error)
}

// controlHandle is a control opened for writing.
type controlHandle struct {
	f *file

	mu      sync.Mutex
	pending []byte // the start of a line whose newline has not come yet
	// reply is what the commands run through this handle gave back (the
	// paths of new sessions); reads return it from the start, whatever
	// the file offset, so `exec 3<>fork; echo ID >&3; read -r p <&3` works.
	reply    []byte
	replyPos int
}

var (
	_ = (fs.FileWriter)((*controlHandle)(nil))
	_ = (fs.FileFlusher)((*controlHandle)(nil))
	_ = (fs.FileReader)((*controlHandle)(nil))
)

// Write takes the complete lines of data, with what came before them, as
// one batch. The offset means nothing to a control: every write appends.
func (h *controlHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	end := bytes.LastIndexByte(data, '\n')
	rest := data[end+1:]
	if len(rest) > maxLine || (end < 0 && len(h.pending)+len(data) > maxLine) {
		h.pending = nil
		return 0, h.fail(&refusal{ErrTooLong, fmt.Sprintf("%s: a line is longer than %d MiB; write shorter lines", h.f.name(), maxLine>>20)})
	}
	if end < 0 {
		h.pending = append(h.pending, data...)
		return uint32(len(data)), 0
	}
	batch := append(h.pending, data[:end]...)
	// The caller's buffer is reused once Write returns.
	h.pending = append([]byte(nil), rest...)
	if errno := h.exec(bytes.Split(batch, []byte{'\n'})); errno != 0 {
		// The write failed as a whole: nothing of it stays buffered.
		h.pending = nil
		return 0, errno
	}
	return uint32(len(data)), 0
}

// Flush takes a last line that has no newline. It comes at every close of
// a descriptor of this open file (twice after dup): only the first finds
// something to do.
func (h *controlHandle) Flush(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pending) == 0 {
		return 0
	}
	line := h.pending
	h.pending = nil
	return h.exec([][]byte{line})
}

func (h *controlHandle) exec(lines [][]byte) syscall.Errno {
	reply, err := h.f.ctl.run(lines)
	if err != nil {
		return h.fail(err)
	}
	h.reply = append(h.reply, reply...)
	return 0
}

func (h *controlHandle) fail(err error) syscall.Errno {
	h.f.ctl.refused(err)
	return toErrno(err)
}

// Read gives what the commands replied, from the start and ignoring the
// offset; before any reply, the file's current content.
func (h *controlHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reply != nil {
		n := copy(dest, h.reply[h.replyPos:])
		h.replyPos += n
		return fuse.ReadResultData(dest[:n]), 0
	}
	data, _, err := h.f.src.content()
	if err != nil {
		return nil, toErrno(err)
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
	logger.Printf("pifs: %s/%s: write refused: %v", s.project, s.name, err)
}

// change builds entries against the session's current state and appends
// them to its file in one write. A version 1 or 2 file is migrated first,
// only if it is unchanged since it was read: on a change it is read again
// and the batch built again, once. A batch that build refuses changes
// nothing, not even the version.
func (s sessionRef) change(build func(ss *session, b *tree.Builder) error) error {
	if s.r.opts.ReadOnly {
		return ErrReadOnly
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
						return refuse(ErrBusy, "the session file is of version %v and changed while pifs was migrating it to version 3 before this write; nothing was written, try again when the file is quiet", ss.log.Header.Version)
					}
					if err := s.r.st.reread(ss); err != nil {
						return err
					}
					continue
				}
				if err != nil {
					return err
				}
				logger.Printf("pifs: %s: migrated from version %v to %d before a write", ss.path, ss.log.Header.Version, sessions.CurrentVersion)
			}
			if err := sessions.Append(ss.path, b.Lines...); err != nil {
				return err
			}
			// The writer reads its own write at once: the views are
			// refreshed here (the watcher tells the kernel later).
			if err := s.r.st.reread(ss); err != nil {
				logger.Printf("pifs: %s: reading back after a write: %v", ss.path, err)
			}
			return nil
		}
	})
}

// sessionControl is a control of a session folder whose lines each build
// entries of that session (name, leaf, append).
type sessionControl struct {
	s    sessionRef
	ctl  string
	line func(ss *session, b *tree.Builder, line []byte) error
}

func (c sessionControl) run(lines [][]byte) ([]byte, error) {
	return nil, c.s.change(func(ss *session, b *tree.Builder) error {
		for i, l := range lines {
			if err := c.line(ss, b, l); err != nil {
				return lineError(c.ctl, i+1, err)
			}
		}
		return nil
	})
}

func (c sessionControl) refused(err error) { c.s.refused(err) }
