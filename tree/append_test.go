package tree_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// schemaSession is a small session: a user message u1, an assistant reply
// a1 and a model change m1, the leaf.
const schemaSession = `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-000000000000","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":2}}
{"type":"model_change","id":"m1","parentId":"a1","timestamp":"2025-01-01T00:00:03.000Z","provider":"p","modelId":"m"}
`

// schemaBuilder is a builder on schemaSession whose entries are stamped
// "T".
func schemaBuilder(t testing.TB) *tree.Builder {
	t.Helper()
	l, err := sessions.Parse([]byte(schemaSession))
	if err != nil {
		t.Fatal(err)
	}
	b := tree.New(l).NewBuilder()
	b.Now = func() string { return "T" }
	return b
}

// built is the builder's one line with its new id written ID.
func built(t *testing.T, b *tree.Builder) string {
	t.Helper()
	if len(b.Lines) != 1 {
		t.Fatalf("built %d lines, want 1", len(b.Lines))
	}
	return strings.Replace(string(b.Lines[0]), `"id":"`+b.IDs[0]+`"`, `"id":"ID"`, 1)
}

// refusal checks err against the kind and sentence a refusal must have.
func refusal(t *testing.T, err, kind error, msg string) {
	t.Helper()
	var r *tree.Refusal
	switch {
	case err == nil:
		t.Errorf("accepted; want %v: %s", kind, msg)
	case !errors.As(err, &r):
		t.Errorf("error %T %q is no refusal", err, err)
	case !errors.Is(err, kind):
		t.Errorf("kind of %q is not %v", err, kind)
	case err.Error() != msg:
		t.Errorf("sentence\n got %s\nwant %s", err, msg)
	}
}

const entryTypeList = "label, custom, custom_message, model_change, thinking_level_change, compaction, branch_summary, context_edit, session_info, usage, message"

