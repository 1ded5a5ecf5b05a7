package tree

import (
	"bytes"
	"testing"
)

// mayCallPlain is mayCall as its doc says it: "toolCall" or `\u`.
func mayCallPlain(content []byte) bool {
	return bytes.Contains(content, []byte("toolCall")) || bytes.Contains(content, []byte(`\u`))
}

func TestMayCall(t *testing.T) {
	for _, s := range []string{"", "toolCall", "xtoolCallx", "Call", "oolCall", "tool Call", "CallCalltoolCal", "toolCaltoolCall",
		`a\u0074oolCall`, `\u`, `\`, "t", `[{"type":"text","text":"Call the tool"},{"type":"toolCall","id":"1"}]`} {
		if got, want := mayCall([]byte(s)), mayCallPlain([]byte(s)); got != want {
			t.Errorf("mayCall(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzMayCall(f *testing.F) {
	for _, s := range []string{"toolCall", "Call", `\u`, "tooltoolCall", "nestedCalls", "nestedCall", "Calls"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := mayCall([]byte(s)), mayCallPlain([]byte(s)); got != want {
			t.Errorf("mayCall(%q) = %v, want %v", s, got, want)
		}
		want := bytes.Contains([]byte(s), []byte("nestedCalls")) || bytes.Contains([]byte(s), []byte(`\u`))
		if got := mayNest([]byte(s)); got != want {
			t.Errorf("mayNest(%q) = %v, want %v", s, got, want)
		}
	})
}
