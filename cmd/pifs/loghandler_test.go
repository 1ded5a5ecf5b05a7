package main

import (
	"log/slog"
	"strings"
	"testing"
)

func TestTermHandler(t *testing.T) {
	var b strings.Builder
	l := slog.New(newTermHandler(&b, slog.LevelInfo))
	l.Debug("hidden")
	l.Info("mounted /s on /m")
	l.With("session", "a b").Warn("write refused", "err", "bad line")
	l.WithGroup("g").Error("boom", "n", 3)
	slog.NewLogLogger(l.Handler(), slog.LevelWarn).Printf("pifs: from nodes")
	want := "pifs: mounted /s on /m\npifs: warning: write refused session=\"a b\" err=\"bad line\"\npifs: error: boom g.n=3\npifs: warning: from nodes\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
