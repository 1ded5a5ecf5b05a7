// Package schema names the parts of pi's session format, as pi 1.6 writes
// and reads them: the entry types, the message roles and the content block
// types, and the Usage totals pi's /session sums from the entries. Every
// package that tells entries, messages or blocks apart by these names
// takes them from here, so that each is spelled once; the tests' pi
// oracle reads pi's totals into the same Usage.
//
// It is a leaf, importing nothing of pifs, so that everything can use it,
// the session generator included (which the sessions package's own tests
// import). The facts about a parsed entry that more than one package needs
// (its kind, the usage it adds) are methods of sessions.Entry.
package schema

// Entry types: the "type" of a line of a session file.
const (
	// TypeSession is the header, the file's first line; pi keeps a later
	// line of this type in the file but never as an entry.
	TypeSession = "session"
	// TypeMessage holds a message under "message", whose role tells
	// whose it is.
	TypeMessage = "message"
	// TypeCompaction replaces the context before it with a summary.
	TypeCompaction = "compaction"
	// TypeBranchSummary summarizes a branch left for another.
	TypeBranchSummary = "branch_summary"
	// TypeCustom holds an extension's data, outside the context.
	TypeCustom = "custom"
	// TypeCustomMessage is an extension's message, in the context.
	TypeCustomMessage = "custom_message"
	// TypeLabel labels an entry (or clears its label).
	TypeLabel = "label"
	// TypeSessionInfo names the session (or clears its name).
	TypeSessionInfo = "session_info"
	// TypeModelChange sets the model for what follows.
	TypeModelChange = "model_change"
	// TypeThinkingLevelChange sets the thinking level for what follows.
	TypeThinkingLevelChange = "thinking_level_change"
	// TypeContextEdit replaces an earlier entry's content in the context
	// (or drops the entry from it).
	TypeContextEdit = "context_edit"
	// TypeUsage records tokens and cost spent outside a message.
	TypeUsage = "usage"
)

// Message roles: the "role" of a message entry's message, and of the
// messages of a context.
const (
	RoleUser          = "user"
	RoleAssistant     = "assistant"
	RoleToolResult    = "toolResult"
	RoleBashExecution = "bashExecution"
	RoleCustom        = "custom"
	RoleSystem        = "system"
	// RoleBranchSummary and RoleCompactionSummary are the roles of the
	// messages a context holds for a branch_summary and a compaction
	// entry.
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
	// RoleHookMessage is what version 1 and 2 files call RoleCustom.
	RoleHookMessage = "hookMessage"
)

// Content block types: the "type" of a block of a message's content array.
const (
	BlockText     = "text"
	BlockThinking = "thinking"
	BlockToolCall = "toolCall"
	BlockImage    = "image"
)

// Intern returns the constant of this package that name spells, when it
// spells an entry type or a message role, so that a parser holds one copy
// of each instead of a string per entry.
func Intern(name []byte) (string, bool) {
	switch string(name) {
	case TypeMessage:
		return TypeMessage, true
	case TypeSession:
		return TypeSession, true
	case TypeCompaction:
		return TypeCompaction, true
	case TypeBranchSummary:
		return TypeBranchSummary, true
	case TypeCustom: // RoleCustom too
		return TypeCustom, true
	case TypeCustomMessage:
		return TypeCustomMessage, true
	case TypeLabel:
		return TypeLabel, true
	case TypeSessionInfo:
		return TypeSessionInfo, true
	case TypeModelChange:
		return TypeModelChange, true
	case TypeThinkingLevelChange:
		return TypeThinkingLevelChange, true
	case TypeContextEdit:
		return TypeContextEdit, true
	case TypeUsage:
		return TypeUsage, true
	case RoleUser:
		return RoleUser, true
	case RoleAssistant:
		return RoleAssistant, true
	case RoleToolResult:
		return RoleToolResult, true
	case RoleBashExecution:
		return RoleBashExecution, true
	case RoleSystem:
		return RoleSystem, true
	case RoleBranchSummary:
		return RoleBranchSummary, true
	case RoleCompactionSummary:
		return RoleCompactionSummary, true
	case RoleHookMessage:
		return RoleHookMessage, true
	}
	return "", false
}
