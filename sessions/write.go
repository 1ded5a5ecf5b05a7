package sessions

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions/schema"
)

// ErrChanged is returned when a file changed between reading and a write
// that depends on what was read.
var ErrChanged = errors.New("session file changed since it was read")

// Append appends whole lines to a session file in one write(2) on a file
// opened with O_APPEND, first adding a newline when the file does not end in
// one, so that the lines never join a half-written line of another writer.
// Each line must be one JSON value without a newline.
//
// A write that fails part way (a full disk, a quota, an I/O error) leaves
// no partial line: the file is cut back to its previous end, unless another
// writer appended after it meanwhile; the *AppendError says which, and
// wraps the OS's error (errors.As finds its syscall.Errno: ENOSPC, EDQUOT).
func Append(path string, lines ...[]byte) error {
	if len(lines) == 0 {
		return nil
	}
	var buf bytes.Buffer
	buf.WriteByte('\n')
	for _, l := range lines {
		if bytes.IndexByte(l, '\n') >= 0 {
			return fmt.Errorf("append: line holds a newline")
		}
		buf.Write(l)
		buf.WriteByte('\n')
	}
	return AppendBatch(path, buf.Bytes())
}

// AppendBatch is Append of lines already joined: batch is a newline, then
// whole lines, each ending in a newline (the caller vouches for them).
// The first newline is written only when the file does not end in one, so
// that the batch goes out in one write(2) from where it is (a mapped file
// included) without a copy.
func AppendBatch(path string, batch []byte) error {
	if len(batch) < 2 || batch[0] != '\n' || batch[len(batch)-1] != '\n' {
		return fmt.Errorf("append: a batch is a newline, then whole lines")
	}
	f, fi, err := openRegular(path, os.O_RDWR|os.O_APPEND)
	if err != nil {
		return err
	}
	defer f.Close()
	old, nl, err := endsInNewline(f, fi.Size())
	if err != nil {
		return err
	}
	if nl {
		batch = batch[1:]
	}
	n, err := f.Write(batch)
	if err == nil && n != len(batch) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return restore(f, path, old, n, len(batch), err)
	}
	return f.Close()
}

// endsInNewline tells whether the file, of the given size, ends in a
// newline (an empty one does), and the size that answer holds for. Another
// writer's line can be seen half written (the size grows page by page, and
// the writer may be preempted in the middle): while the last byte is not a
// newline, look again for a while, so that a line is not preceded by a
// newline it does not need (a blank line, harmless but untidy). Only a
// file whose last line was really left unterminated (a crash) waits the
// whole while, once: the newline written then ends it.
func endsInNewline(f *os.File, size int64) (int64, bool, error) {
	last := make([]byte, 1)
	deadline := time.Now().Add(unterminatedWait)
	for {
		if size == 0 {
			return 0, true, nil
		}
		if _, err := f.ReadAt(last, size-1); err != nil {
			return 0, false, err
		}
		if last[0] == '\n' || time.Now().After(deadline) {
			return size, last[0] == '\n', nil
		}
		time.Sleep(time.Millisecond)
		fi, err := f.Stat()
		if err != nil {
			return 0, false, err
		}
		size = fi.Size()
	}
}

// unterminatedWait is how long an append waits for a last line without
// newline to be finished by its writer before it ends it itself.
const unterminatedWait = 50 * time.Millisecond

// AppendError is an append that failed part way.
type AppendError struct {
	Path    string
	Written int   // bytes of this append that reached the file
	Len     int   // bytes the append had to write
	Old     int64 // the file's size before it
	Size    int64 // the file's size after the failure (and the repair)
	// Restored tells that the file was cut back to Old, so nothing of
	// this append is left.
	Restored bool
	Err      error // the OS's error
}

func (e *AppendError) Error() string {
	msg := fmt.Sprintf("appending %d bytes to %s failed", e.Len, e.Path)
	switch {
	case e.Written == 0:
		return fmt.Sprintf("%s: %v; nothing was written", msg, e.Err)
	case e.Restored:
		return fmt.Sprintf("%s after %d bytes: %v; the file was cut back to its previous %d bytes, so nothing of this write is left", msg, e.Written, e.Err, e.Old)
	}
	return fmt.Sprintf("%s after %d bytes: %v; another writer appended meanwhile (the file has %d bytes, was %d), so pifs left it as it is: %d bytes of this write, without their final newline, are in it after offset %d", msg, e.Written, e.Err, e.Size, e.Old, e.Written, e.Old)
}

