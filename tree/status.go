package tree

import (
	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
)

// What a session's agent is doing, as the last message entries of its file
// tell (pi appends every message of a turn as it ends).
const (
	// StatusWorking: the model has something to answer: the user's
	// prompt, a tool's result, or its own message that called tools
	// (stopReason "toolUse") whose results are still to come.
	StatusWorking = "working"
	// StatusWaiting: the turn is over (stopReason "stop" or "length"),
	// the user ran a shell command (a bashExecution message), or nothing
	// was asked yet: pi waits for the user.
	StatusWaiting = "waiting"
	// StatusError: the model's answer ended on an error (stopReason
	// "error").
	StatusError = "error"
	// StatusAborted: the user stopped the turn (stopReason "aborted",
	// Escape in pi).
	StatusAborted = "aborted"
)

// EntryStatus is the status a session has when e is its last message, and
// whether e says one: only message entries do (a label, a model change, a
// name or pifs's leaf record leave the status as the message before).
func EntryStatus(e *sessions.Entry) (string, bool) {
	if e.Type != "message" {
		return "", false
	}
	switch e.Role {
	case "user", "toolResult":
		return StatusWorking, true
	case "bashExecution":
		return StatusWaiting, true
	case "assistant":
		switch StopReason(e) {
		case "toolUse":
			return StatusWorking, true
		case "error":
			return StatusError, true
		case "aborted":
			return StatusAborted, true
		}
		return StatusWaiting, true
	}
	return "", false
}

// StopReason is an assistant message's stopReason ("" when it has none).
func StopReason(e *sessions.Entry) string {
	s, _ := jsjson.Str(e.Msg, "stopReason")
	return s
}

// Status is what the session's agent is doing (see EntryStatus) and the
// entry that tells it (nil for a session with no message yet: waiting).
func (t *Tree) Status() (string, *sessions.Entry) {
	for i := len(t.entries) - 1; i >= 0; i-- {
		if s, ok := EntryStatus(t.entries[i]); ok {
			return s, t.entries[i]
		}
	}
	return StatusWaiting, nil
}
