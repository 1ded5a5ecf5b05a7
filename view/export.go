package view

import (
	"time"

	"github.com/pifs/pifs/sessions"
)

// branches/<id>/session.jsonl is pi's /export x.jsonl of the session with
// entry id as the leaf (serializeSessionBranch): a new header with the
// session's id, then the root→entry path re-chained. pi makes the header's
// timestamp fresh at every export; pifs gives it the entry's time, so that
// the file reads the same every time (see tree.ExportTimestamp). Its size
// is counted without making it, so `ls -l branches/<id>/` renders nothing.

// exportFile is branches/<id>/session.jsonl.
type exportFile struct {
	inSession
	at string
}

func newExportFile(s sessionRef, at string) *exportFile { return &exportFile{inSession{s}, at} }

// export's arguments: the header's timestamp and the cwd pi gives the
// opened session.
func exportArgs(ss *session, at string) (ts, cwd string) {
	cwd = ""
	if ss.Tree.Header != nil {
		cwd = sessions.ResolvePath(ss.Tree.Header.Cwd)
	}
	return ss.Tree.ExportTimestamp(at), cwd
}

func (f *exportFile) key() string { return "export\x00" + f.at }

func (f *exportFile) content() ([]byte, time.Time, error) {
	var failed error
	data, mt, err := f.s.renderEntry(f.at, f.key(), func(ss *session) []byte {
		ts, cwd := exportArgs(ss, f.at)
		b, err := ss.Tree.Export(f.at, ts, cwd)
		failed = err
		return b
	}, nil)
	if err == nil {
		err = failed
	}
	return data, mt, err
}

func (f *exportFile) size() (int64, time.Time, error) {
	return f.s.renderEntrySize(f.at, f.key(), func(ss *session) int64 {
		ts, cwd := exportArgs(ss, f.at)
		n, _ := ss.Tree.ExportSize(f.at, ts, cwd) // the entry is there
		return n
	}, nil)
}

// knownSize: a branch's views are given by name alone in a listing.
func (f *exportFile) knownSize() (int64, time.Time, bool) { return 0, time.Time{}, false }

var (
	_ costly = (*exportFile)(nil)
	_ sizer  = (*exportFile)(nil)
)