func (e *AppendError) Unwrap() error { return e.Err }

// restore cuts a failed append back to the file's previous end when the
// file holds exactly what it had plus the written bytes, that is when no
// one else appended since.
func restore(f *os.File, path string, old int64, written, total int, cause error) error {
	e := &AppendError{Path: path, Written: written, Len: total, Old: old, Size: old + int64(written), Err: cause}
	if written == 0 {
		return e
	}
	fi, err := f.Stat()
	if err != nil {
		e.Err = fmt.Errorf("%w (and the size after it is unknown: %v)", cause, err)
		return e
	}
	e.Size = fi.Size()
	if e.Size != old+int64(written) {
		return e
	}
	if err := f.Truncate(old); err != nil {
		e.Err = fmt.Errorf("%w (and cutting the file back failed: %v)", cause, err)
		return e
	}
	e.Restored, e.Size = true, old
	return e
}

// NewEntryID returns an 8-hex id not in use, as pi's generateId does.
func NewEntryID(inUse func(string) bool) string {
	for i := 0; i < 100; i++ {
		id := uuid.NewString()[:8]
		if !inUse(id) {
			return id
		}
	}
	return uuid.NewString()
}

// NewSessionID returns a UUIDv7, as pi names new sessions.
func NewSessionID() string {
	id, err := uuid.NewV7()
	if err != nil {
		var b [16]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}
	return id.String()
}

// Now returns the current time as pi writes it (toISOString).
func Now() string { return jsjson.FormatISO(float64(time.Now().UnixMilli())) }

// FileName is pi's name for a session file created at ts (an ISO string).
func FileName(ts, id string) string {
	return strings.NewReplacer(":", "-", ".", "-").Replace(ts) + "_" + id + ".jsonl"
}

// HeaderLine builds a version 3 header line as pi writes it.
func HeaderLine(id, ts, cwd string, parentSession string) []byte {
	var b jsjson.Builder
	b.String("type", schema.TypeSession)
	b.Number("version", CurrentVersion)
	b.String("id", id)
	b.String("timestamp", ts)
	b.String("cwd", cwd)
	if parentSession != "" {
		b.String("parentSession", parentSession)
	}
	return b.Bytes()
}

// ValidSessionID checks an id as pi's assertValidSessionId does.
func ValidSessionID(id string) error {
	ok := id != ""
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(id)-1 || (c != '.' && c != '_' && c != '-')) {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("session id %q must be non-empty, contain only letters, digits, '-', '_' and '.', and start and end with a letter or digit", id)
	}
	return nil
}

// Create writes a new session file in dir holding lines (the header first),
// failing if the name is taken. It returns the file's path.
func Create(dir, name string, lines ...[]byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

// MigrateFile rewrites a version 1 or 2 session as version 3, with the
// entries as l shows them (so the ids pifs showed are kept). It replaces the
// file atomically, and only if it is still the file l read.
func MigrateFile(l *Log) error {
	if !l.Migrated {
		return nil
	}
	sig, err := statRegular(l.Path)
	if err != nil {
		return err
	}
	if sig != l.sig || sig.Size != l.size || l.provisional != provNone {
		return ErrChanged
	}
	perm, err := os.Stat(l.Path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Write(rewriteObject(l.Header.Raw, map[string][]byte{"version": []byte("3")}, nil))
	buf.WriteByte('\n')
	for _, e := range l.Entries {
		buf.Write(jsjson.AppendCanonical(nil, e.Raw))
		buf.WriteByte('\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(l.Path), ".pifs-migrate-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	// The rewrite keeps the file's owner, as an append would.
	if st, ok := perm.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
		if err := tmp.Chown(int(st.Uid), int(st.Gid)); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Check again just before the rename: a writer that appended since the
	// read must not lose its lines.
	if sig2, err := statRegular(l.Path); err != nil || sig2 != sig {
		return ErrChanged
	}
	return os.Rename(tmp.Name(), l.Path)
}
