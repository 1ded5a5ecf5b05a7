// Package parts reads a session entry as a transcript shows it: a head
// (what the entry is, who speaks, and the facts its heading shows) and a
// sequence of typed parts (text, thinking, tool calls, images, other
// content blocks, an error, a bash command and its output, a summary).
// Every transcript (transcript.md, transcript.html) is a writer of these
// parts; what an entry holds is read here, once, and each writer only
// chooses its bytes.
//
// A walk reads the entry's JSON once, with the values the session parser
// located (a message's content and usage) jumped over rather than read
// again, and allocates nothing: parts are slices of the entry's bytes,
// raw JSON values that the writer decodes as it shows them.
//
//	w := parts.Of(e)
//	heading(&w.Head)
//	for w.Next() {
//		switch p := &w.Part; p.Kind {
//		case parts.Text:
//			…
//		}
//	}
package parts

import (
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/sessions/schema"
)

// Shape is how an entry shows: which head facts it has and which parts
// follow, in order.
type Shape uint8

const (
	// Message is a message of the user, the assistant, an extension
	// (custom) or the system: its content, then its error message.
	// An assistant's head has Model and Usage.
	Message Shape = iota + 1
	// ToolResult is a tool's result: its content. The head has ToolName
	// and IsError.
	ToolResult
	// Bash is a bash execution the user ran: Command, then Output. The
	// head has ExitCode.
	Bash
	// SummaryMessage is a message of role branchSummary or
	// compactionSummary: Summary, then its content.
	SummaryMessage
	// OtherMessage is a message of any other role, or of none: its
	// content.
	OtherMessage
	// CustomMessage is a custom_message entry: its content. The head has
	// CustomType.
	CustomMessage
	// BranchSummary is a branch_summary entry: Summary. The head's Ref is
	// the entry the branch left from.
	BranchSummary
	// Compaction is a compaction entry: Summary. The head's Ref is the
	// first entry it kept.
	Compaction
	// Meta is any other entry (a model or thinking level change, a label,
	// a name, extension data, usage, a context edit, an unknown type):
	// no parts, only the facts of its head.
	Meta
)

// Head is what an entry's heading shows. The byte slices are raw JSON
// values of the entry's members, nil when absent; which are set depends
// on the shape.
type Head struct {
	Entry *sessions.Entry
	Shape Shape
	// Who names the entry in a heading: the role of a Message or a
	// SummaryMessage, the kind of an OtherMessage (sessions.Entry.Kind),
	// "tool result", "bash", "custom message", "branch summary",
	// "compaction", and for Meta its type with spaces for underscores.
	Who string

	Model    []byte // an assistant's model (message.model); a usage entry's model
	Usage    []byte // an assistant's usage (message.usage); a usage entry's usage
	ToolName []byte // a tool result's toolName
	// IsError tells that a tool result's isError is truthy: the tool
	// failed.
	IsError bool
	// ExitCode is a bash execution's exitCode, nil when it is null (the
	// command did not finish) or absent.
	ExitCode []byte
	// CustomType is a custom message's or a custom entry's customType.
	CustomType []byte
	// Ref is the id of the entry a branch summary left from or a
	// compaction kept from (fromId or firstKeptEntryId, whichever comes
	// last), or that a label or a context edit is about (targetId).
	Ref []byte

	Provider      []byte // a model change's or usage entry's provider
	ModelID       []byte // a model change's modelId
	ThinkingLevel []byte // a thinking level change's thinkingLevel
	Label         []byte // a label's label (null clears it)
	Name          []byte // a session_info's name (null or "" clears it)

	// ToolCallID is the id of the tool call a tool result answers.
	ToolCallID []byte
	// Details is a tool result's details (an edit's holds its diff).
	Details []byte
	// Hidden tells that a custom message has display false: pi keeps it
	// out of its terminal.
	Hidden bool
	// Sections, ToolsAdded and ToolsRemoved are a system message's named
	// prompt sections (an object of strings, null removing one) and the
	// tools it adds (objects with name, description and parameters) and
	// removes (objects with a name).
	Sections, ToolsAdded, ToolsRemoved []byte
}

// Kind is the kind of a part.
type Kind uint8

