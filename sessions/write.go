package sessions

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pifs/pifs/internal/jsjson"
)

// ErrChanged is returned when a file changed between reading and a write
// that depends on what was read.
var ErrChanged = errors.New("session file changed since it was read")

// Append appends whole lines to a session file in one write(2) on a file
// opened with O_APPEND, first adding a newline when the file does not end in
// one, so that the lines never join a half-written line of another writer.
// Each line must be one JSON value without a newline.
func Append(path string, lines ...[]byte) error {
	if len(lines) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, l := range lines {
		if bytes.IndexByte(l, '\n') >= 0 {
			return fmt.Errorf("append: line holds a newline")
		}
		buf.Write(l)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			buf = *bytes.NewBuffer(append([]byte{'\n'}, buf.Bytes()...))
		}
	}
	n, err := f.Write(buf.Bytes())
	if err == nil && n != buf.Len() {
		err = fmt.Errorf("append: short write (%d of %d bytes)", n, buf.Len())
	}
	if err != nil {
		return err
	}
	return f.Close()
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
	b.String("type", "session")
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
	fi, err := os.Stat(l.Path)
	if err != nil {
		return err
	}
	if fi.Size() != l.size || l.provisional != provNone {
		return ErrChanged
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
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Check again just before the rename: a writer that appended since the
	// read must not lose its lines.
	if fi2, err := os.Stat(l.Path); err != nil || fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		return ErrChanged
	}
	return os.Rename(tmp.Name(), l.Path)
}