func TestAppendLine(t *testing.T) {
	good := []struct{ line, want string }{
		{`hello`, `{"type":"message","id":"ID","parentId":"m1","timestamp":"T","message":{"role":"user","content":[{"type":"text","text":"hello"}],"timestamp":5}}`},
		{`  {x`, ``}, // checked below: malformed
		{`{"role":"user","content":"x"}`, `{"type":"message","id":"ID","parentId":"m1","timestamp":"T","message":{"role":"user","content":"x","timestamp":5}}`},
		{` {"role":"assistant", "content":[],"timestamp":3} `, `{"type":"message","id":"ID","parentId":"m1","timestamp":"T","message":{"role":"assistant","content":[],"timestamp":3}}`},
		{`{"type":"message","parentId":"u1","message":{"role":"user","content":"y"}}`, `{"type":"message","id":"ID","parentId":"u1","timestamp":"T","message":{"role":"user","content":"y","timestamp":5}}`},
		{`{"type":"message","parentId":null,"message":{"role":"system","content":"s"}}`, `{"type":"message","id":"ID","parentId":null,"timestamp":"T","message":{"role":"system","content":"s","timestamp":5}}`},
		{`{"type":"custom","customType":"k","data":{"a":1}}`, `{"type":"custom","customType":"k","data":{"a":1},"id":"ID","parentId":"m1","timestamp":"T"}`},
		{`{"type":"custom_message","customType":"c","content":"t"}`, `{"type":"custom_message","customType":"c","content":"t","display":true,"id":"ID","parentId":"m1","timestamp":"T"}`},
		{`{"type":"model_change","provider":"p2","modelId":"m2"}`, `{"type":"model_change","id":"ID","parentId":"m1","timestamp":"T","provider":"p2","modelId":"m2"}`},
		{`{"type":"thinking_level_change","thinkingLevel":"high"}`, `{"type":"thinking_level_change","id":"ID","parentId":"m1","timestamp":"T","thinkingLevel":"high"}`},
		{`{"type":"label","targetId":"u1","label":"start"}`, `{"type":"label","id":"ID","parentId":"m1","timestamp":"T","targetId":"u1","label":"start"}`},
		{`{"type":"label","targetId":"u1","label":null}`, `{"type":"label","id":"ID","parentId":"m1","timestamp":"T","targetId":"u1"}`},
		{`{"type":"session_info","name":" N\nM "}`, `{"type":"session_info","id":"ID","parentId":"m1","timestamp":"T","name":"N M"}`},
		{`{"type":"branch_summary","parentId":"u1","summary":"s"}`, `{"type":"branch_summary","id":"ID","parentId":"u1","timestamp":"T","fromId":"m1","summary":"s","details":{"readFiles":[],"modifiedFiles":[]}}`},
		{`{"type":"branch_summary","summary":"s","fromId":"x","fromHook":true}`, `{"type":"branch_summary","id":"ID","parentId":"m1","timestamp":"T","fromId":"x","summary":"s","fromHook":true}`},
		{`{"type":"usage","kind":"k","provider":"p","model":"m","usage":{"input":1}}`, `{"type":"usage","id":"ID","parentId":"m1","timestamp":"T","kind":"k","provider":"p","model":"m","usage":{"input":1}}`},
		{`{"type":"context_edit","targetId":"u1","replacement":null}`, `{"type":"context_edit","id":"ID","parentId":"m1","timestamp":"T","targetId":"u1","replacement":null}`},
	}
	for _, c := range good {
		if c.want == "" {
			continue
		}
		b := schemaBuilder(t)
		if err := b.AppendLine([]byte(c.line), 5); err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if got := built(t, b); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.line, got, c.want)
		}
	}

	malformed := `malformed JSON: a line starting with "{" must be one JSON object on one line; to send such text, write {"role":"user","content":"TEXT"}`
	bad := []struct {
		line string
		kind error
		msg  string
	}{
		{``, tree.ErrInvalid, `empty line; write the text of a user message, or a JSON object with "role" (a message) or "type" (an entry)`},
		{" \t ", tree.ErrInvalid, `empty line; write the text of a user message, or a JSON object with "role" (a message) or "type" (an entry)`},
		{`  {x`, tree.ErrInvalid, malformed},
		{`{"a":1}`, tree.ErrInvalid, `a JSON object needs "role" (a message, e.g. {"role":"user","content":"hi"}) or "type" (an entry: one of ` + entryTypeList + `)`},
		{`{"role":"robot"}`, tree.ErrInvalid, `unknown role "robot"; use one of: user, assistant, toolResult, custom, bashExecution, branchSummary, compactionSummary, system`},
		{`{"role":1}`, tree.ErrInvalid, `unknown role 1; use one of: user, assistant, toolResult, custom, bashExecution, branchSummary, compactionSummary, system`},
		{`{"type":"nope"}`, tree.ErrInvalid, `unknown type "nope"; use one of: ` + entryTypeList},
		{`{"type":"custom","id":"x","customType":"k"}`, tree.ErrInvalid, `custom: "id" is assigned by pifs, never given; leave it out`},
		{`{"type":"custom","customType":"k","extra":1}`, tree.ErrInvalid, `custom: unknown field "extra"; the fields are: type, parentId, customType, data`},
		{`{"type":"custom","data":1}`, tree.ErrInvalid, `custom: "customType" must be a string; e.g. {"type":"custom","customType":"NAME","data":{}}`},
		{`{"type":"label","targetId":"zz","label":"x"}`, tree.ErrNotFound, `label: targetId "zz": no such entry; give the id of an entry of this session (ls entries/)`},
		{`{"type":"label","targetId":"u1","label":2}`, tree.ErrInvalid, `label: "label" must be a string; e.g. {"type":"label","targetId":"ID","label":"TEXT"} (label null clears it)`},
		{`{"type":"message","parentId":"zz","message":{"role":"user","content":"y"}}`, tree.ErrNotFound, `message: parentId "zz": no such entry; give the id of an entry of this session (ls entries/)`},
		{`{"type":"message","message":"x"}`, tree.ErrInvalid, `message: "message" must be a JSON object with a role; e.g. {"type":"message","message":{"role":"user","content":"TEXT"}}`},
		{`{"type":"model_change","provider":1,"modelId":"m"}`, tree.ErrInvalid, `model_change: "provider" must be a string; e.g. {"type":"model_change","provider":"PROVIDER","modelId":"MODEL"}`},
		{`{"type":"custom_message","customType":"c","content":1}`, tree.ErrInvalid, `custom_message: "content" must be a string or an array of content blocks; e.g. {"type":"custom_message","customType":"NAME","content":"TEXT","display":true}`},
		{`{"type":"custom_message","customType":"c","content":"t","display":1}`, tree.ErrInvalid, `custom_message: "display" must be true or false; e.g. {"type":"custom_message","customType":"NAME","content":"TEXT","display":true}`},
		{`{"type":"compaction","summary":"s"}`, tree.ErrInvalid, `compaction: "tokensBefore" must be a number; e.g. {"type":"compaction","summary":"TEXT","tokensBefore":1234}`},
		{`{"type":"compaction","summary":"s","tokensBefore":1,"firstKeptEntryId":"zz"}`, tree.ErrNotFound, `compaction: firstKeptEntryId "zz": no such entry; give the id of an entry of this session (ls entries/)`},
		{`{"type":"compaction","summary":"s","tokensBefore":1,"fromHook":"yes"}`, tree.ErrInvalid, `compaction: "fromHook" must be true or false; e.g. {"type":"compaction","summary":"TEXT","tokensBefore":1234}`},
		{`{"type":"branch_summary","summary":"s","fromId":1}`, tree.ErrInvalid, `branch_summary: "fromId" must be a string; e.g. {"type":"branch_summary","parentId":"ID","summary":"TEXT"}`},
		{`{"type":"context_edit","targetId":"u1"}`, tree.ErrInvalid, `context_edit: "replacement" must be null (drop the entry from the context) or {"content":...} (replace its content); e.g. {"type":"context_edit","targetId":"ID","replacement":{"content":"TEXT"}} (replacement null drops the entry from the context)`},
		{`{"type":"context_edit","targetId":"m1","replacement":null}`, tree.ErrInvalid, `context_edit: entry m1 does not contribute editable model content; the target must be a user, assistant or toolResult message or a custom_message on the active branch (see current/), and the replacement null or {"content":...}`},
		{`{"type":"context_edit","targetId":"u1","replacement":{"content":1}}`, tree.ErrInvalid, `context_edit: the replacement must be null or an object with string or array content; the target must be a user, assistant or toolResult message or a custom_message on the active branch (see current/), and the replacement null or {"content":...}`},
		{`{"type":"session_info","name":["x"]}`, tree.ErrInvalid, `session_info: "name" must be a string; e.g. {"type":"session_info","name":"NAME"}`},
		{`{"type":"usage","kind":"k","provider":"p","model":"m","usage":1}`, tree.ErrInvalid, `usage: "usage" must be an object such as {"input":1,"output":1}; e.g. {"type":"usage","kind":"KIND","provider":"PROVIDER","model":"MODEL","usage":{"input":1,"output":1}}`},
		{`{"type":"usage","provider":"p","model":"m","usage":{}}`, tree.ErrInvalid, `usage: "kind" must be a string; e.g. {"type":"usage","kind":"KIND","provider":"PROVIDER","model":"MODEL","usage":{"input":1,"output":1}}`},
	}
	for _, c := range bad {
		b := schemaBuilder(t)
		err := b.AppendLine([]byte(c.line), 5)
		refusal(t, err, c.kind, c.msg)
		if len(b.Lines) != 0 {
			t.Errorf("%s: refused, yet built %q", c.line, b.Lines)
		}
	}
}

