package tree

import (
	"fmt"

	"github.com/pifs/pifs/internal/jsjson"
)

// What only the tests of package tree_test call: the product builds
// appended lines, messages and context_edits with PrepareAppend and
// AppendPrepared, and reads labels and roots through other methods.

// AppendLine adds one entry at the leaf: a message for a JSON object with
// "role", an entry for one with "type", else a user message with the text.
// nowMs (Date.now()) stamps a message that has no timestamp. It is
// PrepareAppend and AppendPrepared in one.
func (b *Builder) AppendLine(line []byte, nowMs float64) error {
	p, err := PrepareAppend(line, nowMs)
	if err != nil {
		return err
	}
	return b.AppendPrepared(p)
}

// ContextEdit appends a context_edit (pi's appendContextEdit), checked as
// pi checks it: replacement is null or an object with string or array
// content; the target is on the active branch and contributes editable
// model content (a custom_message, or a user, assistant or toolResult
// message). String content for assistant and toolResult becomes one text
// block.
func (b *Builder) ContextEdit(target string, replacement []byte) (string, error) {
	r, err := prepareReplacement(replacement)
	if err != nil {
		return "", err
	}
	return b.contextEdit(target, r)
}

// Roots returns the roots in pi's getTree order.
func (t *Tree) Roots() []*Node { return t.roots }

// Labels returns the current labels by entry id.
func (t *Tree) Labels() map[string]Label { return t.labels }

// Message appends a message (pi's appendMessage). msg must be a JSON object.
func (b *Builder) Message(msg []byte) (string, error) {
	c, err := jsjson.Canonical(msg)
	if err != nil || jsjson.KindOf(c) != jsjson.Object {
		return "", fmt.Errorf("%w: a message must be a JSON object", ErrInvalid)
	}
	return b.message(c), nil
}