const (
	// Text is text: Value is a JSON string, or any other value, which
	// shows as its JSON; null or absent shows nothing. A message's
	// content that is not an array is one Text part.
	Text Kind = iota + 1
	// Thinking is a thinking block: Value is its thinking.
	Thinking
	// ToolCall is a tool call block: Name, ID, Args (the arguments, {}
	// when absent) and Block.
	ToolCall
	// Image is an image block: Mime (mimeType), Data (base64) and Block.
	Image
	// Block is any other element of a content array (another block
	// type, or a value that is not an object): Block.
	Block
	// Error is a message's errorMessage: Value.
	Error
	// Command is a bash execution's command: Value.
	Command
	// Output is a bash execution's output: Value.
	Output
	// Summary is a summary's text: Value.
	Summary
)

// Part is one part of an entry. Its slices are raw JSON values, nil when
// absent.
type Part struct {
	Kind  Kind
	Value []byte
	// Name, ID, Args, Mime and Data are members of a content block.
	Name, ID, Args, Mime, Data []byte
	// Block is the whole content block, for content parts.
	Block []byte
}

// steps of a shape: what follows the head, in order.
const (
	stepContent = 'c'
	stepError   = 'e'
	stepCommand = 'm'
	stepOutput  = 'o'
	stepSummary = 's'
)

func stepsOf(s Shape) string {
	switch s {
	case Message:
		return "ce"
	case ToolResult, OtherMessage, CustomMessage:
		return "c"
	case Bash:
		return "mo"
	case SummaryMessage:
		return "sc"
	case BranchSummary, Compaction:
		return "s"
	}
	return ""
}

// Walk reads one entry: Head is set by Of, Part by each Next.
type Walk struct {
	Head Head
	Part Part

	steps   string // what is left to read
	content []byte
	blocks  jsjson.ElementIter
	inArray bool // Next is reading the blocks of the content
	// The members the parts show.
	errorMessage, command, output, summary []byte
}

// Of reads the head of e and makes ready to read its parts.
func Of(e *sessions.Entry) (w Walk) {
	h := &w.Head
	h.Entry = e
	switch e.Type {
	case schema.TypeMessage:
		w.readMessage()
	case schema.TypeCustomMessage:
		h.Shape, h.Who = CustomMessage, "custom message"
		for it := jsjson.IterMembers(e.Raw); it.Next(); {
			switch string(it.Name()) {
			case "customType":
				h.CustomType = it.Value()
			case "content":
				w.content = it.Value()
			case "display":
				h.Hidden = string(it.Value()) == "false"
			}
		}
	case schema.TypeBranchSummary, schema.TypeCompaction:
		h.Shape, h.Who = BranchSummary, "branch summary"
		if e.Type == schema.TypeCompaction {
			h.Shape, h.Who = Compaction, "compaction"
		}
		for it := jsjson.IterMembers(e.Raw); it.Next(); {
			switch string(it.Name()) {
			case "summary":
				w.summary = it.Value()
			case "fromId", "firstKeptEntryId":
				h.Ref = it.Value()
			}
		}
	default:
		h.Shape, h.Who = Meta, strings.ReplaceAll(e.Kind(), "_", " ")
		w.readMeta()
	}
	w.steps = stepsOf(h.Shape)
	return w
}