// TestAppendLineBatch: a line may name an entry built earlier in the batch.
func TestAppendLineBatch(t *testing.T) {
	b := schemaBuilder(t)
	if err := b.AppendLine([]byte("first"), 5); err != nil {
		t.Fatal(err)
	}
	if err := b.AppendLine([]byte(`{"type":"label","targetId":"`+b.IDs[0]+`","label":"x"}`), 5); err != nil {
		t.Fatal(err)
	}
	if len(b.Lines) != 2 || b.Leaf() != b.IDs[1] {
		t.Fatalf("lines %q, leaf %q", b.Lines, b.Leaf())
	}
}

// TestPrepareAppend: what needs no session is refused by PrepareAppend,
// before any session is looked at; what names an entry passes it and is
// refused by AppendPrepared. A prepared line builds the same entry in
// every batch it is added to.
func TestPrepareAppend(t *testing.T) {
	malformed := `malformed JSON: a line starting with "{" must be one JSON object on one line; to send such text, write {"role":"user","content":"TEXT"}`
	for _, bad := range []string{"{", ` {"a":}`, `{"a":1} x`} {
		_, err := tree.PrepareAppend([]byte(bad), 5)
		refusal(t, err, tree.ErrInvalid, malformed)
	}
	for _, line := range []string{`{"role":"robot"}`, `{"type":"custom","data":1}`, `{"type":"label","targetId":1}`,
		`{"type":"context_edit","targetId":"u1","replacement":{"content":1}}`} {
		if _, err := tree.PrepareAppend([]byte(line), 5); !errors.Is(err, tree.ErrInvalid) {
			t.Errorf("%s: prepared with %v; want it refused without the session", line, err)
		}
	}
	for _, line := range []string{`{"type":"label","targetId":"zz","label":"x"}`, `{"type":"message","parentId":"zz","message":{"role":"user","content":"y"}}`,
		`{"type":"compaction","summary":"s","tokensBefore":1,"firstKeptEntryId":"zz"}`, `{"type":"context_edit","targetId":"zz","replacement":null}`} {
		p, err := tree.PrepareAppend([]byte(line), 5)
		if err != nil {
			t.Errorf("%s: %v; only the session can tell", line, err)
			continue
		}
		if err := schemaBuilder(t).AppendPrepared(p); !errors.Is(err, tree.ErrNotFound) {
			t.Errorf("%s: added with %v; want ErrNotFound", line, err)
		}
	}

	p, err := tree.PrepareAppend([]byte(`{"role":"assistant","content":[{"type":"text","text":"x"}]}`), 7)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < 2; i++ {
		b := schemaBuilder(t)
		if err := b.AppendPrepared(p); err != nil {
			t.Fatal(err)
		}
		got = append(got, built(t, b))
	}
	want := `{"type":"message","id":"ID","parentId":"m1","timestamp":"T","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"timestamp":7}}`
	if got[0] != want || got[1] != want {
		t.Errorf("one prepared line built\n%s\n%s\nwant %s twice", got[0], got[1], want)
	}
}

