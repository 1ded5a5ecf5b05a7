package fs

import (
	"io"
	"log"
	"sync"
)

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newLogger(w io.Writer) *log.Logger { return log.New(&lockedWriter{w: w}, "", 0) }
