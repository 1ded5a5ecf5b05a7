package render

// A plain transcript renderer, reading each field with jsjson.Get: the
// reference that Transcript must match byte for byte.

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/sessions"
)

func refTranscript(path []*sessions.Entry) []byte {
	var b strings.Builder
	for _, e := range path {
		refWriteEntry(&b, e)
	}
	return []byte(b.String())
}

// refImage writes the n-th image block of e: a link to its file, or its
// type when it has none.
func refImage(b *strings.Builder, e *sessions.Entry, n int, block []byte) {
	mime := jsjson.Get(block, "mimeType")
	data := jsjson.Get(block, "data")
	if _, err := DecodeImage(data); err != nil || e.ID == "" {
		why := ""
		if e.ID != "" {
			why = ": not valid base64, no file"
		}
		fmt.Fprintf(b, "*[image %s%s]*\n\n", refStr(mime), why)
		return
	}
	alt := strings.Map(func(r rune) rune {
		if strings.ContainsRune("[]\\\n\r`*_<>", r) {
			return ' '
		}
		return r
	}, refStr(mime))
	u := (&url.URL{Path: "images/" + ImageName(e.ID, n, mime)}).EscapedPath()
	u = strings.NewReplacer("(", "%28", ")", "%29", "!", "%21", "$", "%24", "&", "%26", "'", "%27", "*", "%2A", "+", "%2B", ",", "%2C", ";", "%3B", "=", "%3D", ":", "%3A", "@", "%40").Replace(u)
	fmt.Fprintf(b, "![image %s](%s)\n\n", alt, u)
}

// refImages writes the image blocks of a content array.
func refImages(b *strings.Builder, e *sessions.Entry, c []byte) {
	if jsjson.KindOf(c) != jsjson.Array {
		return
	}
	n := 0
	jsjson.Elements(c, func(block []byte) bool {
		if typ, _ := jsjson.Str(block, "type"); typ == "image" {
			n++
			refImage(b, e, n, block)
		}
		return true
	})
}

func refHeading(b *strings.Builder, who string, e *sessions.Entry) {
	ts := ""
	if ms := jsjson.DateValue(e.Timestamp); !math.IsNaN(ms) {
		ts = " · " + jsjson.FormatISO(ms)
	}
	fmt.Fprintf(b, "## %s · %s%s\n\n", who, e.ID, ts)
}

func refStr(v []byte) string {
	if jsjson.KindOf(v) == jsjson.String {
		s, _ := jsjson.Unquote(v)
		return s
	}
	if v == nil || jsjson.KindOf(v) == jsjson.Null {
		return ""
	}
	return string(v)
}

func refPara(b *strings.Builder, text string) {
	if text == "" {
		return
	}
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func refFence(b *strings.Builder, lang, text string) {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	b.WriteString(f + lang + "\n" + text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(f + "\n\n")
}

// content writes a message's content: a string, or blocks of text,
// thinking, tool calls and images (without withImages, images are left out).
func refContent(b *strings.Builder, e *sessions.Entry, c []byte, withImages bool) {
	if jsjson.KindOf(c) != jsjson.Array {
		refPara(b, refStr(c))
		return
	}
	n := 0
	jsjson.Elements(c, func(block []byte) bool {
		typ, _ := jsjson.Str(block, "type")
		switch typ {
		case "text":
			refPara(b, refStr(jsjson.Get(block, "text")))
		case "thinking":
			b.WriteString("*Thinking:*\n\n")
			refPara(b, refStr(jsjson.Get(block, "thinking")))
		case "toolCall":
			name := refStr(jsjson.Get(block, "name"))
			id := refStr(jsjson.Get(block, "id"))
			fmt.Fprintf(b, "**Tool call** `%s` (%s)\n\n", name, id)
			args := jsjson.Get(block, "arguments")
			if args == nil {
				args = []byte("{}")
			}
			refFence(b, "json", string(jsonIndent(args)))
		case "image":
			n++
			if withImages {
				refImage(b, e, n, block)
			}
		default:
			refFence(b, "json", string(jsonIndent(block)))
		}
		return true
	})
}

func refWriteEntry(b *strings.Builder, e *sessions.Entry) {
	switch e.Type {
	case "message":
		m := e.Message()
		switch e.Role {
		case "user", "assistant", "custom", "system":
			refHeading(b, e.Role, e)
			refContent(b, e, jsjson.Get(m, "content"), true)
			if msg := refStr(jsjson.Get(m, "errorMessage")); msg != "" {
				fmt.Fprintf(b, "*Error:* %s\n\n", msg)
			}
		case "toolResult":
			who := "tool result"
			if name := refStr(jsjson.Get(m, "toolName")); name != "" {
				who += " `" + name + "`"
			}
			if jsjson.Truthy(jsjson.Get(m, "isError")) {
				who += " (error)"
			}
			refHeading(b, who, e)
			var out strings.Builder
			refContent(&out, e, jsjson.Get(m, "content"), false)
			refFence(b, "", strings.TrimRight(out.String(), "\n"))
			refImages(b, e, jsjson.Get(m, "content"))
			if diff := refStr(jsjson.Get(jsjson.Get(m, "details"), "diff")); diff != "" && jsjson.KindOf(jsjson.Get(m, "details")) == jsjson.Object {
				refFence(b, "diff", diff)
			}
		case "bashExecution":
			refHeading(b, "bash", e)
			refFence(b, "sh", "$ "+refStr(jsjson.Get(m, "command")))
			output := refStr(jsjson.Get(m, "output"))
			if code := jsjson.Get(m, "exitCode"); code != nil && jsjson.KindOf(code) != jsjson.Null {
				output = strings.TrimRight(output, "\n") + "\n[exit " + string(code) + "]"
			}
			refFence(b, "", output)
		default:
			refHeading(b, e.Kind(), e)
			refContent(b, e, jsjson.Get(m, "content"), true)
		}
	case "custom_message":
		refHeading(b, "custom message "+refStr(e.Get("customType")), e)
		refContent(b, e, e.Get("content"), true)
	case "branch_summary":
		refHeading(b, "branch summary", e)
		refPara(b, refStr(e.Get("summary")))
	case "compaction":
		refHeading(b, "compaction", e)
		refPara(b, refStr(e.Get("summary")))
	}
}