func TestLeafLine(t *testing.T) {
	refs := map[string]string{"u1": "u1", "start": "u1"}
	resolve := func(ref string) (string, bool) { id, ok := refs[ref]; return id, ok }
	for line, want := range map[string]string{"u1": "u1", "start": "u1", "": "", "  ": ""} {
		b := schemaBuilder(t)
		if err := b.LeafLine([]byte(line), resolve); err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		leaf := `"data":{"leaf":null}`
		if want != "" {
			leaf = `"data":{"leaf":"` + want + `"}`
		}
		if len(b.Lines) != 1 || !strings.Contains(string(b.Lines[0]), `"customType":"pifs.leaf",`+leaf) {
			t.Errorf("%q: built %q, want a leaf record with %s", line, b.Lines, leaf)
		}
	}
	b := schemaBuilder(t)
	refusal(t, b.LeafLine([]byte("nope"), resolve), tree.ErrNotFound,
		`no entry or label "nope"; write an entry id (ls entries/ or branches/), a label (ls labels/), or an empty line to move before the first entry`)
}

func TestNameLine(t *testing.T) {
	b := schemaBuilder(t)
	if err := b.NameLine([]byte("my name")); err != nil {
		t.Fatal(err)
	}
	if got, want := built(t, b), `{"type":"session_info","id":"ID","parentId":"m1","timestamp":"T","name":"my name"}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestWithName(t *testing.T) {
	header := []byte(`{"type":"session","version":3,"id":"0190a000-0000-7000-8000-000000000000","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}`)
	lines, err := tree.WithName([][]byte{header}, "N")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.Contains(string(lines[1]), `"type":"session_info"`) ||
		!strings.Contains(string(lines[1]), `"parentId":null`) || !strings.HasSuffix(string(lines[1]), `"name":"N"}`) {
		t.Errorf("got %q", lines)
	}
}

func TestDateTime(t *testing.T) {
	for ts, want := range map[string]time.Time{
		`"2025-01-02T03:04:05.678Z"`: time.Date(2025, 1, 2, 3, 4, 5, 678e6, time.UTC),
		`1700000000000`:              time.UnixMilli(1700000000000),
		`"not a date"`:               {},
		`null`:                       time.UnixMilli(0),
		``:                           {},
	} {
		if got := tree.DateTime([]byte(ts)); !got.Equal(want) || got.IsZero() != want.IsZero() {
			t.Errorf("%s: got %v, want %v", ts, got, want)
		}
	}
}

func BenchmarkAppendLine(b *testing.B) {
	line := []byte(`{"type":"custom_message","customType":"c","content":[{"type":"text","text":"some text"}],"display":false,"details":{"a":[1,2,3]}}`)
	tb := schemaBuilder(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tb.Lines, tb.IDs = tb.Lines[:0], tb.IDs[:0]
		if err := tb.AppendLine(line, 5); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzAppendLine: a line either builds one entry, a JSON object on one
// line that the session reads back as its new leaf, or is refused with a
// kind and builds nothing.
func FuzzAppendLine(f *testing.F) {
	for _, s := range []string{"hi", `{"role":"user","content":"x"}`, `{"type":"label","targetId":"u1","label":"x"}`,
		`{"type":"compaction","summary":"s","tokensBefore":1,"firstKeptEntryId":"a1"}`, `{"type":"branch_summary","parentId":"u1","summary":"s","fromId":"q"}`,
		`{"type":"context_edit","targetId":"a1","replacement":{"content":"t"}}`, `{"type":"message","parentId":null,"message":{"role":"system","content":"s"}}`,
		`{"type":"custom_message","customType":"c","content":[],"display":false,"details":null}`, `{"type":"usage","kind":"k","provider":"p","model":"m","usage":{},"note":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		b := schemaBuilder(t)
		err := b.AppendLine(line, 5)
		if err != nil {
			var r *tree.Refusal
			if !errors.As(err, &r) || !(errors.Is(err, tree.ErrInvalid) || errors.Is(err, tree.ErrNotFound)) {
				t.Fatalf("%q: error %T %v is no refusal of a known kind", line, err, err)
			}
			if len(b.Lines) != 0 {
				t.Fatalf("%q: refused, yet built %q", line, b.Lines)
			}
			return
		}
		if len(b.Lines) != 1 {
			t.Fatalf("%q: built %d lines", line, len(b.Lines))
		}
		l, err := sessions.Parse([]byte(schemaSession + string(b.Lines[0]) + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := tree.New(l).LeafID(); got != b.IDs[0] {
			t.Fatalf("%q: built %s, read back with leaf %q", line, b.Lines[0], got)
		}
	})
}

// TestAppendKeepsKeyTexts: members are written as JSON.stringify writes
// them, also when pifs fills in a message's timestamp: keys with lone
// surrogates stay distinct escapes (they were once one U+FFFD key).
func TestAppendKeepsKeyTexts(t *testing.T) {
	p, err := tree.PrepareAppend([]byte(`{"role":"user","content":"x","\ud800":1,"\ud801":2,"\u0041":3,"1":4}`), 7)
	if err != nil {
		t.Fatal(err)
	}
	b := schemaBuilder(t)
	if err := b.AppendPrepared(p); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"message","id":"ID","parentId":"m1","timestamp":"T","message":{"1":4,"role":"user","content":"x","\ud800":1,"\ud801":2,"A":3,"timestamp":7}}`
	if got := built(t, b); got != want {
		t.Errorf("built\n%s\nwant\n%s", got, want)
	}
}
