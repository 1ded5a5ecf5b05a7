package render

import (
	"context"
	"encoding/json"
	"html"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/render/parts"
	"github.com/pifs/pifs/sessions"
)

// textBrowser returns w3m, or skips (fails under PIFS_REQUIRE_BROWSER=1)
// when it is missing.
func textBrowser(t *testing.T) string {
	if p, err := exec.LookPath("w3m"); err == nil {
		return p
	}
	if os.Getenv("PIFS_REQUIRE_BROWSER") == "1" {
		t.Fatal("w3m not found and PIFS_REQUIRE_BROWSER=1")
	}
	t.Skip("w3m not installed (apt-get install w3m)")
	return ""
}

// w3mDump is the page as w3m shows it, as text: no CSS, no script.
func w3mDump(t *testing.T, bin string, page []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "transcript.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-dump", "-T", "text/html", "-O", "UTF-8", "-cols", "100", file).Output()
	if err != nil {
		t.Fatalf("w3m: %v", err)
	}
	return string(out)
}

var (
	wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)
	// What Markdown source shows nothing of: a link's or image's URL and
	// a code fence's info string.
	mdURL   = regexp.MustCompile(`\]\([^)\s]*\)`)
	mdFence = regexp.MustCompile("(?m)^```\\S*")
)

// shownWords are the first words of a text as a page shows it, words
// being runs of letters and digits (one longer than 40 is left out: a
// browser may break it).
func shownWords(s string, markdown bool) []string {
	if markdown {
		// Markdown shows an entity as its character.
		s = html.UnescapeString(mdFence.ReplaceAllString(mdURL.ReplaceAllString(s, "]"), ""))
	}
	var out []string
	for _, w := range wordRE.FindAllString(s, -1) {
		if len(w) <= 40 {
			out = append(out, w)
		}
		if len(out) == 30 {
			break
		}
	}
	return out
}

// pathWords are the words each entry of path must show, in order: its id
// (the link to itself), then the first words of its texts, thinking, tool
// calls (the tool and its arguments' strings), results and their diffs,
// commands, outputs and summaries, and a system message's sections.
func pathWords(path []*sessions.Entry) [][]string {
	var all [][]string
	str := func(v []byte) string {
		if jsjson.KindOf(v) == jsjson.String {
			s, _ := jsjson.Unquote(v)
			return s
		}
		return ""
	}
	for _, e := range path {
		w := parts.Of(e)
		words := []string{e.ID}
		for w.Next() {
			p := &w.Part
			switch p.Kind {
			case parts.Text, parts.Summary:
				words = append(words, shownWords(str(p.Value), true)...)
			case parts.Thinking, parts.Error, parts.Command, parts.Output:
				words = append(words, shownWords(str(p.Value), false)...)
			case parts.ToolCall:
				// The arguments show as JSON, their keys sorted.
				words = append(words, str(p.Name))
				var args map[string]any
				_ = json.Unmarshal(p.Args, &args)
				for _, k := range slices.Sorted(maps.Keys(args)) {
					if s, ok := args[k].(string); ok {
						words = append(words, shownWords(s, false)...)
					}
				}
			}
		}
		// An edit's diff follows its result's output, a system message's
		// sections its text.
		if d := jsjson.Get(w.Head.Details, "diff"); d != nil {
			words = append(words, shownWords(str(d), false)...)
		}
		jsjson.Members(w.Head.Sections, func(k, v []byte) bool {
			words = append(words, shownWords(str(v), false)...)
			return true
		})
		all = append(all, words)
	}
	return all
}

// TestHTMLInTextBrowser: the session's page read in w3m (no CSS, no
// script) shows every entry of the path in order, and in each its
// message texts, tool calls and results, and the parts the page folds
// (thinking, long outputs, hidden messages, the system prompt), each
// word in its order.
func TestHTMLInTextBrowser(t *testing.T) {
	bin := textBrowser(t)
	demo, _ := filepath.Glob("../testdata/demo/*/2025-05-12T10-00-01-000Z_*.jsonl")
	if len(demo) != 1 {
		t.Fatal("demo session missing")
	}
	for name, file := range map[string]string{"rich": richSession(t), "demo": demo[0]} {
		t.Run(name, func(t *testing.T) {
			tr := openTree(t, file)
			dump := w3mDump(t, bin, SessionHTML(tr))
			shown := wordRE.FindAllString(dump, -1)
			at, checked := 0, 0
			for i, words := range pathWords(tr.LeafPath()) {
				for _, w := range words {
					k := at
					for k < len(shown) && shown[k] != w {
						k++
					}
					if k == len(shown) {
						t.Fatalf("entry %d (%s): %q not shown after word %d of the dump (%q…)", i, words[0], w, at, strings.Join(shown[at:min(at+12, len(shown))], " "))
					}
					at = k + 1
					checked++
				}
			}
			if checked < 100 {
				t.Fatalf("only %d words checked", checked)
			}
			// The folded parts' summaries are there as text, and the tree.
			for _, want := range []string{"thinking", "system prompt · sections", "rows, as pi's /tree lists them",
				"default no-tools user-only labeled-only all", "tool calls", "↓ JSONL"} {
				if !strings.Contains(dump, want) {
					t.Errorf("the dump lacks %q", want)
				}
			}
			if name == "rich" {
				for _, want := range []string{"hidden in pi's terminal", "output (long, folded)", "tools added", "+5      println(\"c\")"} {
					if !strings.Contains(dump, want) {
						t.Errorf("the dump lacks %q", want)
					}
				}
			}
			t.Logf("%d words of %d entries found in order in %d words", checked, len(tr.LeafPath()), len(shown))
		})
	}
}