// readMessage reads a message entry's head: one walk over the message's
// members, its content and usage, located by the parser, jumped over.
func (w *Walk) readMessage() {
	h, e := &w.Head, w.Head.Entry
	w.content = e.MsgContent
	var toolName, isError, exitCode []byte
	it := jsjson.IterMembers(e.Msg)
	it.Known(e.MsgContent, e.MsgUsage)
	for it.Next() {
		switch string(it.Name()) {
		case "errorMessage":
			w.errorMessage = it.Value()
		case "toolName":
			toolName = it.Value()
		case "isError":
			isError = it.Value()
		case "command":
			w.command = it.Value()
		case "output":
			w.output = it.Value()
		case "exitCode":
			exitCode = it.Value()
		case "summary":
			w.summary = it.Value()
		case "details":
			h.Details = it.Value()
		case "toolCallId":
			h.ToolCallID = it.Value()
		case "display":
			h.Hidden = string(it.Value()) == "false"
		case "sections":
			h.Sections = it.Value()
		case "toolsAdded":
			h.ToolsAdded = it.Value()
		case "toolsRemoved":
			h.ToolsRemoved = it.Value()
		}
	}
	switch e.Role {
	case schema.RoleUser, schema.RoleAssistant, schema.RoleCustom, schema.RoleSystem:
		h.Shape, h.Who = Message, e.Role
		if e.Role == schema.RoleAssistant {
			h.Model, h.Usage = e.MsgModel, e.MsgUsage
		}
	case schema.RoleToolResult:
		h.Shape, h.Who = ToolResult, "tool result"
		h.ToolName, h.IsError = toolName, jsjson.Truthy(isError)
	case schema.RoleBashExecution:
		h.Shape, h.Who = Bash, "bash"
		if jsjson.KindOf(exitCode) != jsjson.Null {
			h.ExitCode = exitCode
		}
	case schema.RoleBranchSummary, schema.RoleCompactionSummary:
		h.Shape, h.Who = SummaryMessage, e.Role
	default:
		h.Shape, h.Who = OtherMessage, e.Kind()
	}
}

// readMeta reads the facts of an entry that shows as one line.
func (w *Walk) readMeta() {
	h := &w.Head
	for it := jsjson.IterMembers(h.Entry.Raw); it.Next(); {
		switch v := it.Value(); string(it.Name()) {
		case "provider":
			h.Provider = v
		case "modelId":
			h.ModelID = v
		case "model":
			h.Model = v
		case "usage":
			h.Usage = v
		case "thinkingLevel":
			h.ThinkingLevel = v
		case "label":
			h.Label = v
		case "targetId":
			h.Ref = v
		case "name":
			h.Name = v
		case "customType":
			h.CustomType = v
		}
	}
}

// Next reads the next part into Part; it reports false after the last.
func (w *Walk) Next() bool {
	for {
		if w.inArray {
			if w.nextBlock() {
				return true
			}
			w.inArray = false
		}
		if w.steps == "" {
			return false
		}
		step := w.steps[0]
		w.steps = w.steps[1:]
		switch step {
		case stepContent:
			if jsjson.KindOf(w.content) == jsjson.Array {
				w.blocks, w.inArray = jsjson.IterElements(w.content), true
				continue
			}
			w.Part = Part{Kind: Text, Value: w.content}
		case stepError:
			w.Part = Part{Kind: Error, Value: w.errorMessage}
		case stepCommand:
			w.Part = Part{Kind: Command, Value: w.command}
		case stepOutput:
			w.Part = Part{Kind: Output, Value: w.output}
		case stepSummary:
			w.Part = Part{Kind: Summary, Value: w.summary}
		}
		return true
	}
}

// nextBlock reads the next block of the content array. A block that is
// an object is read once: the walk over its members finds its end.
func (w *Walk) nextBlock() bool {
	p := &w.Part
	*p = Part{}
	it, ok := w.blocks.Object()
	if !ok {
		p.Kind = Block
		p.Block, ok = w.blocks.Next()
		return ok
	}
	var typ, text, thinking []byte
	for it.Next() {
		switch v := it.Value(); string(it.Name()) {
		case "type":
			typ = v
		case "text":
			text = v
		case "thinking":
			thinking = v
		case "name":
			p.Name = v
		case "id":
			p.ID = v
		case "arguments":
			p.Args = v
		case "mimeType":
			p.Mime = v
		case "data":
			p.Data = v
		}
	}
	p.Block = w.blocks.EndObject(&it)
	switch {
	case jsjson.StringIs(typ, schema.BlockText):
		p.Kind, p.Value = Text, text
	case jsjson.StringIs(typ, schema.BlockThinking):
		p.Kind, p.Value = Thinking, thinking
	case jsjson.StringIs(typ, schema.BlockToolCall):
		p.Kind = ToolCall
		if p.Args == nil {
			p.Args = []byte("{}") // as pi shows a call without arguments
		}
	case jsjson.StringIs(typ, schema.BlockImage):
		p.Kind = Image
	default:
		p.Kind = Block
	}
	return true
}
