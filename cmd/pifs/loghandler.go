package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// termHandler writes log records for a person at a terminal, one line
// each: "pifs: message key=value", with "warning:" or "error:" before the
// message when it is one. Files get slog's key=value lines with the time.
type termHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Leveler
	prefix string // attributes and groups given beforehand, formatted
	group  string
}

func newTermHandler(w io.Writer, level slog.Leveler) *termHandler {
	return &termHandler{mu: new(sync.Mutex), w: w, level: level}
}

func (h *termHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *termHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("pifs: ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(strings.TrimPrefix(r.Message, "pifs: ")) // from a log.Logger bridge
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(formatAttr(h.group, a))
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *termHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	for _, a := range attrs {
		c.prefix += formatAttr(h.group, a)
	}
	return &c
}

func (h *termHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group += name + "."
	return &c
}

func formatAttr(group string, a slog.Attr) string {
	if a.Equal(slog.Attr{}) {
		return ""
	}
	v := a.Value.Resolve().String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	return " " + group + a.Key + "=" + v
}
