package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pifs/pifs/fs"
)

// searchStore makes a store of two projects whose sessions hold a planted
// word in various places (a user message, an abandoned branch, a tool
// result with escapes around it, an identifier, an assistant text) or not
// at all, and returns it with the sessions' file names by project.
func searchStore(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	const word = "quokkafrost"
	header := func(n int, cwd string) string {
		return fmt.Sprintf(`{"type":"session","version":3,"id":"%08d-2222-3333-4444-555555555555","timestamp":"2024-01-0%dT00:00:00.000Z","cwd":"%s"}`, n, n, cwd)
	}
	user := func(id, parent, text string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"2024-01-01T00:00:0%d.000Z","message":{"role":"user","content":%q,"timestamp":1704067201000}}`, id, p, len(id), text)
	}
	sessions := map[string][]string{
		"--p1--/2024-01-01T00-00-00-000Z_1": {header(1, "/p1"), user("a1", "", "hello "+word+" there"), user("a2", "a1", "plain")},
		"--p1--/2024-01-02T00-00-00-000Z_2": {header(2, "/p1"), user("a1", "", "nothing to see")},
		// On an abandoned branch: a1 → a2 (found) and a1 → a3 (the leaf).
		"--p1--/2024-01-03T00-00-00-000Z_3": {header(3, "/p1"), user("a1", "", "start"), user("a2", "a1", "on a branch "+word), user("a3", "a1", "the other way")},
		"--p2--/2024-01-04T00-00-00-000Z_4": {header(4, "/p2"),
			`{"type":"message","id":"a1","parentId":null,"timestamp":"2024-01-04T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"the ` + word + `"},{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"cmd/main.go"}}],"provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0}},"timestamp":1704326401000}}`,
			`{"type":"message","id":"a2","parentId":"a1","timestamp":"2024-01-04T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"line\n\"` + word + `\"\tend"}],"isError":false,"timestamp":1704326402000}}`},
		"--p2--/2024-01-05T00-00-00-000Z_5": {header(5, "/p2"), user("a1", "", "class X"+word+"Manager {}")},
		"--p2--/2024-01-06T00-00-00-000Z_6": {header(6, "/p2"), user("a1", "", "unrelated")},
	}
	for name, lines := range sessions {
		p := filepath.Join(store, name+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oldStore(t, store)
	return store
}

// searchWait polls cond until it holds; past a deadline (far longer than it
// takes) it fails with what it last saw. Nothing is timed.
func searchWait(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ok bool
		if ok, got = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: never so; last saw %q", what, got)
}

// grepSessions are the session folders (project/name) whose file grep -rl
// finds word in.
func grepSessions(t *testing.T, store, word string) []string {
	t.Helper()
	out, _ := exec.Command("grep", "-rl", "--include=*.jsonl", word, store).Output()
	var got []string
	for _, p := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(store, strings.TrimSuffix(p, ".jsonl"))
		got = append(got, rel)
	}
	sort.Strings(got)
	return got
}

// linked are the sessions a query folder links to, as project/name from
// their targets (which must be session folders of the mount).
func linked(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ls %s: %v", dir, err)
	}
	var got []string
	for _, e := range ents {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		abs := filepath.Clean(filepath.Join(dir, target))
		if fi, err := os.Stat(filepath.Join(abs, "session.jsonl")); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s -> %s: not a session folder (%v)", e.Name(), target, err)
		}
		got = append(got, filepath.Base(filepath.Dir(abs))+"/"+filepath.Base(abs))
	}
	sort.Strings(got)
	return got
}

// TestSearchFolder: search/<query>/ through a mount: it links every session
// grep finds the planted word in and no other, at the root and per
// project; hits leads to the entries that hold it, one line each; an
// append through the mount is found by the query asked again, a trashed
// session leaves, a restored one comes back; a query that cannot be read
// holds error; ls then cat runs the query once.
func TestSearchFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	store := searchStore(t)
	m, mnt := mountFS(t, fs.Options{SessionsDir: store, SearchDir: t.TempDir()})
	status := filepath.Join(mnt, "search", "status")
	searchWait(t, "search/status says the index is complete", func() (bool, string) {
		b, _ := os.ReadFile(status)
		return strings.HasPrefix(string(b), "index complete"), string(b)
	})
	if got := run(t, mnt, "ls", "search"); got != "README\nerrors\nstatus\n" {
		t.Errorf("ls search: %q", got)
	}
	// Looked up, not listed: a glob never takes a query for a session.
	if got := run(t, mnt, "sh", "-c", "ls -d ./*/info.json ./*/*/info.json ./search/README"); strings.Count(got, "search/") != 1 || strings.Count(got, "_1/info.json") != 1 {
		t.Errorf("globs through search/: %q", got)
	}
	if got := run(t, mnt, "cat", "search/README"); !strings.Contains(got, "role:user") || !strings.Contains(got, "hits.json") {
		t.Errorf("search/README lacks the syntax or the files:\n%s", got)
	}

	const word = "quokkafrost"
	want := grepSessions(t, store, word)
	if len(want) != 4 {
		t.Fatalf("the fixture: grep finds %v", want)
	}
	q := filepath.Join(mnt, "search", word)
	if got := linked(t, q); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("search/%s links %v; grep -rl finds %v", word, got, want)
	}
	for _, p := range []string{"--p1--", "--p2--"} {
		var in []string
		for _, s := range want {
			if strings.HasPrefix(s, p+"/") {
				in = append(in, s)
			}
		}
		if got := linked(t, filepath.Join(mnt, p, "search", word)); strings.Join(got, " ") != strings.Join(in, " ") {
			t.Errorf("%s/search/%s links %v; want %v", p, word, got, in)
		}
	}

	// hits: one line per entry that holds the word (each entry is a line
	// of its file), its path an entry file of the mount that holds it.
	grepLines, _ := exec.Command("sh", "-c", "cat "+store+"/*/*.jsonl | grep -c "+word).Output()
	hits := lines(run(t, q, "cat", "hits"))
	if fmt.Sprint(len(hits)) != strings.TrimSpace(string(grepLines)) {
		t.Errorf("hits has %d lines; grep counts %s entries:\n%s", len(hits), grepLines, strings.Join(hits, "\n"))
	}
	for _, h := range hits {
		f := strings.Split(h, "\t")
		if len(f) != 4 {
			t.Errorf("hits line of %d fields: %q", len(f), h)
			continue
		}
		entry, err := os.ReadFile(filepath.Join(mnt, f[0]))
		if err != nil || !strings.Contains(string(entry), word) {
			t.Errorf("hit %s: %v\n%s", f[0], err, entry)
		}
		if _, err := time.Parse(time.RFC3339, f[2]); err != nil || !strings.Contains(f[3], word) {
			t.Errorf("hit %q: time %v, excerpt without the word", h, err)
		}
	}
	js := lines(run(t, q, "cat", "hits.json"))
	if len(js) != len(hits) {
		t.Errorf("hits.json has %d lines, hits %d", len(js), len(hits))
	}
	for _, l := range js {
		var o struct{ Project, Session, Entry, Role, Time, Excerpt string }
		if err := json.Unmarshal([]byte(l), &o); err != nil || o.Project == "" || o.Entry == "" || !strings.Contains(o.Excerpt, word) {
			t.Errorf("hits.json line %q: %v", l, err)
		}
	}

	// ls then cat: one run of the query. Asked again of the same version
	// of the index, none.
	statements := func() float64 {
		var s map[string]map[string]float64
		json.Unmarshal([]byte(run(t, mnt, "cat", ".pifs/stats")), &s)
		return s["search"]["statements"]
	}
	before := statements()
	run(t, mnt, "ls", "-l", "search/look-once/")
	ran := statements() - before
	run(t, mnt, "cat", "search/look-once/hits", "search/look-once/hits.json")
	run(t, mnt, "ls", "-l", "search/look-once/")
	if again := statements() - before - ran; ran == 0 || again != 0 {
		t.Errorf("ls ran %v statements, then cat and ls again %v (want 0)", ran, again)
	}

	// A query holding / is spelled as names spell ids.
	if got := linked(t, filepath.Join(mnt, "search", "cmd%2Fmain.go")); strings.Join(got, " ") != "--p2--/2024-01-04T00-00-00-000Z_4" {
		t.Errorf("search/cmd%%2Fmain.go links %v", got)
	}
	// A query that cannot be read is refused (ENOENT), and search/errors
	// says why, once.
	bad := filepath.Join(mnt, "search", `"unclosed`)
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("stat of a bad query: %v, want ENOENT", err)
	}
	if _, err := os.Stat(filepath.Join(bad, "hits")); !os.IsNotExist(err) {
		t.Errorf("hits of a bad query: %v", err)
	}
	if _, err := os.ReadDir(bad); !os.IsNotExist(err) {
		t.Errorf("ls of a bad query: %v, want ENOENT", err)
	}
	// Told once, however often the kernel looked it up meanwhile.
	if got := run(t, mnt, "cat", "search/errors"); !strings.Contains(got, `"\"unclosed": `) || !strings.Contains(got, "quote") || strings.Count(got, "\n") != 1 {
		t.Errorf("search/errors after a bad query: %q", got)
	}

	// An append through the mount is found by a new query, and by the
	// query already asked.
	s2 := "--p2--/2024-01-06T00-00-00-000Z_6"
	if err := os.WriteFile(filepath.Join(mnt, s2, "append"), []byte("now "+word+" and walrusglimmer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	searchWait(t, "the appended word is found", func() (bool, string) {
		got := linked(t, filepath.Join(mnt, "search", "walrusglimmer"))
		return strings.Join(got, " ") == s2, strings.Join(got, " ")
	})
	searchWait(t, "the query asked before finds the append", func() (bool, string) {
		got := linked(t, q)
		return len(got) == 5, strings.Join(got, " ")
	})

	// A trashed session leaves; restored, it comes back.
	s4 := "2024-01-04T00-00-00-000Z_4"
	run(t, mnt, "mv", "./--p2--/"+s4, "trash/")
	searchWait(t, "a trashed session leaves search/", func() (bool, string) {
		got := linked(t, q)
		h := run(t, q, "cat", "hits")
		return len(got) == 4 && !strings.Contains(h, s4), strings.Join(got, " ")
	})
	run(t, mnt, "mv", "trash/"+s4, "./--p2--/")
	searchWait(t, "a restored session comes back to search/", func() (bool, string) {
		got := linked(t, q)
		h := run(t, q, "cat", "hits")
		return len(got) == 5 && strings.Contains(h, s4), strings.Join(got, " ")
	})
	_ = m
}

// TestSearchOff: a mount without an index has no search/.
func TestSearchOff(t *testing.T) {
	store := searchStore(t)
	_, mnt := mountFS(t, fs.Options{SessionsDir: store})
	if _, err := os.Stat(filepath.Join(mnt, "search")); !os.IsNotExist(err) {
		t.Errorf("search/ of a mount without an index: %v", err)
	}
}
