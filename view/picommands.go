package view

import (
	"time"

	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/tree"
)

// The files of pi's session commands: reply.md is what /copy copies (in a
// session folder and in each branches/<id>/), model and thinking the
// controls of /model and /thinking: each reads as the value in force at
// the leaf, as pi would resume with it, and a line written to it appends
// the entry pi's command appends.

// newReplyFile is reply.md: the text of the path's last assistant message.
func newReplyFile(s sessionRef, at string, branch bool) *pathView {
	return &pathView{inSession{s}, at, branch, replyName, func(ss *session, at string) []byte {
		return render.Reply(contextOf(ss, at))
	}, func(ss *session, at string) int64 {
		return render.ReplySize(contextOf(ss, at))
	}}
}

// selectionFile is model or thinking: the model ("provider/id") or the
// thinking level the leaf's path records, an empty line when it records
// none.
type selectionFile struct {
	inSession
	name  string
	value func(tree.Selection) string
}

func newModelFile(s sessionRef) *selectionFile {
	return &selectionFile{inSession{s}, modelName, tree.Selection.Model}
}

func newThinkingFile(s sessionRef) *selectionFile {
	return &selectionFile{inSession{s}, thinkingName, tree.Selection.Thinking}
}

func (f *selectionFile) text(ss *session) []byte {
	return []byte(f.value(ss.Tree.LeafSelection()) + "\n")
}

func (f *selectionFile) content() ([]byte, time.Time, error) { return f.s.render(f.name, f.text) }

func (f *selectionFile) size() (int64, time.Time, error) {
	return f.s.renderSize(f.name, func(ss *session) int64 { return int64(len(f.text(ss))) })
}

func (f *selectionFile) knownSize() (int64, time.Time, bool) {
	return f.s.knownSize(f.name, func(ss *session) int64 { return int64(len(f.text(ss))) })
}

func (f *selectionFile) control() control {
	set := (*tree.Builder).SetModel
	if f.name == thinkingName {
		set = (*tree.Builder).SetThinkingLevel
	}
	return sessionControl[[]byte]{f.s, f.name, asIs, func(ss *session, b *tree.Builder, line []byte) error {
		_, err := set(b, string(line))
		return err
	}}
}

var (
	_ costly   = (*selectionFile)(nil)
	_ writable = (*selectionFile)(nil)
)
