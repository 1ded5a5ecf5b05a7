package cache

import (
	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
)

// What stat counts of a transcript.md or of the session's page is kept
// with the session's version, so that a read after the stat renders from
// it: the Markdown without counting its parts again, the page into a
// buffer of the size counted. A read whose size was known without a count
// (a remount's recorded sizes) finds none and renders as before.

func transcriptCountKey(at string) string { return "transcript count\x00" + at }

// sessionPageCountKey is the key of the session page's count.
const sessionPageCountKey = "html count"

// TranscriptCount is the count of path's transcript, path the path to at
// ("": to the leaf), made once for s's version. s.mu is held.
func TranscriptCount(c *Cache, s *Session, at string, path []*sessions.Entry) render.TranscriptCount {
	return Rendered(c, s, transcriptCountKey(at), render.TranscriptCount.Bytes, func() render.TranscriptCount {
		return render.CountTranscript(path)
	})
}

// HeldTranscriptCount is the count TranscriptCount made, if s holds it.
func HeldTranscriptCount(s *Session, at string) (render.TranscriptCount, bool) {
	c, ok := s.renders[transcriptCountKey(at)].(render.TranscriptCount)
	return c, ok
}

// SessionPageCount is the count of s's page (home as
// render.SessionHTMLSize's), made once for s's version. s.mu is held.
func SessionPageCount(c *Cache, s *Session, home string) render.SessionPageCount {
	return Rendered(c, s, sessionPageCountKey, render.SessionPageCount.Bytes, func() render.SessionPageCount {
		return render.CountSessionPage(s.Tree, home)
	})
}

// HeldSessionPageCount is the count SessionPageCount made, if s holds it.
func HeldSessionPageCount(s *Session) (render.SessionPageCount, bool) {
	c, ok := s.renders[sessionPageCountKey].(render.SessionPageCount)
	return c, ok
}
