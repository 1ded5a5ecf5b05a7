package render

import (
	"bytes"
	"testing"
)

// FuzzStringText: appendStringText, the whole text at once, is
// appendStringStart's with no bound, for any bytes between the quotes
// (escapes valid or not, surrogates paired or lone, invalid UTF-8, a
// backslash at the end).
func FuzzStringText(f *testing.F) {
	for _, s := range []string{
		``, `plain text`, `a\nb\t\"c\\d\/e`, `\u00e9\u2028\ud83d\ude00`, `\ud83d`, `\ude00x`, `\ud83d\u0041`,
		`\u12`, `\uZZZZ`, `\q`, `x\`, `\`, "caf\xc3\xa9 \xe2\x82 \xff\\n", "\xed\xa0\x80", "\xe2\x82\\u0041",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		raw := append(append([]byte{'"'}, body...), '"')
		want, _ := appendStringStart([]byte("p"), raw, 1<<62)
		if got := appendStringText([]byte("p"), raw); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", body, got, want)
		}
	})
}
